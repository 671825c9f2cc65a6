package cursor

import (
	"context"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

// Defaults of a Cursor turn (docs/contract.md, "Defaults").
const (
	defaultFirstLineTimeout = 30 * time.Second
	defaultIdleTimeout      = 120 * time.Second
)

// TurnDefaults returns the supervision of a Cursor turn: the first stdout
// line within 30 s, no silence over 120 s, no total bound, a 5 s grace
// between the polite stop and the tree kill, and 15 s after the result for
// the agent to exit by itself. Change what you need and pass it to Run.
func TurnDefaults() turn.Options {
	return turn.Defaults(defaultFirstLineTimeout, defaultIdleTimeout)
}

// WarnFellBack is the warning of a turn that started the cursor PATH
// candidate because cursor-agent vanished between its probe and its start.
const WarnFellBack = "fell_back"

// Run runs one turn t on bin (found and checked by package probe) and
// returns when the whole process tree is gone: the argv of Args(t), the
// prompt on stdin only, every stdout line decoded by a decoder whose
// events go to opts.OnEvent, the tree stopped at once on a protocol or
// policy failure, and opts' deadlines and graces (start from
// TurnDefaults). The error is nil exactly when the turn is done; it
// carries the failure kind (docs/contract.md, "Failure kinds and exit
// codes").
//
// When nothing is configured and bin is the cursor-agent found on PATH
// whose file has vanished since it was found, the turn starts once more
// with the cursor PATH candidate; the outcome then carries a fell_back
// warning (docs/contract.md, "Resolution").
func Run(ctx context.Context, bin Binary, t Turn, opts turn.Options) (turn.Outcome, error) {
	args, err := Args(t)
	if err != nil {
		return turn.Refused(err), err
	}
	// The bridge admits only bridge programs this agent starts.
	opts.OnStarted = t.Bridge.Admitting(opts.OnStarted)
	o, err := runOnce(ctx, bin, t, args, opts)
	if o.Process.Ending != supervise.SpawnFailed {
		return o, err
	}
	alt, ok := retryWithCursor(ctx, bin, err, discovery.EnvFromOS(), discovery.OSFS())
	if !ok {
		return o, err
	}
	warning := event.Warning{Code: WarnFellBack, Message: "cursor-agent was not found at launch: started the cursor candidate instead"}
	if opts.OnEvent != nil {
		opts.OnEvent(event.Event{Type: event.TypeWarning, Warning: &warning})
	}
	o, err = runOnce(ctx, alt, t, args, opts)
	o.Warnings = append([]event.Warning{warning}, o.Warnings...)
	return o, err
}

// runOnce plans and runs the turn on one binary.
func runOnce(ctx context.Context, bin Binary, t Turn, args []string, opts turn.Options) (turn.Outcome, error) {
	plan, err := shim.Build(bin.Resolution, args, shim.OptionsFromOS())
	if err != nil {
		return turn.Refused(err), err
	}
	dec, err := NewDecoder(t)
	if err != nil {
		return turn.Refused(err), err
	}
	return turn.Run(ctx, plan, t.Prompt, dec, opts)
}
