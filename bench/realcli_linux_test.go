package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/internal/modelapi"
	"github.com/cursorkit/cursorkit/internal/realcli"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/turn"
)

// monotonic is CLOCK_MONOTONIC in nanoseconds, the clock of
// testdata/timed: one clock for every process of the machine.
func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

// realTurnRounds of BenchmarkRealClaudeTurn give its medians.
const realTurnRounds = 15

// BenchmarkRealClaudeTurn: one real Claude Code text turn against the
// model-API stand-in, in alternating rounds: run directly, through the
// built `cursorkit run --agent claude --json`, and through agents.Agent.Run
// in this process (an embedding program's turn, the launch guard already
// running). Claude Code is started in all three through testdata/timed,
// which records when the real CLI started and ended, so each run's share
// of cursorkit is exact whatever Claude Code's own time does from round to
// round: a run's wall time minus the CLI's, less the same for the direct
// run (what timed itself costs). share-ms is the command's (median, and
// max), library-share-ms the in-process turn's; direct-ms and
// cursorkit-ms are the direct and the command's wall times, for context.
// Goal: share-ms <= 5.
func BenchmarkRealClaudeTurn(b *testing.B) {
	bin := realcli.Bin(b, realcli.Claude)
	tools := buildTools(b)
	log := filepath.Join(b.TempDir(), "timed.log")
	claude, err := agents.Lookup(realcli.Claude)
	require.NoError(b, err)
	req := agents.Turn{Prompt: "Say hello.", Mode: turn.ModeAsk}
	args, err := claude.Args(req)
	require.NoError(b, err)
	res, err := claude.Find(context.Background(), tools.timed, nil, discovery.EnvFromOS(), discovery.OSFS())
	require.NoError(b, err)

	const direct, command, library = 0, 1, 2
	// round runs one turn the way given and returns its wall time and
	// the CLI's, as timed saw it.
	round := func(way int) (wall, cli time.Duration) {
		ws := realcli.Workspace(b, b.TempDir())
		api, err := modelapi.Start(modelapi.Script{Replies: []modelapi.Reply{{Text: []string{"Hello."}}}}, nil)
		require.NoError(b, err)
		defer api.Close()
		env := append(realcli.Env(b, realcli.Claude, api.URL(), b.TempDir()), "TIMED_TARGET="+bin, "TIMED_LOG="+log)
		require.NoError(b, os.WriteFile(log, nil, 0o600))
		var said string
		start := monotonic()
		switch way {
		case library:
			opts := claude.TurnDefaults()
			opts.Env, opts.Dir = env, ws
			opts.OnEvent = func(e event.Event) { said += e.Text }
			_, err := claude.Run(context.Background(), res, true, req, opts)
			require.NoError(b, err)
		default:
			cmd := exec.Command(tools.timed, args...)
			if way == command {
				env = append(env, claude.EnvBinary+"="+tools.timed)
				cmd = exec.Command(tools.cursorkit, "run", "--agent", "claude", "--mode", "ask", "--json", "-")
			}
			var stdout bytes.Buffer
			cmd.Env, cmd.Dir, cmd.Stdin, cmd.Stdout = env, ws, strings.NewReader(req.Prompt), &stdout
			require.NoError(b, cmd.Run())
			said = stdout.String()
		}
		end := monotonic()
		require.Contains(b, said, "Hello.")
		var cliStart, cliEnd int64
		line, err := os.ReadFile(log)
		require.NoError(b, err)
		_, err = fmt.Sscanf(string(line), "%d %d", &cliStart, &cliEnd)
		require.NoError(b, err, "timed's record: %q", line)
		return time.Duration(end - start), time.Duration(cliEnd - cliStart)
	}
	round(command) // the CLI's and the file cache's first run; the guard's start
	var rest [3][]time.Duration
	var walls [3][]time.Duration
	for b.Loop() {
		for range realTurnRounds {
			for _, way := range []int{direct, command, library} {
				w, c := round(way)
				walls[way] = append(walls[way], w)
				rest[way] = append(rest[way], w-c)
			}
		}
	}
	timedCost := median(rest[direct])
	share := func(way int) []time.Duration {
		out := make([]time.Duration, len(rest[way]))
		for i, r := range rest[way] {
			out[i] = r - timedCost
		}
		return out
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(median(share(command))), "share-ms")
	b.ReportMetric(ms(slices.Max(share(command))), "max-share-ms")
	b.ReportMetric(ms(median(share(library))), "library-share-ms")
	b.ReportMetric(ms(median(walls[direct])), "direct-ms")
	b.ReportMetric(ms(median(walls[command])), "cursorkit-ms")
}

// fallbackRetryRounds of BenchmarkFallbackAtFirstRetry give its medians.
const fallbackRetryRounds = 5

// BenchmarkFallbackAtFirstRetry: `run --agent CLI --fallback cursor
// --fallback-after-retries 1` in process, wired as runagent.go wires it,
// with each real CLI (claude, codex, gemini) as the primary and a
// model-API stand-in that answers every request 429 with retry-after 1:
// the CLI retries by itself, and the fallback stops it at its first
// retry notice and starts Cursor (the simulator). It measures, per CLI,
// from the moment the stand-in began to send its first 429 to the moment
// the Cursor process started (turn.Options.OnStarted): CLI/handoff-ms
// (median, and max), against the delay the CLI would wait before its
// first retry, CLI/retry-delay-ms (firstRetryDelay). Goal: handoff-ms <=
// retry-delay-ms + 100.
func BenchmarkFallbackAtFirstRetry(b *testing.B) {
	dir := b.TempDir()
	cursorBin := testkit.Install(b, dir, cursor.Command, testkit.Simulator)
	cursorEnv := testkit.ChildEnv(testkit.Simulator)
	probeCfg := probe.Config{Override: cursorBin, Environ: cursorEnv, CacheDir: filepath.Join(dir, "cache"), ReuseVersion: true}
	report, err := probe.Probe(context.Background(), probeCfg)
	require.NoError(b, err)
	cursorAgent, err := agents.Lookup(cursor.Name)
	require.NoError(b, err)

	for _, cli := range realcli.CLIs() {
		b.Run(cli, func(b *testing.B) {
			bin := realcli.Bin(b, cli)
			a, err := agents.Lookup(cli)
			require.NoError(b, err)
			res, err := a.Find(context.Background(), bin, nil, discovery.EnvFromOS(), discovery.OSFS())
			require.NoError(b, err)
			sc := realcli.ScenarioNamed(b, "rate-limit-exhausted")
			var handoffs, delays []time.Duration
			for b.Loop() {
				for range fallbackRetryRounds {
					ws := realcli.Workspace(b, b.TempDir())
					api, err := modelapi.Start(sc.Script(cli), nil)
					require.NoError(b, err)
					opts := a.TurnDefaults()
					opts.Env, opts.Dir = realcli.Env(b, cli, api.URL(), b.TempDir()), ws
					var retry atomic.Pointer[event.Retry]
					opts.OnEvent = func(e event.Event) {
						if e.Type == event.TypeWarning && e.Warning.Retry != nil {
							retry.CompareAndSwap(nil, e.Warning.Retry)
						}
					}
					var started atomic.Int64 // monotonic ns when Cursor started
					s, w, err := fallback.New(context.Background(), fallback.Config{
						Purpose:      "run",
						Primary:      agents.NewSession(a, res, true, agents.Turn{Mode: turn.ModeAsk, Model: sc.Model[cli]}, opts),
						PrimaryID:    fallback.Identity{Agent: a.Name, Provider: a.Provider},
						FallbackID:   fallback.Identity{Agent: cursor.Name, Provider: cursor.Provider},
						AfterRetries: 1,
						Probe:        func(context.Context) error { return nil }, // probed above
						Start: func(context.Context) (fallback.Conversation, error) {
							copts := cursor.TurnDefaults()
							copts.Env = cursorEnv
							copts.OnStarted = func(int) { started.Store(monotonic()) }
							return agents.NewSession(cursorAgent, report.Binary.Resolution, report.Binary.Configured, agents.Turn{}, copts), nil
						},
					})
					require.NoError(b, err)
					require.Nil(b, w)
					o, err := s.Prompt(context.Background(), "Say hello.")
					require.NoError(b, err, "Cursor's turn")
					require.Equal(b, turn.StatusDone, o.Status)
					require.NoError(b, s.Close())
					require.NoError(b, api.Close())
					first, ok := api.FirstSent(modelapi.ErrRateLimit)
					require.True(b, ok)
					require.NotZero(b, started.Load(), "Cursor never started")
					r := retry.Load()
					require.NotNil(b, r, "the primary's retry notice")
					handoffs = append(handoffs, time.Duration(started.Load()-monotonicOf(first)))
					delays = append(delays, firstRetryDelay(cli, *r, sc.Script(cli)))
				}
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(ms(median(handoffs)), "handoff-ms")
			b.ReportMetric(ms(slices.Max(handoffs)), "max-handoff-ms")
			b.ReportMetric(ms(median(delays)), "retry-delay-ms")
		})
	}
}

// firstRetryDelay is how long cli waits before its first retry: what its
// notice says (Claude Code's retry_delay_ms), else the retry-after the
// stand-in sent (Codex waits it, its notice does not say), or Gemini
// CLI's least first backoff, which ignores retry-after (5 s less its 30 %
// jitter).
func firstRetryDelay(cli string, r event.Retry, script modelapi.Script) time.Duration {
	switch {
	case r.DelayMs > 0:
		return time.Duration(r.DelayMs) * time.Millisecond
	case cli == realcli.Gemini:
		return 3500 * time.Millisecond
	}
	return time.Duration(script.Replies[0].RetryAfter) * time.Second
}

// monotonicOf is t (a time.Now of this process) on CLOCK_MONOTONIC.
func monotonicOf(t time.Time) int64 {
	return monotonic() - int64(time.Since(t))
}
