package supervise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// verdictWithin bounds every wait in the tests: a Session that does not
// reach a verdict in this time is a failure, not a slow pass.
const verdictWithin = 20 * time.Second

func startFake(t *testing.T, ctx context.Context, f *fakeChild, opts Options) *Session {
	t.Helper()
	s, err := start(ctx, opts, func() (child, error) { return f, nil })
	require.NoError(t, err)
	return s
}

// ran is a run's Outcome with the error Run or Wait returned beside it.
type ran struct {
	Outcome
	Err error
}

func ranOf(o Outcome, err error) ran { return ran{o, err} }

func waitOutcome(t *testing.T, s *Session) ran {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(verdictWithin):
		t.Fatalf("no verdict within %s", verdictWithin)
	}
	return ranOf(s.Wait())
}

// lineCollector records OnLine calls.
type lineCollector struct {
	mu    sync.Mutex
	lines []string
}

func (c *lineCollector) add(line []byte) error {
	c.mu.Lock()
	c.lines = append(c.lines, string(line))
	c.mu.Unlock()
	return nil
}

func (c *lineCollector) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

func TestSessionExitClassification(t *testing.T) {
	tests := []struct {
		name   string
		status exitStatus
		kind   failure.Kind
	}{
		{"success", exitStatus{code: 0}, ""},
		{"non-zero exit", exitStatus{code: 3}, failure.Process},
		{"signal nobody sent", exitStatus{code: -1, signal: 11}, failure.Died},
		{"wait failed", exitStatus{code: -1, err: errors.New("wait: no child")}, failure.Process},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			var got lineCollector
			s := startFake(t, context.Background(), f, Options{OnLine: got.add})
			_, err := f.outW.Write([]byte("a\r\nb\n\nlast"))
			require.NoError(t, err)
			_, err = f.errW.Write([]byte("oops\n"))
			require.NoError(t, err)
			f.exit(tt.status)
			o := waitOutcome(t, s)
			assert.Equal(t, Exited, o.Ending)
			assert.Equal(t, StopNone, o.Stop)
			assert.Equal(t, tt.kind, failure.KindOf(o.Err))
			assert.Equal(t, tt.status.code, o.ExitCode)
			assert.Equal(t, tt.status.signal, o.Signal)
			assert.Equal(t, []string{"a", "b", "", "last"}, got.get())
			assert.Equal(t, int64(4), o.Lines)
			assert.Equal(t, int64(len("a\r\nb\n\nlast")), o.Bytes)
			assert.Equal(t, "oops\n", o.StderrTail)
			assert.Positive(t, o.TimeToFirstLine)
			assert.Empty(t, o.Warnings)
			assert.Zero(t, f.killed.Load(), "no stop, no kill")
			assert.EqualValues(t, 1, f.closed.Load(), "close kills what is left after every run")
		})
	}
}

func TestSessionDeadlines(t *testing.T) {
	tests := []struct {
		name       string
		opts       Options
		writeFirst bool // write one complete line before going silent
		ending     Ending
		message    string
	}{
		{"first line", Options{FirstLineTimeout: 30 * time.Millisecond}, false, FirstLineTimeout, "first-line deadline"},
		{"first line met, then idle", Options{FirstLineTimeout: time.Hour, IdleTimeout: 30 * time.Millisecond}, true, IdleTimeout, "inactivity deadline"},
		{"idle before any line", Options{IdleTimeout: 30 * time.Millisecond}, false, IdleTimeout, "inactivity deadline"},
		{"total", Options{TotalTimeout: 30 * time.Millisecond, IdleTimeout: time.Hour}, true, TotalTimeout, "total deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			tt.opts.StopGrace = DefaultStopGrace
			s := startFake(t, context.Background(), f, tt.opts)
			if tt.writeFirst {
				_, err := f.outW.Write([]byte("{}\n"))
				require.NoError(t, err)
			}
			o := waitOutcome(t, s)
			assert.Equal(t, tt.ending, o.Ending)
			assert.Contains(t, []Ending{FirstLineTimeout, IdleTimeout, TotalTimeout}, o.Ending)
			assert.Equal(t, failure.Timeout, failure.KindOf(o.Err))
			assert.Contains(t, o.Err.Error(), tt.message)
			assert.Equal(t, StopGraceful, o.Stop)
			assert.Equal(t, 15, o.Signal)
			assert.EqualValues(t, 1, f.terminated.Load())
		})
	}
}

func TestSessionStopEscalation(t *testing.T) {
	tests := []struct {
		name       string
		ignoreTerm bool
		grace      time.Duration
		stop       StopResult
		terminated int32
	}{
		{"obeys SIGTERM", false, time.Hour, StopGraceful, 1},
		{"ignores SIGTERM", true, 20 * time.Millisecond, StopForced, 1},
		{"no grace", false, 0, StopForced, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			f.ignoreTerm = tt.ignoreTerm
			s := startFake(t, context.Background(), f, Options{IdleTimeout: 10 * time.Millisecond, StopGrace: tt.grace})
			o := waitOutcome(t, s)
			assert.Equal(t, IdleTimeout, o.Ending)
			assert.Equal(t, tt.stop, o.Stop)
			assert.Equal(t, tt.terminated, f.terminated.Load())
			assert.Equal(t, tt.stop == StopForced, f.killed.Load() > 0, "the tree kill is for a forced stop")
			assert.EqualValues(t, 1, f.closed.Load())
			assert.Positive(t, o.StopTook)
		})
	}
}

func TestSessionCancel(t *testing.T) {
	f := newFake()
	f.ignoreTerm = true
	ctx, cancel := context.WithCancel(context.Background())
	s := startFake(t, ctx, f, Options{StopGrace: 10 * time.Millisecond})
	cancel()
	o := waitOutcome(t, s)
	assert.Equal(t, Cancelled, o.Ending)
	assert.Equal(t, failure.Cancelled, failure.KindOf(o.Err))
	assert.ErrorIs(t, o.Err, context.Canceled)
	assert.Equal(t, StopForced, o.Stop)
}

func TestSessionAbortKillsAtOnce(t *testing.T) {
	f := newFake()
	s := startFake(t, context.Background(), f, Options{StopGrace: time.Hour})
	s.Abort(failure.New(failure.Policy, "tool shell is not allowed in read-only mode"))
	s.Abort(failure.New(failure.Unclassified, "second abort is ignored"))
	o := waitOutcome(t, s)
	assert.Equal(t, Aborted, o.Ending)
	assert.Equal(t, failure.Policy, failure.KindOf(o.Err))
	assert.Equal(t, "tool shell is not allowed in read-only mode", o.Err.Error())
	assert.Equal(t, StopForced, o.Stop)
	assert.Zero(t, f.terminated.Load())
}

func TestSessionAbortDuringGraceEscalates(t *testing.T) {
	f := newFake()
	f.ignoreTerm = true
	s := startFake(t, context.Background(), f, Options{IdleTimeout: time.Millisecond, StopGrace: time.Hour})
	// Abort once the polite request went out; the hour of grace must not
	// be waited.
	testkit.Eventually(t, "the polite stop", waitLimit, func() bool { return f.terminated.Load() > 0 })
	s.Abort(failure.New(failure.Policy, "stop now"))
	o := waitOutcome(t, s)
	assert.Equal(t, IdleTimeout, o.Ending, "the first reason to stop wins")
	assert.Equal(t, StopForced, o.Stop)
}

func TestSessionFinish(t *testing.T) {
	t.Run("late close stays a success", func(t *testing.T) {
		f := newFake()
		f.ignoreTerm = true
		s := startFake(t, context.Background(), f, Options{IdleTimeout: time.Hour, ExitGrace: 20 * time.Millisecond, StopGrace: 10 * time.Millisecond})
		_, err := f.outW.Write([]byte(`{"type":"result"}` + "\n"))
		require.NoError(t, err)
		s.finish()
		s.finish()
		o := waitOutcome(t, s)
		assert.Equal(t, Exited, o.Ending)
		assert.NoError(t, o.Err)
		assert.True(t, o.Finished)
		assert.Equal(t, StopForced, o.Stop)
		assert.True(t, hasWarning(o.Warnings, WarnLateClose), o.Warnings)
	})
	t.Run("cancel while waiting for the exit", func(t *testing.T) {
		f := newFake()
		ctx, cancel := context.WithCancel(context.Background())
		s := startFake(t, ctx, f, Options{ExitGrace: time.Hour})
		s.finish()
		cancel()
		o := waitOutcome(t, s)
		assert.True(t, o.Finished)
		assert.Equal(t, Exited, o.Ending)
		assert.NoError(t, o.Err)
		assert.True(t, hasWarning(o.Warnings, WarnLateClose), o.Warnings)
	})
	t.Run("exit within the grace", func(t *testing.T) {
		f := newFake()
		s := startFake(t, context.Background(), f, Options{ExitGrace: time.Hour})
		s.finish()
		f.exit(exitStatus{code: 0})
		o := waitOutcome(t, s)
		assert.Equal(t, Exited, o.Ending)
		assert.NoError(t, o.Err)
		assert.Equal(t, StopNone, o.Stop)
		assert.True(t, o.Finished)
		assert.Empty(t, o.Warnings)
	})
}

func TestSessionHeldPipes(t *testing.T) {
	t.Run("after a stop Wait is prompt", func(t *testing.T) {
		f := newFake()
		f.holdPipes = true
		s := startFake(t, context.Background(), f, Options{IdleTimeout: time.Millisecond, StopGrace: 0, DrainGrace: time.Hour})
		o := waitOutcome(t, s)
		assert.Equal(t, IdleTimeout, o.Ending)
		assert.Less(t, o.Duration, time.Hour)
		assert.True(t, hasWarning(o.Warnings, WarnPipesHeld), "%v", o.Warnings)
	})
	t.Run("after a natural exit the drain grace applies", func(t *testing.T) {
		f := newFake()
		f.holdPipes = true
		var got lineCollector
		s := startFake(t, context.Background(), f, Options{DrainGrace: 20 * time.Millisecond, OnLine: got.add})
		_, err := f.outW.Write([]byte("before exit\n"))
		require.NoError(t, err)
		f.exit(exitStatus{code: 0})
		o := waitOutcome(t, s)
		assert.Equal(t, Exited, o.Ending)
		assert.NoError(t, o.Err)
		assert.True(t, hasWarning(o.Warnings, WarnPipesHeld), "%v", o.Warnings)
		assert.Equal(t, []string{"before exit"}, got.get())
		_, err = f.outW.Write([]byte("after the verdict\n"))
		assert.Error(t, err, "supervise closed its end")
	})
}

func TestSessionStderrTailAndPassThrough(t *testing.T) {
	f := newFake()
	var pass bytes.Buffer
	s := startFake(t, context.Background(), f, Options{StderrTailBytes: 8, Stderr: &pass})
	_, err := f.errW.Write([]byte("0123456789abcdef"))
	require.NoError(t, err)
	f.exit(exitStatus{})
	o := waitOutcome(t, s)
	assert.Equal(t, "89abcdef", o.StderrTail)
	assert.Equal(t, "0123456789abcdef", pass.String())
}

func TestSessionOversizedLine(t *testing.T) {
	f := newFake()
	var got lineCollector
	var sizes []int64
	s := startFake(t, context.Background(), f, Options{MaxLineBytes: 4, OnLine: got.add, OnOversizedLine: func(n int64) { sizes = append(sizes, n) }})
	_, err := f.outW.Write([]byte("ok\ntoo long\r\nfine\n"))
	require.NoError(t, err)
	f.exit(exitStatus{})
	o := waitOutcome(t, s)
	assert.NoError(t, o.Err)
	assert.Equal(t, []string{"ok", "fine"}, got.get())
	assert.Equal(t, []int64{8}, sizes)
	assert.True(t, hasWarning(o.Warnings, WarnOversizedLine), o.Warnings)
	assert.True(t, hasWarning(o.Warnings, WarnOversizedLine), "%v", o.Warnings)
}

func TestStartRefusals(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := start(ctx, Options{}, func() (child, error) { t.Fatal("spawned despite a cancelled context"); return nil, nil })
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))

	_, err = start(context.Background(), Options{}, func() (child, error) { return nil, errors.New("boom") })
	assert.Equal(t, failure.Unclassified, failure.KindOf(err))

	missing := failure.New(failure.MissingCLI, "program not found")
	o := NotStarted(missing)
	assert.Equal(t, SpawnFailed, o.Ending)
	assert.Equal(t, -1, o.ExitCode)
	assert.Equal(t, Cancelled, NotStarted(failure.New(failure.Cancelled, "cancelled")).Ending)
}

func TestDeadlineArithmetic(t *testing.T) {
	s := &Session{opts: Options{FirstLineTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second, TotalTimeout: time.Hour, ExitGrace: 15 * time.Second}}
	s.firstLine.Store(-1)

	at, ending, ok := s.deadline(false, 0)
	require.True(t, ok)
	assert.Equal(t, 30*time.Second, at)
	assert.Equal(t, FirstLineTimeout, ending)

	s.opts.FirstLineTimeout = 300 * time.Second
	at, ending, _ = s.deadline(false, 0)
	assert.Equal(t, 300*time.Second, at, "a pending first line governs alone")
	assert.Equal(t, FirstLineTimeout, ending)
	s.opts.FirstLineTimeout = 0
	at, ending, _ = s.deadline(false, 0)
	assert.Equal(t, 120*time.Second, at, "without a first-line deadline inactivity counts from start")
	assert.Equal(t, IdleTimeout, ending)
	s.opts.FirstLineTimeout = 30 * time.Second

	s.firstLine.Store(int64(time.Second))
	s.lastActivity.Store(int64(50 * time.Second))
	at, ending, _ = s.deadline(false, 0)
	assert.Equal(t, 170*time.Second, at, "every stdout read moves the inactivity deadline")
	assert.Equal(t, IdleTimeout, ending)

	s.lastActivity.Store(int64(59 * time.Minute))
	at, ending, _ = s.deadline(false, 0)
	assert.Equal(t, time.Hour, at)
	assert.Equal(t, TotalTimeout, ending)

	at, ending, _ = s.deadline(true, 10*time.Second)
	assert.Equal(t, 25*time.Second, at, "after Finish only the exit grace applies")
	assert.Equal(t, Exited, ending)

	s.opts = Options{}
	_, _, ok = s.deadline(false, 0)
	assert.False(t, ok)
}

func TestActivityReaderStampsEveryRead(t *testing.T) {
	s := &Session{start: time.Now().Add(-time.Minute)}
	r := activityReader{r: strings.NewReader("partial line without newline"), s: s}
	buf := make([]byte, 4)
	n, err := r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.GreaterOrEqual(t, time.Duration(s.lastActivity.Load()), time.Minute)
	assert.Equal(t, int64(4), s.bytes.Load())
}

// hasWarning reports whether o carries a warning with the given code.
func hasWarning(ws []failure.Warning, code string) bool {
	return slices.ContainsFunc(ws, func(w failure.Warning) bool { return w.Code == code })
}

// TestSessionLineHandlerContract: what OnLine returns decides the run:
// nil goes on, ErrFinished starts the exit grace, any other error stops the
// tree at once with that error's kind, and OnLine is not called again.
func TestSessionLineHandlerContract(t *testing.T) {
	policy := failure.New(failure.Policy, "the tool shell is not allowed")
	tests := []struct {
		name     string
		onFirst  error // returned for the line "stop"
		ending   Ending
		kind     failure.Kind
		finished bool
		calls    int // OnLine calls for the three lines written
	}{
		{name: "nil goes on", onFirst: nil, ending: Exited, kind: "", calls: 3},
		{name: "ErrFinished starts the exit grace", onFirst: ErrFinished, ending: Exited, kind: "", finished: true, calls: 3},
		{name: "a wrapped ErrFinished counts", onFirst: fmt.Errorf("result seen: %w", ErrFinished), ending: Exited, finished: true, calls: 3},
		{name: "a failure aborts with its kind", onFirst: policy, ending: Aborted, kind: failure.Policy, calls: 1},
		{name: "a plain error aborts as other", onFirst: errors.New("handler gave up"), ending: Aborted, kind: failure.Unclassified, calls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			var calls atomic.Int32
			s := startFake(t, context.Background(), f, Options{StopGrace: time.Hour, ExitGrace: time.Hour, OnLine: func(line []byte) error {
				calls.Add(1)
				if string(line) == "stop" {
					return tt.onFirst
				}
				return nil
			}})
			_, err := io.WriteString(f.outW, "stop\nsecond\nthird\n")
			if tt.ending == Aborted {
				// The abort kills the fake, which closes its pipes: the
				// write may fail part way, and must not hang.
				o := waitOutcome(t, s)
				assert.Equal(t, Aborted, o.Ending)
				assert.Equal(t, tt.kind, failure.KindOf(o.Err))
				assert.Equal(t, StopForced, o.Stop)
				assert.EqualValues(t, tt.calls, calls.Load(), "OnLine is not called after its error")
				if tt.kind == failure.Policy {
					assert.Same(t, policy, o.Err, "the handler's own error is the verdict")
				}
				return
			}
			require.NoError(t, err)
			f.exit(exitStatus{code: 0})
			o := waitOutcome(t, s)
			assert.Equal(t, tt.ending, o.Ending)
			assert.NoError(t, o.Err)
			assert.Equal(t, tt.finished, o.Finished)
			assert.EqualValues(t, tt.calls, calls.Load())
		})
	}
}

// TestSessionAbortNil: an abort without an error still ends the run with a
// kind.
func TestSessionAbortNil(t *testing.T) {
	s := startFake(t, context.Background(), newFake(), Options{})
	s.Abort(nil)
	o := waitOutcome(t, s)
	assert.Equal(t, Aborted, o.Ending)
	assert.Equal(t, failure.Unclassified, failure.KindOf(o.Err))
}

// TestSessionLineModes: the three line modes over the same stream.
func TestSessionLineModes(t *testing.T) {
	const input = "one\r\ntwo\n" + "0123456789abcdef" + "\nlast"
	tests := []struct {
		mode LineMode
		want []string
	}{
		{TrimEndings, []string{"one", "two", "last"}},
		{KeepEndings, []string{"one\r\n", "two\n", "last"}},
		{PassThrough, []string{"one\r\n", "two\n", "0123456789abcdef\n", "last"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.mode), func(t *testing.T) {
			f := newFake()
			var got lineCollector
			var oversized []int64
			s := startFake(t, context.Background(), f, Options{Lines: tt.mode, MaxLineBytes: 8, OnLine: got.add,
				OnOversizedLine: func(n int64) { oversized = append(oversized, n) }})
			_, err := io.WriteString(f.outW, input)
			require.NoError(t, err)
			f.exit(exitStatus{code: 0})
			o := waitOutcome(t, s)
			require.NoError(t, o.Err)
			if tt.mode == PassThrough {
				assert.Equal(t, input, strings.Join(got.get(), ""), "a pass-through loses no byte")
			} else {
				assert.Equal(t, tt.want, got.get())
			}
			assert.Equal(t, []int64{16}, oversized)
			assert.True(t, hasWarning(o.Warnings, WarnOversizedLine), o.Warnings)
		})
	}
}
