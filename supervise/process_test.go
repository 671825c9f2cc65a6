package supervise

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// startSelf supervises this test binary in the given mode.
func startSelf(t *testing.T, ctx context.Context, opts Options, mode string, args ...string) *Session {
	t.Helper()
	opts.Env = testkit.ChildEnv(mode)
	s, err := Start(ctx, selfPlan(t, args...), opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		s.Abort(failure.New(failure.Unclassified, "test cleanup"))
		waitOutcome(t, s)
	})
	return s
}

// politeStop is what stopping a child that obeys the polite request looks
// like: graceful on POSIX (SIGTERM); on Windows CTRL_BREAK only reaches a
// child sharing our console, so the kill may be needed.
func assertPoliteStop(t *testing.T, o Outcome) {
	t.Helper()
	if runtime.GOOS == "windows" {
		assert.Contains(t, []StopResult{StopGraceful, StopForced}, o.Stop)
		return
	}
	assert.Equal(t, StopGraceful, o.Stop)
}

func TestProcessOutput(t *testing.T) {
	big := 10 << 20
	tests := []struct {
		name     string
		opts     Options
		args     []string
		lines    []string // nil: not checked line by line
		lineLens []int
		code     int
		kind     failure.Kind
		tail     string
	}{
		{name: "crlf and unterminated last line", args: []string{"crlf"}, lines: []string{"first", "second", "", "last without newline"}},
		{name: "exit code and stderr", args: []string{"exit", "3", "out\n", "err text\n"}, lines: []string{"out"}, code: 3, kind: failure.Process, tail: "err text\n"},
		{name: "10 MiB line", args: []string{"bigline", "10485760"}, lineLens: []int{6, big, 5}},
		{name: "oversized line skipped", opts: Options{MaxLineBytes: 1 << 20}, args: []string{"bigline", "10485760"}, lines: []string{"before", "after"}},
		{name: "stdin passes through", opts: Options{Stdin: strings.NewReader("the prompt\nsecond line")}, args: []string{"echo"}, lines: []string{"the prompt", "second line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var lens []int
			opts := tt.opts
			opts.OnLine = func(l []byte) error {
				lens = append(lens, len(l))
				if len(l) < 1024 {
					got = append(got, string(l))
				}
				return nil
			}
			s := startSelf(t, context.Background(), opts, tt.args[0], tt.args[1:]...)
			o := waitOutcome(t, s)
			require.Equal(t, Exited, o.Ending, "%v %q", o.Err, o.StderrTail)
			assert.Equal(t, tt.code, o.ExitCode)
			assert.Equal(t, tt.kind, failure.KindOf(o.Err))
			assert.Equal(t, StopNone, o.Stop)
			if tt.lines != nil {
				assert.Equal(t, tt.lines, got)
			}
			if tt.lineLens != nil {
				assert.Equal(t, tt.lineLens, lens)
			}
			assert.Equal(t, tt.tail, o.StderrTail)
			assert.Equal(t, int64(len(lens)), o.Lines)
		})
	}
}

// TestProcessOnStarted: OnStarted gets the child's PID before its first
// line.
func TestProcessOnStarted(t *testing.T) {
	started := 0
	var lines []string
	opts := Options{
		OnStarted: func(pid int) { started = pid },
		OnLine: func(l []byte) error {
			if started == 0 {
				return failure.New(failure.Unclassified, "a line before OnStarted")
			}
			lines = append(lines, string(l))
			return nil
		},
	}
	o := waitOutcome(t, startSelf(t, context.Background(), opts, "pid"))
	require.Equal(t, Exited, o.Ending, "%v %q", o.Err, o.StderrTail)
	assert.Equal(t, []string{strconv.Itoa(started)}, lines)
}

func TestProcessDeadlines(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		mode   string
		ending Ending
	}{
		{"first line", Options{FirstLineTimeout: 100 * time.Millisecond}, "silent", FirstLineTimeout},
		{"inactivity", Options{FirstLineTimeout: waitLimit, IdleTimeout: 100 * time.Millisecond}, "ready-then-silent", IdleTimeout},
		{"total while chatty", Options{IdleTimeout: waitLimit, TotalTimeout: 200 * time.Millisecond}, "chatty", TotalTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.StopGrace = waitLimit
			s := startSelf(t, context.Background(), tt.opts, tt.mode)
			o := waitOutcome(t, s)
			assert.Equal(t, tt.ending, o.Ending)
			assert.Equal(t, failure.Timeout, failure.KindOf(o.Err))
			assertPoliteStop(t, o.Outcome)
			assert.Less(t, o.Duration, waitLimit)
		})
	}
}

func TestProcessIgnoresPoliteStop(t *testing.T) {
	ready := make(chan struct{})
	var once bool
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := startSelf(t, ctx, Options{StopGrace: 100 * time.Millisecond, OnLine: func([]byte) error {
		if !once {
			once = true
			close(ready)
		}
		return nil
	}}, "ignore-term")
	select {
	case <-ready:
	case <-time.After(waitLimit):
		t.Fatal("child never got ready")
	}
	cancel()
	o := waitOutcome(t, s)
	assert.Equal(t, Cancelled, o.Ending)
	assert.Equal(t, failure.Cancelled, failure.KindOf(o.Err))
	assert.Equal(t, StopForced, o.Stop)
}

// TestProcessTreeStops starts a tree (two grandchildren in the group and an
// escapee: setsid on POSIX, detached on Windows) and checks every way of
// stopping it leaves zero survivors and a prompt Wait.
func TestProcessTreeStops(t *testing.T) {
	tests := []struct {
		name   string
		stop   func(s *Session, cancel context.CancelFunc)
		ending Ending
		kind   failure.Kind
	}{
		{"cancel", func(_ *Session, cancel context.CancelFunc) { cancel() }, Cancelled, failure.Cancelled},
		{"abort", func(s *Session, _ context.CancelFunc) { s.Abort(failure.New(failure.Policy, "forbidden tool")) }, Aborted, failure.Policy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testkit.NewWatch(t)
			marker := w.Marker()
			ready := newReadyPIDs()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := startSelf(t, ctx, Options{StopGrace: 2 * time.Second, OnLine: ready.onLine}, "tree", append([]string{marker}, treeKinds...)...)
			pids := ready.wait(t, s)
			require.GreaterOrEqual(t, len(pids), len(treeKinds))
			w.Add(pids...)
			tt.stop(s, cancel)
			o := waitOutcome(t, s)
			assert.Equal(t, tt.ending, o.Ending)
			assert.Equal(t, tt.kind, failure.KindOf(o.Err))
			assert.NotEqual(t, StopNone, o.Stop)
			w.RequireGone(waitLimit)
		})
	}
}

// TestProcessEscapeeHoldsPipes: the child exits by itself but leaves a
// grandchild (an escapee from its group) holding stderr. Wait returns after
// the drain grace, the leftover is killed and the run is still a success.
func TestProcessEscapeeHoldsPipes(t *testing.T) {
	w := testkit.NewWatch(t)
	marker := w.Marker()
	ready := newReadyPIDs()
	// The drain grace leaves time to open the watch before the sweep.
	s := startSelf(t, context.Background(), Options{DrainGrace: 2 * time.Second, OnLine: ready.onLine}, "tree", marker, treeKinds[len(treeKinds)-1], "exit")
	pids := ready.wait(t, s)
	require.Len(t, pids, 1)
	w.Add(pids...)
	o := waitOutcome(t, s)
	assert.Equal(t, Exited, o.Ending)
	assert.NoError(t, o.Err)
	assert.Equal(t, 0, o.ExitCode)
	assert.True(t, hasWarning(o.Warnings, WarnPipesHeld), "%v", o.Warnings)
	w.RequireGone(waitLimit)
}

// TestProcessLateClose: OnLine returns ErrFinished on the result line; the
// child lingers past ExitGrace and is stopped, and the run still succeeds.
func TestProcessLateClose(t *testing.T) {
	s := startSelf(t, context.Background(), Options{ExitGrace: 100 * time.Millisecond, StopGrace: 2 * time.Second, OnLine: func(l []byte) error {
		if strings.Contains(string(l), `"result"`) {
			return ErrFinished
		}
		return nil
	}}, "result-then-linger")
	o := waitOutcome(t, s)
	assert.Equal(t, Exited, o.Ending)
	assert.NoError(t, o.Err)
	assert.True(t, o.Finished)
	assertPoliteStop(t, o.Outcome)
	assert.True(t, hasWarning(o.Warnings, WarnLateClose), o.Warnings)
}

func TestRunSpawnFailure(t *testing.T) {
	plan := selfPlan(t)
	plan.Program += ".missing"
	o := ranOf(Run(context.Background(), plan, Options{}))
	assert.Equal(t, SpawnFailed, o.Ending)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(o.Err))

	o = ranOf(Run(context.Background(), selfPlan(t), Options{Dir: plan.Program}))
	assert.Equal(t, SpawnFailed, o.Ending)
	assert.Equal(t, failure.Input, failure.KindOf(o.Err))
}
