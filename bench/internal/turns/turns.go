// Package turns is what the benchmarks and the standalone Go driver of
// BenchmarkConcurrentTurnsRSS share: one prompt turn the way `cursorkit
// run --json` drives it, and the concurrent driver itself. It is for the
// benchmarks only.
package turns

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/turn"
)

// Prompt is what every simulated turn receives on stdin.
const Prompt = "Summarise the README."

// Turn is the turn every benchmark runs: `cursorkit run`'s default, a
// read-only plan-mode turn with the agent's configured model.
func Turn() cursor.Turn { return cursor.Turn{Prompt: Prompt} }

// SimBinary is the simulator at sim as a configured Cursor binary, the way
// probe hands `cursorkit --binary SIM run` its binary (no PATH candidate,
// so cursor.Run never falls back to another one).
func SimBinary(sim string) cursor.Binary {
	return cursor.Binary{
		Resolution: discovery.Resolution{Path: sim, Name: filepath.Base(sim), Kind: discovery.Native, Source: discovery.SourceOverride},
		Configured: true,
	}
}

// Run is one prompt turn as `cursorkit run --json` drives it:
// agents.Agent.Run of Cursor on bin with cursor.TurnDefaults and env, every event written with w
// (an event.Writer, as run's is), onDrained (when not nil) called
// whenever every stdout byte read so far is decoded, where run flushes its
// buffered stdout. started (when not nil) is called at the first event.
// It returns the number of stdout lines the agent wrote (supervise's
// count) and the turn's verdict: nil exactly when the turn is done and
// its events were encoded.
func Run(ctx context.Context, bin cursor.Binary, env []string, w *event.Writer, onDrained, started func()) (int64, error) {
	var (
		events int64
		encErr error
	)
	opts := cursor.TurnDefaults()
	opts.Env = env
	opts.OnDrained = onDrained
	opts.OnEvent = func(e event.Event) {
		if events == 0 && started != nil {
			started()
		}
		events++
		if err := w.Write(e); err != nil && encErr == nil {
			encErr = err
		}
	}
	o, err := agents.Cursor().Run(ctx, bin.Resolution, bin.Configured, agents.Turn{Prompt: Prompt}, opts)
	lines := o.Process.Lines
	switch {
	case err != nil:
		return lines, err
	case encErr != nil:
		return lines, fmt.Errorf("encoding an event: %w", encErr)
	case o.Status != turn.StatusDone:
		return lines, fmt.Errorf("the turn ended %s", o.Status)
	case events == 0:
		return lines, errors.New("the turn emitted nothing")
	}
	return lines, nil
}
