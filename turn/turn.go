// Package turn drives one turn of an agent CLI: it starts a launch plan
// under supervision with the prompt on the agent's stdin, feeds every
// stdout line to the backend's Decoder, hands each event to the caller,
// stops the whole process tree at once when the decoder fails the turn
// (and after a deadline or a cancel), and returns the turn's Outcome only
// once nothing the agent started is left running.
//
// It knows no agent by name: a backend (package cursor) provides the plan
// and the Decoder that understands its stream; the events are package
// event's, whatever the agent.
package turn

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
)

// Decoder reads one turn's stdout, line by line. It is used from one
// goroutine at a time.
type Decoder interface {
	// Feed decodes the next stdout line (its terminator trimmed) into the
	// events it yields, in order. A non-nil error, a *failure.Error of kind
	// failure.Protocol or failure.Policy, fails the turn: Run stops the
	// whole tree at once. Feed is not called again after an error.
	Feed(line []byte) ([]event.Event, error)
	// Done reports that the turn's last event (the agent's result) has
	// arrived: the agent then gets its exit grace to exit by itself.
	Done() bool
	// End returns the turn's verdict once the agent exited by itself with
	// exitCode (stderrTail is the end of what it wrote there): nil, or the
	// failure the stream or the exit means. It is not called when the
	// agent was stopped: the reason it was stopped is the verdict then.
	End(exitCode int, stderrTail string) error
}

// StderrDecoder is a Decoder that also reads the agent's stderr, for what
// an agent says only there (Gemini CLI's retry notices). Run feeds it
// each stderr line, cut to maxStderrLine bytes, never at the same time
// as Feed: the events of both reach OnEvent one at a time, each in the
// order its stream said it (the two streams' order between them is the
// order their lines were read).
type StderrDecoder interface {
	Decoder
	// FeedStderr decodes one stderr line (terminator trimmed) into
	// events. It must not fail: stderr is the agent's prose.
	FeedStderr(line []byte) []event.Event
}

// maxStderrLine bounds a stderr line fed to a StderrDecoder: the rest of
// a longer line is dropped.
const maxStderrLine = 4 << 10

// Options configure how a turn is supervised. Zero durations are off; an
// agent needs a first-line and an inactivity deadline (a backend's
// defaults, such as cursor.TurnDefaults, carry them).
type Options struct {
	// Dir is the agent's working directory ("" is this process's) and Env
	// its complete environment (nil is this process's).
	Dir string
	Env []string
	// FirstLineTimeout bounds the wait for the first stdout line,
	// IdleTimeout the silence between lines, TotalTimeout the whole turn.
	FirstLineTimeout time.Duration
	IdleTimeout      time.Duration
	TotalTimeout     time.Duration
	// StopGrace is the wait between the polite stop request and the tree
	// kill after a deadline or a cancel; ExitGrace is how long the agent
	// may take to exit after its result before it is stopped with a
	// late_close warning (the turn still succeeds).
	StopGrace time.Duration
	ExitGrace time.Duration
	// OnEvent receives every event, in order, one call at a time (from the
	// stdout reader, and for a StderrDecoder also from the stderr reader),
	// before the next line is read: it must not block for long, or it
	// holds up reading both streams. The events of a spawn failure are
	// never delivered (there are none).
	OnEvent func(event.Event)
	// OnDrained, when set, is called, never at the same time as OnEvent,
	// whenever every stdout byte read so far has been decoded, and after
	// the events of a stderr line: a caller that buffers what it writes
	// for each event flushes there, so output leaves promptly yet a burst
	// of events costs one write.
	OnDrained func()
	// OnStarted, when set, is called once with the agent's PID (its direct
	// process: a shim's cmd.exe or PowerShell on Windows) before its output
	// is read; it must be quick (supervise.Options.OnStarted).
	OnStarted func(pid int)
	// StopAtRetry, when set, is asked at each retry notice of the agent
	// (a warning with a Retry, after OnEvent has it); when it returns
	// true the whole tree is stopped at once and the turn fails with the
	// retry's kind (Outcome.StoppedAtRetry), instead of waiting out the
	// agent's own retries: a fallback can answer sooner.
	StopAtRetry func(event.Retry) bool
}

// Defaults returns the supervision of a turn whose agent must print its
// first stdout line within firstLine and never stay silent longer than
// idle: no total bound, and the supervisor's default stop and exit graces
// (supervise.DefaultStopGrace, supervise.DefaultExitGrace). A backend's
// TurnDefaults is this with its own deadlines.
func Defaults(firstLine, idle time.Duration) Options {
	return Options{
		FirstLineTimeout: firstLine,
		IdleTimeout:      idle,
		StopGrace:        supervise.DefaultStopGrace,
		ExitGrace:        supervise.DefaultExitGrace,
	}
}

// Outcome statuses.
const (
	StatusDone      = "done"
	StatusError     = "error"
	StatusCancelled = "cancelled"
)

// Outcome is the verdict on a turn and what the caller needs to go on:
// the session to resume, the model that answered, the usage, every
// warning. It marshals as the last line of `cursorkit run --json`
// (docs/contract.md).
type Outcome struct {
	// Status is StatusDone, StatusError or StatusCancelled.
	Status string
	// Kind is the failure kind, "" when done; Message is the failure's
	// bounded text for people, "" when done.
	Kind    failure.Kind
	Message string
	// SessionID is the id to resume the session with, "" when the agent
	// reported none; Model is the model that answered as the result names
	// it, else the model the init event named.
	SessionID string
	Model     string
	// Usage is the result's token usage, exactly as reported.
	Usage event.Usage
	// Warnings are the decoder's and the supervisor's, in order.
	Warnings []event.Warning
	// StoppedAtRetry reports that the turn was stopped at a retry notice
	// of the agent (Options.StopAtRetry).
	StoppedAtRetry bool
	// Process is how the agent's process ended: exit code, signal, which
	// deadline fired, how long stopping it took, the stderr tail.
	Process supervise.Outcome
}

// Refused is the outcome of a turn refused before anything started (its
// argv, plan or decoder could not be made, its session is closed): the
// status error, or cancelled for a failure.Cancelled err, err's kind and
// text, no warnings, and a Process that says nothing was spawned
// (supervise.SpawnFailed, exit code -1), as Run's own spawn failure does.
func Refused(err error) Outcome {
	o := Outcome{Status: StatusError, Kind: failure.KindOf(err), Message: err.Error(), Warnings: []event.Warning{},
		Process: supervise.Outcome{Ending: supervise.SpawnFailed, ExitCode: -1, Stop: supervise.StopNone}}
	if o.Kind == failure.Cancelled {
		o.Status = StatusCancelled
	}
	return o
}

// maxMessage bounds Outcome.Message.
const maxMessage = 1000

// Run runs one turn of plan: prompt written to the agent's stdin (which is
// then closed; the prompt never travels in arguments or the environment),
// every stdout line fed to
// dec and its events handed to opts.OnEvent, the tree stopped at once when
// dec fails the turn, and the exit grace once dec is Done. It returns when
// the whole process tree is gone. The error is nil exactly when the
// Outcome's status is done; otherwise it carries the failure kind (also
// when the plan could not be started at all: Outcome.Process.Ending is
// then supervise.SpawnFailed and no event was delivered).
func Run(ctx context.Context, plan shim.Command, prompt string, dec Decoder, opts Options) (Outcome, error) {
	t := &live{dec: dec, guard: newWithhold(prompt), onEvent: opts.OnEvent, onDrained: opts.OnDrained, stopAtRetry: opts.StopAtRetry}
	sopts := supervise.Options{
		Dir:              opts.Dir,
		Env:              opts.Env,
		Stdin:            strings.NewReader(prompt),
		FirstLineTimeout: opts.FirstLineTimeout,
		IdleTimeout:      opts.IdleTimeout,
		TotalTimeout:     opts.TotalTimeout,
		StopGrace:        opts.StopGrace,
		ExitGrace:        opts.ExitGrace,
		DrainGrace:       drainGrace,
		OnLine:           t.line,
		OnStarted:        opts.OnStarted,
		OnOversizedLine: func(size int64) {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.emit(event.Event{Type: event.TypeWarning, Warning: &event.Warning{
				Code: supervise.WarnOversizedLine, Message: "skipped a stdout line of " + strconv.FormatInt(size, 10) + " bytes"}})
		},
	}
	if opts.OnDrained != nil {
		sopts.OnDrained = t.drained
	}
	var (
		o    supervise.Outcome
		oErr error
	)
	if sd, ok := dec.(StderrDecoder); ok {
		// A stop decided on stderr is an Abort of the session, so this
		// turn keeps it (supervise.Run would not hand it out).
		sopts.Stderr = &lineWriter{max: maxStderrLine, line: func(line []byte) { t.stderrLine(sd, line) }}
		s, err := supervise.Start(ctx, plan, sopts)
		if err != nil {
			o, oErr = supervise.NotStarted(err), err
		} else {
			t.started(s)
			o, oErr = s.Wait()
		}
	} else {
		o, oErr = supervise.Run(ctx, plan, sopts)
	}
	return t.end(o, oErr)
}

// end decides the turn that ended as o with the supervisor's error runErr
// and returns its outcome, with the supervisor's warnings delivered and
// nothing of the prompt in it.
func (t *live) end(o supervise.Outcome, runErr error) (Outcome, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.over = true
	err := t.guard.error(t.verdict(o, runErr))
	if t.guard.holdsString(o.StderrTail) {
		o.StderrTail = withheld
	}
	if o.Ending != supervise.SpawnFailed {
		for _, w := range o.Warnings {
			if w.Code == supervise.WarnOversizedLine {
				continue // each line already had its own warning event
			}
			t.emit(event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: w.Code, Message: w.Message}})
		}
	}
	return t.outcome(err, o), err
}

// drainGrace is how long the agent's pipes may stay open after it exited
// (held by a helper it left) before the helper is killed.
const drainGrace = 2 * time.Second

// turn is the state Run keeps while the agent runs: the OnLine handler,
// the stderr lines' handler, and what the Outcome needs from the events.
// mu serializes the two handlers: the decoder and OnEvent see one line at
// a time.
type live struct {
	dec         Decoder
	guard       withhold
	onEvent     func(event.Event)
	onDrained   func()
	stopAtRetry func(event.Retry) bool

	mu      sync.Mutex
	session *supervise.Session // set once started, for a stop from stderr
	// over: the run ended. A stderr reader can still be writing after
	// Wait returned (a helper of the agent held stderr past the drain
	// grace, and supervise closed its end while the reader was in a
	// Write): its lines are dropped.
	over      bool
	failed    error // the decoder's error or the stop at a retry, sticky
	retryStop bool  // failed is the stop at a retry
	sessionID string
	model     string // the init event's
	answered  string // the result's
	usage     event.Usage
	warnings  []event.Warning
}

// started records the running session; a stop decided from stderr before
// it was known is carried out now.
func (t *live) started(s *supervise.Session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.session = s
	if t.failed != nil {
		s.Abort(t.failed)
	}
}

// line is supervise's OnLine: decode, deliver, and tell supervise whether
// the work is done or the turn failed.
func (t *live) line(line []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed != nil {
		return t.failed
	}
	events, err := t.dec.Feed(line)
	for _, e := range events {
		t.emit(e)
	}
	switch {
	case err != nil:
		if failure.KindOf(err) == failure.Unclassified {
			err = failure.Wrap(failure.Protocol, err, "the agent's stream could not be decoded")
		}
		err = t.guard.error(err)
		if t.failed == nil {
			t.failed = err
		}
		return t.failed
	case t.failed != nil:
		return t.failed // stopped at a retry
	case t.dec.Done():
		return supervise.ErrFinished
	}
	return nil
}

// drained is supervise's OnDrained: the caller's, one call at a time with
// OnEvent.
func (t *live) drained() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onDrained()
}

// stderrLine feeds one stderr line to the decoder and delivers its
// events, then OnDrained; a stop at a retry said there aborts the run.
func (t *live) stderrLine(dec StderrDecoder, line []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.over || t.failed != nil {
		return
	}
	events := dec.FeedStderr(line)
	for _, e := range events {
		t.emit(e)
	}
	if len(events) > 0 && t.onDrained != nil {
		t.onDrained()
	}
	if t.failed != nil && t.session != nil {
		t.session.Abort(t.failed)
	}
}

// emit notes what the Outcome needs and hands e, its text that may hold
// the prompt's withheld, to the caller; a retry
// the caller stops at fails the turn, unless the turn is already done
// (its result arrived). t.mu is held.
func (t *live) emit(e event.Event) {
	e = t.guard.event(e)
	switch e.Type {
	case event.TypeInit:
		if e.Init != nil && t.sessionID == "" {
			t.sessionID, t.model = e.Init.SessionID, e.Init.Model
		}
	case event.TypeResult:
		if e.Result != nil {
			t.usage = e.Result.Usage
			t.answered = e.Result.Model
			if t.sessionID == "" {
				t.sessionID = e.Result.SessionID
			}
		}
	case event.TypeWarning:
		if e.Warning != nil {
			t.warnings = append(t.warnings, *e.Warning)
		}
	}
	if t.onEvent != nil {
		t.onEvent(e)
	}
	if e.Type == event.TypeWarning && e.Warning != nil && e.Warning.Retry != nil &&
		t.stopAtRetry != nil && t.failed == nil && !t.dec.Done() && t.stopAtRetry(*e.Warning.Retry) {
		t.failed, t.retryStop = retryStopError(*e.Warning.Retry), true
	}
}

// retryStopError is the failure of a turn stopped at retry r: r's kind.
func retryStopError(r event.Retry) error {
	what := "got no answer"
	if r.Status != 0 {
		what = "was answered with HTTP " + strconv.Itoa(r.Status)
	}
	kind := r.Kind
	if kind == "" {
		kind = kindOfStatus(r.Status)
	}
	return failure.New(kind, "the agent's model request %s (%s): the turn was stopped at the agent's retry %d instead of waiting for it",
		what, kind, r.Attempt)
}

// verdict decides the turn: a stream failure wins, and a stop at a retry
// when it is what ended the run (the supervisor may have ended it first:
// a deadline, a cancel, the agent's own exit); then a supervisor verdict
// that is not the agent exiting by itself (a deadline, a cancel, a spawn
// failure); then the decoder's verdict on how the agent ended.
func (t *live) verdict(o supervise.Outcome, runErr error) error {
	switch {
	case t.failed != nil && (!t.retryStop || o.Ending == supervise.Aborted):
		return t.failed
	case o.Ending != supervise.Exited:
		return runErr
	case o.Finished && runErr == nil:
		// Exited after the result, maybe late-closed: the stream decides.
		return t.dec.End(0, o.StderrTail)
	case o.Signal != 0:
		return runErr // died of a signal nobody sent
	}
	return t.dec.End(o.ExitCode, o.StderrTail)
}

func (t *live) outcome(err error, o supervise.Outcome) Outcome {
	out := Outcome{
		Status:         StatusDone,
		SessionID:      t.sessionID,
		Model:          t.model,
		Usage:          t.usage,
		Warnings:       t.warnings,
		StoppedAtRetry: t.retryStop && err == t.failed, // the stop decided the turn
		Process:        o,
	}
	if t.answered != "" {
		out.Model = t.answered
	}
	if err != nil {
		out.Kind = failure.KindOf(err)
		out.Status = StatusError
		if out.Kind == failure.Cancelled || errors.Is(err, context.Canceled) {
			out.Kind, out.Status = failure.Cancelled, StatusCancelled
		}
		out.Message = detail.Cut(err.Error(), maxMessage)
	}
	if out.Warnings == nil {
		out.Warnings = []event.Warning{}
	}
	return out
}
