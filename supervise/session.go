// Package supervise runs a launch plan as a child process and watches it
// until a verdict: it streams stdout line by line, keeps a bounded stderr
// tail, enforces the first-line, inactivity and total deadlines, honours
// cancellation, stops the whole process tree (polite request, grace, tree
// kill, sweep) and classifies how the run ended. It knows nothing about
// the child's output format.
//
// The caller steers a run only through what Options.OnLine returns for a
// line (nil, ErrFinished when the work is done, or an error that stops the
// tree at once), through ctx, and through Session.Abort from another
// goroutine, so nothing ever calls into a session that does not exist yet.
// Like os/exec, the zero Options is usable and a zero duration means none:
// no deadline, no grace before the tree kill.
//
// Reading never stops while the child lives, so a chatty child never
// blocks on a full pipe. Deadlines use one timer and the monotonic clock;
// the stdout hot path stores an atomic timestamp per read and allocates
// nothing per line. On Linux a stream that proves busy (megabytes within a
// fraction of a second) gets a 1 MiB pipe and read buffer once, so a fast
// agent costs fewer wake-ups; quiet sessions keep the default pipe, which
// matters because the kernel caps a user's total pipe memory.
package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

// child is what a Session needs of a started process. launchChild adapts
// *launch.Process; tests use fakes.
type child interface {
	// stdout and stderr are the read ends of the child's pipes, owned by
	// the Session, which closes them.
	stdout() io.ReadCloser
	stderr() io.ReadCloser
	// wait blocks until the direct child exits (never on the pipes).
	wait() exitStatus
	// terminate asks the whole group to stop (SIGTERM+SIGCONT, CTRL_BREAK).
	terminate() error
	// killTree forcefully kills the whole tree and sweeps leftovers. It is
	// idempotent and safe after the direct child exited.
	killTree() error
	// close kills whatever is left of the tree (like closing a kill-on-close
	// job), reaps the direct child and releases every handle. Idempotent.
	close() error
	// warnings are launch's own remarks (a fallback used, for example).
	warnings() []failure.Warning
	// pid is the direct child's process id.
	pid() int
}

// exitStatus is how the direct child ended.
type exitStatus struct {
	code   int   // exit code, -1 when killed by a signal
	signal int   // POSIX signal number, 0 when none
	err    error // waiting failed; code and signal are meaningless
}

// killWaitLimit bounds the wait for the direct child after a tree kill;
// past it the run ends with an error rather than hanging.
const killWaitLimit = 10 * time.Second

// pipeCloseWait is how long the pipes may take to reach EOF after the
// tree was killed before supervise closes its ends; a process the kill
// missed (one that escaped the group and the sweep) may still hold them.
const pipeCloseWait = 100 * time.Millisecond

// Session is one supervised child. Its methods are safe for concurrent use.
type Session struct {
	opts  Options
	ctx   context.Context
	c     child
	start time.Time

	// lastActivity and firstLine are nanoseconds since start, written by
	// the stdout reader and read by the single deadline timer.
	lastActivity atomic.Int64
	firstLine    atomic.Int64 // -1 until the first complete line
	bytes        atomic.Int64

	// firstLineCh is closed by the stdout reader on the first line, once,
	// so the control loop re-arms the timer for the inactivity deadline.
	firstLineCh chan struct{}

	finishOnce sync.Once
	finishCh   chan struct{}
	abortCh    chan error // capacity 1: the first abort wins
	// stopping is set once the control loop stops the tree: the stdout
	// reader then drops an unterminated last line (see lineSplitter).
	stopping atomic.Bool

	// Set by the reader goroutines before readersDone closes.
	lines, oversized int64
	tail             *tailRing

	done    chan struct{}
	outcome Outcome
}

// Start launches plan and supervises it until Wait returns. A launch
// failure is returned as a typed error (missing_cli, input, setup...) and
// nothing is left running; a ctx already done is a cancelled error.
// Cancelling ctx later stops the tree (graceful, then forced) and ends
// the run as Cancelled.
func Start(ctx context.Context, plan shim.Command, opts Options) (*Session, error) {
	return start(ctx, opts, func() (child, error) { return startLaunch(ctx, plan, opts) })
}

// Run is Start followed by Wait. A launch failure becomes an Outcome with
// Ending SpawnFailed and the typed error in Err. The supervision runs on
// the calling goroutine, so a run costs one goroutine less than Start.
func Run(ctx context.Context, plan shim.Command, opts Options) Outcome {
	s, supervise, err := newSession(ctx, opts, func() (child, error) { return startLaunch(ctx, plan, opts) })
	if err != nil {
		return NotStarted(err)
	}
	supervise()
	return s.Wait()
}

// NotStarted is the Outcome of a run whose child never started: Start's
// error err, Ending SpawnFailed (Cancelled for a failure.Cancelled err:
// the context ended first), exit code -1. Run returns it for a launch
// failure; a caller of Start builds its Outcome with it.
func NotStarted(err error) Outcome {
	ending := SpawnFailed
	if failure.Is(err, failure.Cancelled) {
		ending = Cancelled
	}
	return Outcome{Ending: ending, Err: err, ExitCode: -1, Stop: StopNone}
}

// start is Start with the process creation injected.
func start(ctx context.Context, opts Options, spawn func() (child, error)) (*Session, error) {
	s, supervise, err := newSession(ctx, opts, spawn)
	if err != nil {
		return nil, err
	}
	go supervise()
	return s, nil
}

// newSession starts the child and its readers, and returns the session and
// its control loop, for the caller to run on a goroutine of its choice.
func newSession(ctx context.Context, opts Options, spawn func() (child, error)) (*Session, func(), error) {
	if ctx.Err() != nil {
		return nil, nil, failure.Wrap(failure.Cancelled, context.Cause(ctx), "cancelled before the child started")
	}
	c, err := spawn()
	if err != nil {
		if failure.KindOf(err) == failure.Unclassified {
			err = failure.Wrap(failure.Unclassified, err, "starting the child")
		}
		return nil, nil, err
	}
	s := &Session{
		opts:        opts.normalized(),
		ctx:         ctx,
		c:           c,
		start:       time.Now(),
		finishCh:    make(chan struct{}),
		firstLineCh: make(chan struct{}),
		abortCh:     make(chan error, 1),
		done:        make(chan struct{}),
	}
	s.firstLine.Store(-1)
	s.tail = newTailRing(s.opts.StderrTailBytes)
	if opts.OnStarted != nil {
		opts.OnStarted(c.pid())
	}

	exitCh := make(chan exitStatus, 1)
	go func() { exitCh <- c.wait() }()
	// The last reader to finish closes readersDone (no goroutine of its
	// own waits for them: many sessions may run at once).
	readersDone := make(chan struct{})
	var readersLeft atomic.Int32
	readersLeft.Store(2)
	readerDone := func() {
		if readersLeft.Add(-1) == 0 {
			close(readersDone)
		}
	}
	go func() {
		defer readerDone()
		s.readStdout(c.stdout())
	}()
	go func() {
		defer readerDone()
		s.readStderr(c.stderr())
	}()
	return s, func() { s.supervise(exitCh, readersDone) }, nil
}

// finish marks the work done (OnLine returned ErrFinished): from now on only
// ExitGrace applies, after which a child still running is stopped with a
// late_close warning and the run still counts as a success; a cancel in
// that window stops it the same way. An abort still ends the run as
// Aborted. Calls after the first have no effect.
func (s *Session) finish() {
	s.finishOnce.Do(func() { close(s.finishCh) })
}

// Abort stops the whole tree at once (no grace) and ends the run as
// Aborted with err, whose failure kind the Outcome keeps (failure.Unclassified
// when it has none; a nil err is failure.Unclassified "aborted by the caller").
// Only the first abort counts, whether it came from here or from OnLine;
// one after the run ended has no effect. Abort is for another goroutine
// that must stop a run it started; the line handler returns its error
// instead.
func (s *Session) Abort(err error) {
	select {
	case s.abortCh <- err:
	default:
	}
}

// Wait waits for the verdict and returns it; every call returns the same
// Outcome. It returns promptly after a stop even when an escaped
// grandchild still holds the pipes: supervise then closes its ends. Once
// Wait returns, OnLine and OnOversizedLine are never called again.
func (s *Session) Wait() Outcome {
	<-s.done
	o := s.outcome
	o.Warnings = append([]failure.Warning(nil), o.Warnings...)
	return o
}

// finishCalled reports whether Finish was called.
func (s *Session) finishCalled() bool {
	select {
	case <-s.finishCh:
		return true
	default:
		return false
	}
}

// Done is closed when the verdict is ready.
func (s *Session) Done() <-chan struct{} { return s.done }

// since returns the monotonic time elapsed since start.
func (s *Session) since() time.Duration { return time.Since(s.start) }

// activityReader stamps every successful stdout read: bytes still arriving
// within a long line count as activity.
type activityReader struct {
	r io.Reader
	s *Session
}

func (a activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.s.bytes.Add(int64(n))
		a.s.lastActivity.Store(int64(a.s.since()))
	}
	return n, err
}

func (s *Session) readStdout(r io.Reader) {
	if r == nil {
		return
	}
	first := false
	markFirst := func() {
		if !first {
			first = true
			s.firstLine.Store(int64(s.since()))
			close(s.firstLineCh)
		}
	}
	onLine, onOversize := s.opts.OnLine, s.opts.OnOversizedLine
	ls := &lineSplitter{
		max:        s.opts.MaxLineBytes,
		keepEnding: s.opts.Lines == KeepEndings || s.opts.Lines == PassThrough,
		passLong:   s.opts.Lines == PassThrough,
		onLine: func(line []byte) {
			markFirst()
			if onLine == nil {
				return
			}
			switch err := onLine(line); {
			case err == nil:
			case errors.Is(err, ErrFinished):
				s.finish()
			default:
				onLine = nil // the run is over for the handler
				s.Abort(err)
			}
		},
		onOversize: func(size int64) {
			markFirst()
			if onOversize != nil {
				onOversize(size)
			}
		},
		onDrained: s.opts.OnDrained,
		cutShort:  s.stopping.Load,
		growth: &pipeGrowth{
			grow: func(size int) int { return growPipe(r, size) },
			now:  s.since,
		},
	}
	s.lines, s.oversized = ls.run(activityReader{r: r, s: s})
}

// Stderr read buffer sizes: most children write little or nothing there,
// and many sessions may run at once, so reading starts small; a read that
// fills the buffer means a chatty child, and the buffer grows for it.
const (
	initialStderrBuffer = 1 << 10
	maxStderrBuffer     = 32 << 10
)

func (s *Session) readStderr(r io.Reader) {
	if r == nil {
		return
	}
	buf := make([]byte, initialStderrBuffer)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = s.tail.Write(buf[:n])
			if s.opts.Stderr != nil {
				_, _ = s.opts.Stderr.Write(buf[:n])
			}
		}
		if err != nil {
			return
		}
		if n == len(buf) && len(buf) < maxStderrBuffer {
			buf = make([]byte, maxStderrBuffer)
		}
	}
}

// verdict is what the control loop decided, before the outcome is built.
type verdict struct {
	ending   Ending
	err      error
	status   exitStatus
	stop     StopResult
	stopTook time.Duration
	finished bool
	// lateClose: the exit grace after Finish ran out and supervise stopped
	// the child; the run stays a success.
	lateClose bool
	warnings  []failure.Warning
}

// supervise is the control loop: it owns the one deadline timer and every
// decision, then drains, sweeps and publishes the outcome.
func (s *Session) supervise(exitCh <-chan exitStatus, readersDone <-chan struct{}) {
	v := s.watch(exitCh)
	v.warnings = append(v.warnings, s.drain(readersDone, v.stop != StopNone)...)
	s.publish(v)
}

// watch waits for the child to exit or for a reason to stop it.
func (s *Session) watch(exitCh <-chan exitStatus) verdict {
	var v verdict
	finishCh, firstLineCh := s.finishCh, s.firstLineCh
	var finishedAt time.Duration
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	s.arm(timer, v.finished, finishedAt)
	for {
		select {
		case v.status = <-exitCh:
			v.ending = Exited
			v.stop = StopNone
			return v
		case <-timer.C:
			ending, err := s.expired(v.finished, finishedAt)
			if ending == "" {
				s.arm(timer, v.finished, finishedAt)
				continue
			}
			grace := nonNegative(s.opts.StopGrace)
			s.stopTree(&v, exitCh, grace)
			if v.stop == StopAlreadyExited {
				v.ending = Exited
				return v
			}
			if ending == Exited { // the exit grace after Finish ran out
				v.ending, v.lateClose = Exited, true
				v.warnings = append(v.warnings, failure.Warning{Code: WarnLateClose, Message: fmt.Sprintf("the child was still running %s after the work finished; stopped it", nonNegative(s.opts.ExitGrace))})
				return v
			}
			v.ending, v.err = ending, err
			return v
		case <-s.ctx.Done():
			s.stopTree(&v, exitCh, s.opts.StopGrace)
			if v.stop == StopAlreadyExited {
				v.ending = Exited
				return v
			}
			// Finish may not have been through the loop yet: ask it directly.
			if s.finishCalled() { // the work was done; only the exit was pending
				v.finished = true
				v.ending, v.lateClose = Exited, true
				v.warnings = append(v.warnings, failure.Warning{Code: WarnLateClose, Message: "cancelled while the child was still running after the work finished; stopped it"})
				return v
			}
			v.ending = Cancelled
			v.err = failure.Wrap(failure.Cancelled, context.Cause(s.ctx), "cancelled")
			return v
		case <-firstLineCh:
			firstLineCh = nil
			s.arm(timer, v.finished, finishedAt)
		case <-finishCh:
			finishCh = nil
			v.finished = true
			finishedAt = s.since()
			s.arm(timer, v.finished, finishedAt)
		case err := <-s.abortCh:
			s.stopTree(&v, exitCh, 0)
			v.ending = Aborted
			v.err = abortError(err)
			return v
		}
	}
}

// abortError is the run's error for an abort with err: err itself when it
// carries a failure kind, else err wrapped as failure.Unclassified.
func abortError(err error) error {
	if err == nil {
		return failure.New(failure.Unclassified, "aborted by the caller")
	}
	var fe *failure.Error
	if errors.As(err, &fe) && fe.Kind.Valid() {
		return err
	}
	return failure.Wrap(failure.Unclassified, err, "aborted")
}

// deadline returns the earliest active deadline (nanoseconds since start)
// and the ending it means, or ok false when none is active.
func (s *Session) deadline(finished bool, finishedAt time.Duration) (at time.Duration, ending Ending, ok bool) {
	consider := func(d time.Duration, e Ending) {
		if !ok || d < at {
			at, ending, ok = d, e, true
		}
	}
	if finished {
		consider(finishedAt+nonNegative(s.opts.ExitGrace), Exited)
		return at, ending, ok
	}
	firstPending := s.opts.FirstLineTimeout > 0 && s.firstLine.Load() < 0
	if firstPending {
		consider(s.opts.FirstLineTimeout, FirstLineTimeout)
	}
	if d := s.opts.IdleTimeout; d > 0 && !firstPending {
		consider(time.Duration(s.lastActivity.Load())+d, IdleTimeout)
	}
	if d := s.opts.TotalTimeout; d > 0 {
		consider(d, TotalTimeout)
	}
	return at, ending, ok
}

// arm sets the one timer to the earliest active deadline.
func (s *Session) arm(timer *time.Timer, finished bool, finishedAt time.Duration) {
	timer.Stop()
	at, _, ok := s.deadline(finished, finishedAt)
	if !ok {
		return
	}
	timer.Reset(max(at-s.since(), 0))
}

// expired re-checks the deadlines when the timer fires: activity may have
// moved the inactivity deadline since the timer was armed.
func (s *Session) expired(finished bool, finishedAt time.Duration) (Ending, error) {
	at, ending, ok := s.deadline(finished, finishedAt)
	if !ok || at > s.since() {
		return "", nil
	}
	switch ending {
	case FirstLineTimeout:
		return ending, failure.New(failure.Timeout, "no stdout line within %s (first-line deadline)", s.opts.FirstLineTimeout)
	case IdleTimeout:
		return ending, failure.New(failure.Timeout, "no stdout output for %s (inactivity deadline)", s.opts.IdleTimeout)
	case TotalTimeout:
		return ending, failure.New(failure.Timeout, "still running after %s (total deadline)", s.opts.TotalTimeout)
	}
	return ending, nil
}

// stopTree stops the whole tree and waits for the direct child: the polite
// request, up to grace for the child to exit, then the tree kill. A grace
// of zero or less kills at once; an Abort during the grace does too.
func (s *Session) stopTree(v *verdict, exitCh <-chan exitStatus, grace time.Duration) {
	s.stopping.Store(true)
	decided := time.Now()
	defer func() {
		if v.stop != StopAlreadyExited {
			// Never zero, which means "no stop", even on a coarse clock.
			v.stopTook = max(time.Since(decided), time.Nanosecond)
		}
	}()
	select {
	case v.status = <-exitCh:
		v.stop = StopAlreadyExited
		return
	default:
	}
	if grace > 0 {
		err := s.c.terminate()
		switch {
		case errors.Is(err, os.ErrProcessDone):
			// Nothing left to ask: the child exited and Wait will say so.
			t := time.NewTimer(killWaitLimit)
			select {
			case v.status = <-exitCh:
				t.Stop()
				v.stop = StopAlreadyExited
				return
			case <-t.C:
			}
		case err != nil:
			v.warnings = append(v.warnings, failure.Warning{Code: warnStopFailed, Message: "the polite stop failed, killing the tree: " + err.Error()})
		default:
			t := time.NewTimer(grace)
			select {
			case v.status = <-exitCh:
				t.Stop()
				// What is left of the group dies in drain's close.
				v.stop = StopGraceful
				return
			case <-t.C:
			case <-s.abortCh:
				t.Stop()
			}
		}
	}
	v.stop = StopForced
	s.sweep(v)
	t := time.NewTimer(killWaitLimit)
	defer t.Stop()
	select {
	case v.status = <-exitCh:
	case <-t.C:
		v.status = exitStatus{code: -1, err: failure.New(failure.Process, "the child did not exit within %s of the tree kill", killWaitLimit)}
		v.warnings = append(v.warnings, failure.Warning{Code: warnKillFailed, Message: v.status.err.Error()})
	}
}

// sweep kills the whole tree, recording a failure as a warning.
func (s *Session) sweep(v *verdict) {
	if err := s.c.killTree(); err != nil {
		v.warnings = append(v.warnings, failure.Warning{Code: warnKillFailed, Message: "the tree kill: " + err.Error()})
	}
}

// drain lets the readers reach EOF after the child exited, then has the
// tree killed and the pipes closed, so that nothing the child started
// outlives the verdict and Wait cannot hang on a pipe held by an escapee.
// After a natural exit the pipes get DrainGrace (at least pipeCloseWait);
// after a stop the tree was already killed, so they only get pipeCloseWait.
func (s *Session) drain(readersDone <-chan struct{}, stopped bool) []failure.Warning {
	var v verdict
	held := false
	if !stopped {
		held = !s.waitReaders(readersDone, max(s.opts.DrainGrace, pipeCloseWait), true)
		if held {
			s.sweep(&v) // kill the holders; their ends close with them
		}
	}
	if !s.waitReaders(readersDone, pipeCloseWait, false) {
		held = true
		if r := s.c.stdout(); r != nil {
			_ = r.Close()
		}
		if r := s.c.stderr(); r != nil {
			_ = r.Close()
		}
		<-readersDone
	}
	if held {
		v.warnings = append(v.warnings, failure.Warning{Code: WarnPipesHeld, Message: "a process outside the child kept its output pipes open after it exited"})
	}
	// close kills whatever is left of the tree, reaps and releases.
	if err := s.c.close(); err != nil {
		v.warnings = append(v.warnings, failure.Warning{Code: warnKillFailed, Message: "releasing the process: " + err.Error()})
	}
	return v.warnings
}

// waitReaders waits up to d for both readers to finish; with interruptible
// a cancel or Abort cuts the wait short.
func (s *Session) waitReaders(readersDone <-chan struct{}, d time.Duration, interruptible bool) bool {
	select {
	case <-readersDone:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	var ctxDone <-chan struct{}
	var abortCh <-chan error
	if interruptible {
		ctxDone, abortCh = s.ctx.Done(), s.abortCh
	}
	select {
	case <-readersDone:
		return true
	case <-t.C:
	case <-ctxDone:
	case <-abortCh:
	}
	return false
}

// publish builds the Outcome and releases Wait.
func (s *Session) publish(v verdict) {
	o := Outcome{
		Ending:     v.ending,
		Err:        v.err,
		ExitCode:   v.status.code,
		Signal:     v.status.signal,
		Stop:       v.stop,
		StopTook:   v.stopTook,
		Duration:   s.since(),
		Lines:      s.lines,
		Bytes:      s.bytes.Load(),
		StderrTail: s.tail.String(),
		Finished:   s.finishCalled(),
	}
	if first := s.firstLine.Load(); first >= 0 {
		// A coarse clock (Windows) can read zero; zero means "no line".
		o.TimeToFirstLine = max(time.Duration(first), time.Nanosecond)
	}
	if o.Stop == "" {
		o.Stop = StopNone
	}
	if o.Ending == Exited && v.err == nil && !v.lateClose {
		o.Err = exitError(v.status)
	}
	o.Warnings = append(o.Warnings, s.c.warnings()...)
	if s.oversized > 0 {
		o.Warnings = append(o.Warnings, failure.Warning{Code: WarnOversizedLine, Message: fmt.Sprintf("%d stdout line(s) longer than %d bytes skipped", s.oversized, s.opts.MaxLineBytes)})
	}
	o.Warnings = append(o.Warnings, v.warnings...)
	s.outcome = o
	close(s.done)
}

// exitError classifies a child that ended by itself.
func exitError(st exitStatus) error {
	switch {
	case st.err != nil:
		return failure.Wrap(failure.Process, st.err, "waiting for the child")
	case st.signal != 0:
		return failure.New(failure.Died, "the child died of signal %d, which cursorkit did not send", st.signal)
	case st.code != 0:
		return failure.New(failure.Process, "the child exited with code %d", st.code)
	}
	return nil
}
