// Package supervise runs a launch plan as a child process and watches it
// until a verdict: stdout line by line, a bounded stderr tail, the
// first-line, inactivity and total deadlines, cancellation, the stop of the
// whole tree (polite request, grace, tree kill, sweep). It knows nothing of
// the output's format. The caller steers a run only through what
// Options.OnLine returns, ctx and Session.Abort. Reading never stops while
// the child lives, so it never blocks on a full pipe; the stdout hot path
// allocates nothing per line, and on Linux a busy stream gets a 1 MiB pipe
// (see hotStream).
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

// child is what a Session needs of *launch.Process (launchChild) or a fake.
type child interface {
	stdout() io.ReadCloser // read ends, which the Session closes
	stderr() io.ReadCloser
	wait() exitStatus // the direct child's exit, never the pipes'
	terminate() error
	killTree() error // idempotent, safe after the child exited
	close() error    // kills what is left, reaps, releases; idempotent
	warnings() []failure.Warning
	pid() int
}

// exitStatus is how the direct child ended; with err, waiting failed.
type exitStatus struct {
	code, signal int // code -1 for a signal
	err          error
}

// killWaitLimit bounds the wait for the child after a tree kill, not to hang.
const killWaitLimit = 10 * time.Second

// pipeCloseWait is how long the pipes may take to reach EOF after the tree
// was killed before supervise closes its ends: an escapee may hold them.
const pipeCloseWait = 100 * time.Millisecond

// Session is one supervised child. Its methods are safe for concurrent use.
type Session struct {
	opts  Options
	ctx   context.Context
	c     child
	start time.Time

	// Nanoseconds since start, written by the stdout reader, read by the timer.
	lastActivity atomic.Int64
	firstLine    atomic.Int64 // -1 until the first complete line
	bytes        atomic.Int64

	firstLineCh chan struct{} // closed on the first line: re-arm the timer

	finishOnce sync.Once
	finishCh   chan struct{}
	abortCh    chan error  // capacity 1: the first abort wins
	stopping   atomic.Bool // the tree is being stopped: drop an unterminated last line

	lines, oversized int64 // set by the stdout reader before readersDone
	tail             *tailRing

	done    chan struct{}
	outcome Outcome
	err     error
}

// Start launches plan and supervises it until Wait returns. A launch
// failure is a typed error (missing_cli, input, setup...; cancelled for a
// ctx already done) and nothing is left running. Cancelling ctx later
// stops the tree and ends the run as Cancelled.
func Start(ctx context.Context, plan shim.Command, opts Options) (*Session, error) {
	return start(ctx, opts, func() (child, error) { return startLaunch(ctx, plan, opts) })
}

// Run is Start followed by Wait, supervising on the calling goroutine (one
// goroutine less than Start). A launch failure is NotStarted's Outcome with
// Start's error.
func Run(ctx context.Context, plan shim.Command, opts Options) (Outcome, error) {
	s, supervise, err := newSession(ctx, opts, func() (child, error) { return startLaunch(ctx, plan, opts) })
	if err != nil {
		return NotStarted(err), err
	}
	supervise()
	return s.Wait()
}

// NotStarted is the Outcome of a run whose child never started with
// Start's error err: Ending SpawnFailed (Cancelled for a failure.Cancelled
// err), exit code -1.
func NotStarted(err error) Outcome {
	ending := SpawnFailed
	if failure.Is(err, failure.Cancelled) {
		ending = Cancelled
	}
	return Outcome{Ending: ending, ExitCode: -1, Stop: StopNone}
}

// start is Start with the process creation injected (tests).
func start(ctx context.Context, opts Options, spawn func() (child, error)) (*Session, error) {
	s, supervise, err := newSession(ctx, opts, spawn)
	if err != nil {
		return nil, err
	}
	go supervise()
	return s, nil
}

// newSession starts the child and its readers and returns its control loop.
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
	// The last reader to finish closes readersDone, not a goroutine of its own.
	readersDone := make(chan struct{})
	var readersLeft atomic.Int32
	readersLeft.Store(2)
	for _, read := range []func(){func() { s.readStdout(c.stdout()) }, func() { s.readStderr(c.stderr()) }} {
		go func() {
			read()
			if readersLeft.Add(-1) == 0 {
				close(readersDone)
			}
		}()
	}
	return s, func() { s.supervise(exitCh, readersDone) }, nil
}

// finish marks the work done (see ErrFinished); an abort still wins.
func (s *Session) finish() {
	s.finishOnce.Do(func() { close(s.finishCh) })
}

// Abort stops the whole tree at once and ends the run as Aborted with err,
// whose failure kind the Outcome keeps (failure.Unclassified without one; a
// nil err is "aborted by the caller"). Only the first abort counts, from
// here or from OnLine; one after the run ended has no effect. It is for
// another goroutine; the line handler returns its error instead.
func (s *Session) Abort(err error) {
	select {
	case s.abortCh <- err:
	default:
	}
}

// Wait waits for the verdict and returns it, with the run's error: nil
// when the child exited 0 by itself or was late-closed; otherwise its
// failure kind is timeout, cancelled, process (a non-zero exit), died (a
// signal supervise did not send) or Abort's. Every call returns the same.
// It returns promptly after a stop even when an escapee holds the pipes.
// Once Wait returns, OnLine and OnOversizedLine are never called again.
func (s *Session) Wait() (Outcome, error) {
	<-s.done
	o := s.outcome
	o.Warnings = append([]failure.Warning(nil), o.Warnings...)
	return o, s.err
}

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

func (s *Session) since() time.Duration { return time.Since(s.start) }

// activityReader stamps every stdout read: a long line's bytes are activity.
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
	seen := false // only this reader writes firstLine
	markFirst := func() {
		if !seen {
			seen = true
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

// Stderr read buffer sizes: most children write little there and many
// sessions run at once, so reading starts small until a read fills it.
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
	ending    Ending
	err       error
	status    exitStatus
	stop      StopResult
	stopTook  time.Duration
	lateClose bool // stopped after the work finished: still a success
	warnings  []failure.Warning
}

// supervise, the control loop, owns the one timer and every decision.
func (s *Session) supervise(exitCh <-chan exitStatus, readersDone <-chan struct{}) {
	v := s.watch(exitCh)
	s.drain(&v, readersDone)
	s.publish(v)
}

// watch waits for the child to exit or for a reason to stop it.
func (s *Session) watch(exitCh <-chan exitStatus) verdict {
	var v verdict
	finishCh, firstLineCh := s.finishCh, s.firstLineCh
	finished, finishedAt := false, time.Duration(0)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.arm(timer, finished, finishedAt)
		select {
		case v.status = <-exitCh:
			v.ending, v.stop = Exited, StopNone
			return v
		case <-timer.C:
			ending, err := s.expired(finished, finishedAt)
			if ending == "" {
				continue
			}
			v = s.stopFor(v, exitCh, s.opts.StopGrace, ending, err)
			if ending == Exited && v.stop != StopAlreadyExited { // the exit grace ran out
				v.closeLate(fmt.Sprintf("the child was still running %s after the work finished; stopped it", max(s.opts.ExitGrace, 0)))
			}
			return v
		case <-s.ctx.Done():
			v = s.stopFor(v, exitCh, s.opts.StopGrace, Cancelled, failure.Wrap(failure.Cancelled, context.Cause(s.ctx), "cancelled"))
			// Finish may not have been through the loop yet: ask it directly.
			if v.stop != StopAlreadyExited && s.finishCalled() {
				v.closeLate("cancelled while the child was still running after the work finished; stopped it")
			}
			return v
		case <-firstLineCh:
			firstLineCh = nil
		case <-finishCh:
			finishCh = nil
			finished, finishedAt = true, s.since()
		case err := <-s.abortCh:
			s.stopTree(&v, exitCh, 0)
			v.ending, v.err = Aborted, abortError(err)
			return v
		}
	}
}

// stopFor stops the tree for ending and err, unless the child exited first.
func (s *Session) stopFor(v verdict, exitCh <-chan exitStatus, grace time.Duration, ending Ending, err error) verdict {
	s.stopTree(&v, exitCh, grace)
	if v.stop == StopAlreadyExited {
		ending, err = Exited, nil
	}
	v.ending, v.err = ending, err
	return v
}

// closeLate makes v a success whose child was stopped after the work was
// finished, saying why in a late_close warning.
func (v *verdict) closeLate(why string) {
	v.ending, v.err, v.lateClose = Exited, nil, true
	v.warnings = append(v.warnings, failure.Warning{Code: WarnLateClose, Message: why})
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
		consider(finishedAt+max(s.opts.ExitGrace, 0), Exited)
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
	if st, ok := receiveWithin(exitCh, 0, nil, nil); ok {
		v.status, v.stop = st, StopAlreadyExited
		return
	}
	if grace > 0 {
		switch err := s.c.terminate(); {
		case errors.Is(err, os.ErrProcessDone):
			// Nothing left to ask: the child exited and Wait will say so.
			if st, ok := receiveWithin(exitCh, killWaitLimit, nil, nil); ok {
				v.status, v.stop = st, StopAlreadyExited
				return
			}
		case err != nil:
			v.warnings = append(v.warnings, failure.Warning{Code: warnStopFailed, Message: "the polite stop failed, killing the tree: " + err.Error()})
		default:
			if st, ok := receiveWithin(exitCh, grace, nil, s.abortCh); ok {
				// What is left of the group dies in drain's close.
				v.status, v.stop = st, StopGraceful
				return
			}
		}
	}
	v.stop = StopForced
	s.sweep(v)
	if st, ok := receiveWithin(exitCh, killWaitLimit, nil, nil); ok {
		v.status = st
		return
	}
	v.status = exitStatus{code: -1, err: failure.New(failure.Process, "the child did not exit within %s of the tree kill", killWaitLimit)}
	v.warnings = append(v.warnings, failure.Warning{Code: warnKillFailed, Message: v.status.err.Error()})
}

// receiveWithin waits up to d for a value from ch (a closed ch counts); a
// receive from cancel or abort cuts the wait short.
func receiveWithin[T any](ch <-chan T, d time.Duration, cancel <-chan struct{}, abort <-chan error) (v T, ok bool) {
	select {
	case v = <-ch:
		return v, true
	default:
	}
	if d <= 0 {
		return v, false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case v = <-ch:
		return v, true
	case <-t.C:
	case <-cancel:
	case <-abort:
	}
	return v, false
}

// sweep kills the whole tree, recording a failure as a warning.
func (s *Session) sweep(v *verdict) {
	if err := s.c.killTree(); err != nil {
		v.warnings = append(v.warnings, failure.Warning{Code: warnKillFailed, Message: "the tree kill: " + err.Error()})
	}
}

// drain lets the readers reach EOF after the child exited, then has the
// tree killed and the pipes closed, so nothing the child started outlives
// the verdict and Wait cannot hang on a pipe an escapee holds. After a
// natural exit the pipes get DrainGrace (at least pipeCloseWait); after a
// stop, which killed the tree, only pipeCloseWait.
func (s *Session) drain(v *verdict, readersDone <-chan struct{}) {
	held := false
	if v.stop == StopNone {
		_, drained := receiveWithin(readersDone, max(s.opts.DrainGrace, pipeCloseWait), s.ctx.Done(), s.abortCh)
		if held = !drained; held {
			s.sweep(v) // kill the holders; their ends close with them
		}
	}
	if _, drained := receiveWithin(readersDone, pipeCloseWait, nil, nil); !drained {
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
}

func (s *Session) publish(v verdict) {
	o := Outcome{
		Ending:     v.ending,
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
	err := v.err
	if o.Ending == Exited && err == nil && !v.lateClose {
		err = exitError(v.status)
	}
	o.Warnings = append(o.Warnings, s.c.warnings()...)
	if s.oversized > 0 {
		o.Warnings = append(o.Warnings, failure.Warning{Code: WarnOversizedLine, Message: fmt.Sprintf("%d stdout line(s) longer than %d bytes skipped", s.oversized, s.opts.MaxLineBytes)})
	}
	o.Warnings = append(o.Warnings, v.warnings...)
	s.outcome, s.err = o, err
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
