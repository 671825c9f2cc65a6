package agents_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/turn"
)

func TestOptionsOnlyCursorHas(t *testing.T) {
	tests := []struct {
		option agents.Option
		turn   agents.Turn
	}{
		{agents.OptionMCPServer, agents.Turn{MCPServers: []string{"tools"}}},
		{agents.OptionPartialOutput, agents.Turn{PartialOutput: true}},
		{agents.OptionTaskProfile, agents.Turn{Mode: turn.ModeAsk, Sandboxed: true}},
	}
	for _, a := range agents.All() {
		for _, tt := range tests {
			t.Run(a.Name+"/"+string(tt.option), func(t *testing.T) {
				tt.turn.Prompt = "p"
				_, argsErr := a.Args(tt.turn)
				if a.Name == "cursor" {
					require.NoError(t, argsErr)
					require.NoError(t, a.Offers(tt.option))
					return
				}
				// Nothing may start: the resolution names no file.
				o, runErr := a.Run(context.Background(), discovery.Resolution{}, true, tt.turn, a.TurnDefaults())
				for _, err := range []error{argsErr, runErr, a.Offers(tt.option)} {
					require.Error(t, err)
					assert.Equal(t, failure.Input, failure.KindOf(err))
					var unsupported *agents.UnsupportedError
					require.True(t, errors.As(err, &unsupported), "%v", err)
					assert.Equal(t, agents.UnsupportedError{Agent: a.Name, Option: tt.option}, *unsupported)
					assert.Equal(t, string(tt.option)+" is the Cursor CLI's only: "+a.Name+` has no such option (docs/contract.md, "Agents")`, err.Error())
				}
				assert.Equal(t, turn.StatusError, o.Status, "the turn is refused")
				assert.Equal(t, failure.Input, o.Kind)
			})
		}
		if a.Name != "cursor" {
			assert.Equal(t, failure.Input, failure.KindOf(a.Offers(agents.OptionEffort)), a.Name)
		}
	}
}

// events collects a session's events from any goroutine.
type events struct {
	mu  sync.Mutex
	all []event.Event
}

func (e *events) add(ev event.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) ofType(typ event.Type) []event.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []event.Event
	for _, ev := range e.all {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func TestWithFallback(t *testing.T) {
	stream, err := filepath.Abs(filepath.Join("codex", "testdata", "unauthorized.jsonl"))
	require.NoError(t, err)
	tests := []struct {
		name     string
		unusable error
		model    string
		engaged  bool
		dropped  string
	}{
		{name: "an auth failure hands the prompt to cursor", engaged: true},
		{name: "an unusable cursor runs the primary alone", unusable: failure.New(failure.MissingCLI, "no cursor here"), dropped: "(missing_cli): no cursor here"},
		{name: "a model cursor refuses drops the fallback", model: "auto", dropped: "(input)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codex := install(t, "codex", agentsim.EnvReplay+"="+stream, agentsim.EnvReplayExit+"=1")
			cursorBin := install(t, "cursor")
			var evs events
			opts := codex.agent.TurnDefaults()
			opts.Env, opts.FirstLineTimeout, opts.OnEvent = codex.env, waitLong, evs.add
			primary := agents.NewSession(codex.agent, codex.res, true, agents.Turn{Mode: turn.ModeAsk, Model: "gpt-5"}, opts)
			fbOpts := cursorBin.agent.TurnDefaults()
			fbOpts.Env, fbOpts.FirstLineTimeout, fbOpts.OnEvent = cursorBin.env, waitLong, evs.add
			conv, err := agents.WithFallback(context.Background(), primary, agents.Fallback{
				Resolution: cursorBin.res, Configured: true, Model: tt.model, Unusable: tt.unusable,
				Options: fbOpts, Purpose: "test", OnEvent: evs.add,
				Transcript: []fallback.Message{{Role: "user", Text: "an earlier question"}},
			})
			require.NoError(t, err)
			defer conv.Close()
			o, err := conv.Prompt(context.Background(), "the prompt")

			var dropped []string
			for _, w := range evs.ofType(event.TypeWarning) {
				if w.Warning.Code == fallback.WarnFallbackDropped {
					dropped = append(dropped, w.Warning.Message)
				}
			}
			if !tt.engaged {
				require.Error(t, err)
				assert.Equal(t, failure.Auth, failure.KindOf(err), "the primary's error, unchanged")
				require.Len(t, dropped, 1)
				assert.Contains(t, dropped[0], tt.dropped)
				assert.Empty(t, evs.ofType(event.TypeFallbackEngaged))
				return
			}
			require.NoError(t, err)
			assert.Empty(t, dropped)
			assert.Equal(t, turn.StatusDone, o.Status, "cursor answered")
			engaged := evs.ofType(event.TypeFallbackEngaged)
			require.Len(t, engaged, 1)
			e := engaged[0].Fallback
			assert.Equal(t, "test", e.SessionPurpose)
			assert.Equal(t, "codex", e.PrimaryAgent)
			assert.Equal(t, "openai", e.PrimaryProvider)
			assert.Equal(t, "gpt-5", e.PrimaryModel)
			assert.Equal(t, "cursor", e.FallbackAgent)
			assert.Equal(t, "cursor-cli", e.FallbackProvider)
			assert.True(t, e.ContextTransferred)
			recs := cursorBin.records(t)
			require.Len(t, recs, 1)
			assert.Contains(t, recs[0].Stdin, "user: an earlier question\n")
			assert.True(t, strings.HasSuffix(recs[0].Stdin, "[Current prompt]\nthe prompt"), recs[0].Stdin)
			args := strings.Join(recs[0].Args, " ")
			assert.Contains(t, args, "--mode ask", "the primary's mode")
			assert.NotContains(t, args, "--model", "cursor's configured model")
		})
	}
}

func TestWithFallbackRefusesANegativeRetryCount(t *testing.T) {
	codex, err := agents.Lookup("codex")
	require.NoError(t, err)
	primary := agents.NewSession(codex, discovery.Resolution{}, true, agents.Turn{}, codex.TurnDefaults())
	_, err = agents.WithFallback(context.Background(), primary, agents.Fallback{AfterRetries: -1})
	require.Error(t, err)
	assert.Equal(t, failure.Input, failure.KindOf(err))
}

func TestWithFallbackRefusesCursorAsItsOwnFallback(t *testing.T) {
	primary := agents.NewSession(agents.Cursor(), discovery.Resolution{}, true, agents.Turn{}, agents.Cursor().TurnDefaults())
	s, err := agents.WithFallback(context.Background(), primary, agents.Fallback{})
	require.Error(t, err)
	assert.Nil(t, s)
	assert.Equal(t, failure.Input, failure.KindOf(err))
	assert.Contains(t, err.Error(), "cannot be its own fallback")
}
