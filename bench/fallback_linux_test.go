package bench

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/agents/codex"
	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/bench/internal/turns"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/turn"
)

// handoffRounds of the fallback benchmark give its medians.
const handoffRounds = 20

// timedPrimary is the primary conversation with the moment its Prompt
// returned (the primary's turn is over: its whole tree is gone). It keeps
// the session's History, so the handoff composes the transcript as it
// does for `run`.
type timedPrimary struct {
	*agents.Session
	returned time.Time
	err      error
}

func (p *timedPrimary) Prompt(ctx context.Context, prompt string) (turn.Outcome, error) {
	o, err := p.Session.Prompt(ctx, prompt)
	p.returned = time.Now()
	p.err = err
	return o, err
}

// BenchmarkFallbackHandoff is `cursorkit run --agent codex --fallback
// cursor --json` in process, wired as runagent.go wires it: the primary
// an agents.Session of codex (the replay stand-in playing
// agents/codex/testdata/unauthorized.jsonl and exiting 1: a 401, a retryable
// authentication failure), the fallback an agents.Session of cursor (the
// cursor-agent simulator, normal scenario) that the fallback.Session's
// Start creates at the handoff, armed by a Probe that reports the result
// of probe.Probe with ReuseVersion run before the primary starts, as
// `run` does. It measures, over twenty rounds, from the moment the
// primary's Prompt returned its error to the moment the Cursor process
// started (turn.Options.OnStarted of the fallback's turn): handoff-ms
// (median, and max). Goal: handoff-ms <= 50. The Cursor probe (its
// --version cached) is paid when the fallback is armed, before the
// primary runs, so it is not in the handoff; probe-ms is its median for
// context (after one probe that fills the version cache).
func BenchmarkFallbackHandoff(b *testing.B) {
	dir := b.TempDir()
	codexBin := testkit.Install(b, dir, codex.Command, testkit.Simulator)
	cursorBin := testkit.Install(b, dir, cursor.Command, testkit.Simulator)
	stream, err := filepath.Abs(filepath.Join("..", "agents", "codex", "testdata", "unauthorized.jsonl"))
	require.NoError(b, err)
	// One environment for both, as `run` gives both its own: the copy
	// named codex replays the 401, the one named cursor-agent is the
	// cursor-agent simulator.
	env := testkit.ChildEnv(testkit.Simulator, agentsim.Scenario(), agentsim.EnvReplay+"="+stream,
		agentsim.EnvReplayExit+"=1", agentsim.EnvReplayFor+"="+codex.Command)

	codexAgent, err := agents.Lookup(codex.Name)
	require.NoError(b, err)
	cursorAgent, err := agents.Lookup(cursor.Name)
	require.NoError(b, err)
	codexRes, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: codexBin, Source: discovery.SourceOverride, Origin: codex.EnvBinary},
		discovery.EnvFromOS(), discovery.OSFS())
	require.NoError(b, err)
	probeCfg := probe.Config{Override: cursorBin, Environ: env, CacheDir: filepath.Join(dir, "cache"), ReuseVersion: true}
	_, err = probe.Probe(context.Background(), probeCfg) // fills the version cache
	require.NoError(b, err)

	// supervision is runagent.go's: the agent's defaults, the environment,
	// every event encoded as run --json does.
	out := bufio.NewWriterSize(io.Discard, 64<<10)
	enc := event.NewWriter(out)
	supervision := func(defaults turn.Options) turn.Options {
		opts := defaults
		opts.Env = env
		opts.OnEvent = func(e event.Event) { _ = enc.Write(e) }
		opts.OnDrained = func() { _ = out.Flush() }
		return opts
	}
	req := agents.Turn{Prompt: turns.Prompt}

	var handoffs, probes []time.Duration
	for b.Loop() {
		for range handoffRounds {
			var report probe.Report
			probes = append(probes, timed(func() {
				report, err = probe.Probe(context.Background(), probeCfg)
			}))
			require.NoError(b, err)
			require.True(b, report.Available)
			require.Contains(b, report.Candidates[len(report.Candidates)-1].Detail, "version from cache")

			var started atomic.Int64 // UnixNano when the Cursor process started
			primary := &timedPrimary{Session: agents.NewSession(codexAgent, codexRes, true, req, supervision(codexAgent.TurnDefaults()))}
			cfg := fallback.Config{
				Purpose:    "run",
				Primary:    primary,
				PrimaryID:  fallback.Identity{Agent: codexAgent.Name, Provider: codexAgent.Provider},
				FallbackID: fallback.Identity{Agent: cursor.Name, Provider: cursor.Provider},
				OnEvent:    supervision(turn.Options{}).OnEvent,
				Probe:      func(context.Context) error { return nil }, // probed above
				Start: func(context.Context) (fallback.Conversation, error) {
					opts := supervision(cursor.TurnDefaults())
					opts.OnStarted = func(int) { started.Store(time.Now().UnixNano()) }
					return agents.NewSession(cursorAgent, report.Binary.Resolution, report.Binary.Configured, agents.Turn{}, opts), nil
				},
			}
			s, w, err := fallback.New(context.Background(), cfg)
			require.NoError(b, err)
			require.Nil(b, w)
			o, err := s.Prompt(context.Background(), turns.Prompt)
			require.NoError(b, err, "the fallback's turn")
			require.Equal(b, turn.StatusDone, o.Status)
			require.True(b, s.Engaged())
			require.NoError(b, s.Close())
			require.NotZero(b, started.Load(), "the Cursor process never started")
			require.Equal(b, failure.Auth, failure.KindOf(primary.err), "the primary's failure: %v", primary.err)
			handoffs = append(handoffs, time.Unix(0, started.Load()).Sub(primary.returned))
		}
	}
	require.NoError(b, out.Flush())
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(median(handoffs)), "handoff-ms")
	b.ReportMetric(ms(slices.Max(handoffs)), "max-handoff-ms")
	b.ReportMetric(ms(median(probes)), "probe-ms")
}
