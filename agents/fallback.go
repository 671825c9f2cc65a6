package agents

import (
	"context"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/turn"
)

// Fallback is the Cursor CLI as the fallback of a conversation
// (docs/contract.md, "Cross-runtime fallback"), prepared before the
// primary starts: its probe and its model's resolution are paid once, so
// that a handoff starts Cursor at once.
type Fallback struct {
	// Resolution and Configured are the Cursor CLI the probe chose
	// (probe.Report.Binary).
	Resolution discovery.Resolution
	Configured bool
	// Model is the catalog id of Cursor's turns ("" its configured model).
	// They keep the primary's mode and allow no extra tools: tool names
	// are each agent's own.
	Model string
	// Unusable is why Cursor cannot be the fallback (its probe or its
	// model failed): the primary then runs alone, with one
	// fallback_dropped warning, never a failure.
	Unusable error
	// Options supervise Cursor's turns (start from cursor.TurnDefaults).
	Options turn.Options
	// Transcript is the conversation before this one (`run --transcript`),
	// told to Cursor on the first swapped prompt before the primary's own.
	Transcript []fallback.Message
	// AfterRetries hands off at the primary's Nth retry notice
	// (fallback.Config.AfterRetries; 0: only once it fails).
	AfterRetries int
	// Purpose names the session in the engaged event ("run").
	Purpose string
	// OnEvent receives the session's own events (fallback.Config.OnEvent):
	// give it the function the turns' events go to.
	OnEvent func(event.Event)
}

// CheckFallbackPrimary refuses primary as the agent Cursor falls back
// from when it is Cursor itself: the handoff would meet the failure it
// flees and pay for it twice. The error is failure.Input.
func CheckFallbackPrimary(primary Agent) error {
	if primary.Name == cursor.Name {
		return failure.New(failure.Input, "the Cursor CLI cannot be its own fallback: a Cursor to Cursor handoff pays twice for the same failure (choose another --agent, or drop --fallback)")
	}
	return nil
}

// WithFallback returns the conversation to prompt: primary, with Cursor
// as its fallback as fb prepared it. It fails as CheckFallbackPrimary
// does, or as fallback.New does (failure.Input: a negative
// AfterRetries); an fb that cannot be armed makes the session the
// primary alone.
func WithFallback(ctx context.Context, primary *Session, fb Fallback) (*fallback.Session, error) {
	if err := CheckFallbackPrimary(primary.agent); err != nil {
		return nil, err
	}
	cursorAgent := Cursor()
	t := Turn{Mode: primary.base.Mode, Model: fb.Model}
	unusable := fb.Unusable
	if unusable == nil {
		_, unusable = cursorAgent.Args(t)
	}
	s, _, err := fallback.New(ctx, fallback.Config{
		Purpose:      fb.Purpose,
		Primary:      primary,
		PrimaryID:    fallback.Identity{Agent: primary.agent.Name, Provider: primary.agent.Provider, Model: primary.base.Model},
		FallbackID:   fallback.Identity{Agent: cursor.Name, Provider: cursor.Provider, Model: fb.Model},
		Transcript:   fb.Transcript,
		OnEvent:      fb.OnEvent,
		AfterRetries: fb.AfterRetries,
		Probe:        func(context.Context) error { return unusable },
		Start: func(context.Context) (fallback.Conversation, error) {
			return NewSession(cursorAgent, fb.Resolution, fb.Configured, t, fb.Options), nil
		},
	})
	return s, err
}
