package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
)

// Turn follows one prompt turn's stdout, line by line, and enforces the
// stream-json protocol and the tool policy. Feed it every stdout line in
// order, then call End once the agent's process has ended. A Turn is not
// safe for concurrent use.
type Turn struct {
	policy Policy
	line   int // lines fed so far, blank ones included

	init      *Init
	result    *Result
	resultErr error // the failure an error result reports
	err       error // a protocol or policy failure; sticky

	text     textDedupe
	ids      recent               // for decode
	tools    map[string]*ToolCall // started calls by call_id, until completed
	warnings []Warning
	out      []Output // reused by Feed
}

// NewTurn returns a Turn that allows the tools of policy.
func NewTurn(policy Policy) *Turn {
	t := &Turn{policy: policy, tools: map[string]*ToolCall{}, ids: recent{aliasText: true}}
	t.text.said.window = defaultWindow
	return t
}

// KeepText makes the Turn keep everything the agent says, for Text. Call
// it before the first Feed. Without it a Turn keeps only the latest few
// megabytes of text (and a hash per piece of the rest, until the end of
// turn copy), which deduplication needs: a turn can say hundreds of
// megabytes, and the outputs carry every piece anyway.
func (t *Turn) KeepText() { t.text.said.window = 0 }

// ReuseText lets the Turn write new text over the memory of text outputs
// it no longer needs, so that a turn of any length runs in a few
// megabytes with no garbage: the Text of an output is then valid only
// until the next call to Feed (strings.Clone it to keep it). Call it
// before the first Feed; a caller that writes every output at once, as
// `cursorkit run` does, loses nothing. It has no effect with KeepText.
func (t *Turn) ReuseText() { t.text.said.reuse = true }

// Feed takes the next stdout line (a trailing "\n" or "\r\n" is removed;
// blank lines are ignored) and returns the outputs it yields, in order.
// Feed keeps nothing of line, so the caller may reuse its buffer. The slice
// is reused by the next call to Feed; the Output values in it stay valid
// (their Text only until the next Feed after ReuseText).
//
// A non-nil error is a failure.Protocol or failure.Policy error: the turn
// has failed and the caller must stop the agent's process group now. It is
// sticky: later calls return it again. The rules:
//
//   - the first event must be system/init; a line that is not a JSON object
//     before it is a banner, reported as a "banner" warning and skipped;
//   - after the first event every line must be a well-formed event;
//   - exactly one result, and nothing after it;
//   - a tool_call must name a tool the policy allows.
//
// A result that reports an error is not an error here: Feed returns the
// result output and End returns the failure it reports.
func (t *Turn) Feed(line []byte) ([]Output, error) {
	if t.err != nil {
		return nil, t.err
	}
	t.line++
	t.out = t.out[:0]
	line = trimEOL(line)
	if len(trimJSONSpace(line)) == 0 {
		return nil, nil
	}
	if t.result != nil {
		return nil, t.fail(t.protocol(0, line, "output after the result event"))
	}
	ev, err := decode(line, &t.ids)
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			return nil, t.fail(err) // not reached: Decode wraps every error
		}
		if de.NotJSON && t.init == nil {
			t.addWarning(Warning{Code: WarnBanner, Message: fmt.Sprintf(
				"ignored line %d before the first event (not JSON): %s", t.line, excerpt(line, 0))})
			return t.out, nil
		}
		reason := de.Reason
		if de.Event != "" {
			reason = de.Event + " event: " + reason
		}
		return nil, t.fail(t.protocol(de.Offset, line, reason))
	}
	if t.init == nil {
		in, ok := ev.(*Init)
		if !ok {
			return nil, t.fail(t.protocol(0, nil, "the first event is "+describe(ev)+", not system/init"))
		}
		t.init = in
		t.out = append(t.out, Output{Type: OutputInit, Init: in})
		return t.out, nil
	}
	switch e := ev.(type) {
	case *Init:
		t.addWarning(Warning{Code: WarnDuplicateInit, Message: fmt.Sprintf(
			"line %d: a second system/init event (session %s)", t.line, boundedQuote(e.SessionID, 64))})
		t.out = append(t.out, Output{Type: OutputUnknown, Unknown: &Unknown{Type: TypeSystem, Subtype: SubtypeInit, Raw: copyLine(line)}})
	case *User:
		// The prompt's echo: never repeated anywhere.
	case *Thinking:
		t.out = append(t.out, Output{Type: OutputThinking, Text: e.Text, Thinking: e})
	case *Assistant:
		// e.Text may be a view of line (recent.aliasText): add copies
		// what it keeps and returns that copy.
		if s := t.text.add(e); s != "" {
			o := Output{Type: OutputText, Text: s}
			if t.ids.textASCII {
				o.verbatim = s
			}
			t.out = append(t.out, o)
		}
	case *ToolCall:
		if err := t.toolCall(e, line); err != nil {
			return nil, t.fail(err)
		}
	case *Result:
		t.result = e
		if e.Failed() {
			t.resultErr = resultFailure(e)
		} else if t.text.said.len() == 0 && e.Text != "" {
			// The agent answered only in its result: that is what it said.
			t.out = append(t.out, Output{Type: OutputText, Text: t.text.emit(e.Text)})
		}
		t.out = append(t.out, Output{Type: OutputResult, Result: e})
	case *Unknown:
		t.out = append(t.out, Output{Type: OutputUnknown, Unknown: e})
	}
	return t.out, nil
}

func (t *Turn) toolCall(e *ToolCall, line []byte) error {
	started := t.tools[e.CallID]
	if e.Name == "" && started != nil {
		e.Name, e.Key = started.Name, started.Key
	}
	if err := t.policy.Check(e.Name); err != nil {
		var fe *failure.Error
		if errors.As(err, &fe) {
			return fe.WithDetail(fmt.Sprintf("line %d, call_id %s", t.line, boundedQuote(e.CallID, 64)))
		}
		return err
	}
	switch e.Subtype {
	case SubtypeStarted:
		t.tools[e.CallID] = e
		t.out = append(t.out, Output{Type: OutputToolStarted, Tool: e})
	case SubtypeCompleted:
		if e.Args == nil && started != nil {
			e.Args = started.Args
		}
		delete(t.tools, e.CallID)
		t.out = append(t.out, Output{Type: OutputToolCompleted, Tool: e})
	default:
		t.out = append(t.out, Output{Type: OutputUnknown, Unknown: &Unknown{Type: TypeToolCall, Subtype: e.Subtype, Raw: copyLine(line)}})
	}
	return nil
}

// End returns the turn's verdict once the agent's process has ended.
// exited is true when the agent exited by itself with exitCode; pass false
// when it was stopped or died of a signal (the supervisor's own error, a
// timeout for example, then says more, and the caller should prefer it).
//
//   - a protocol or policy failure seen by Feed is returned again;
//   - after a result: nil, or the failure an error result reports (its kind
//     from its text: quota, rate_limited, auth or error), whatever the exit;
//   - exit 0 without system/init or without a result: failure.Protocol;
//   - otherwise (non-zero exit, or stopped, before the result): failure.Process.
func (t *Turn) End(exitCode int, exited bool) error {
	switch {
	case t.err != nil:
		return t.err
	case t.result != nil:
		return t.resultErr
	case exited && exitCode == 0 && t.init == nil:
		return failure.New(failure.Protocol, "cursor-agent exited 0 without a system/init event (%d lines read)", t.line)
	case exited && exitCode == 0:
		return failure.New(failure.Protocol, "cursor-agent exited 0 without a result event (%d lines read)", t.line)
	case exited && t.init == nil:
		return failure.New(failure.Process, "cursor-agent exited with code %d before its first event", exitCode)
	case exited:
		return failure.New(failure.Process, "cursor-agent exited with code %d without a result event", exitCode)
	case t.init == nil:
		return failure.New(failure.Process, "cursor-agent was stopped before its first event")
	}
	return failure.New(failure.Process, "cursor-agent was stopped before its result event")
}

// EndWithStderr is End for a caller that kept the agent's stderr tail.
// When the agent exited non-zero without a result, the failure carries the
// end of that tail (at most MaxAgentMessage bytes) as its detail, and takes
// the kind the tail indicates when it names a usage limit, a rate limit or
// an authentication problem (ClassifyMessage); otherwise it stays
// failure.Process. Every other verdict is End's.
func (t *Turn) EndWithStderr(exitCode int, exited bool, stderrTail string) error {
	err := t.End(exitCode, exited)
	var fe *failure.Error
	if !exited || exitCode == 0 || t.result != nil || t.err != nil || !errors.As(err, &fe) {
		return err
	}
	tail := strings.TrimSpace(stderrTail)
	if tail == "" {
		return err
	}
	e := *fe
	if k := ClassifyMessage(tail); k != failure.Other {
		e.Kind = k
	}
	e.Detail = "stderr: " + truncateStart(tail, MaxAgentMessage)
	return &e
}

// Warn records a warning of the caller's (for example WarnLateClose) so the
// outcome lists it, and returns the output line to emit for it.
func (t *Turn) Warn(code, message string) Output {
	t.warnings = append(t.warnings, Warning{Code: code, Message: message})
	return Output{Type: OutputWarning, Warning: t.warnings[len(t.warnings)-1]}
}

func (t *Turn) addWarning(w Warning) {
	t.warnings = append(t.warnings, w)
	t.out = append(t.out, Output{Type: OutputWarning, Warning: w})
}

// Outcome returns the last output line for the verdict err: nil for done
// (usually End's result, or the supervisor's error when it has one, such as
// a timeout or a cancel). A failure.Cancelled verdict is status
// "cancelled", any other error status "error" with its kind.
func (t *Turn) Outcome(err error) Outcome {
	o := Outcome{Status: StatusDone, SessionID: t.SessionID(), Warnings: t.Warnings()}
	if t.init != nil {
		o.Model = t.init.Model
	}
	if t.result != nil {
		o.Usage = t.result.Usage
	}
	if err != nil {
		o.Kind = failure.KindOf(err)
		o.Status = StatusError
		if o.Kind == failure.Cancelled {
			o.Status = StatusCancelled
		}
		o.Message = truncate(err.Error(), 2*MaxAgentMessage)
	}
	return o
}

// Text returns what the agent said in this turn: every piece of assistant
// text once, in order (the concatenation of the text outputs). It is ""
// unless KeepText was called before the first Feed; TextLen needs no
// KeepText.
func (t *Turn) Text() string {
	if t.text.said.window != 0 {
		return ""
	}
	return t.text.said.String()
}

// TextLen returns the length in bytes of what the agent said so far: the
// sum of the lengths of the text outputs.
func (t *Turn) TextLen() int64 { return int64(t.text.said.len()) }

// SessionID returns the session id from system/init, or from the result
// when init carried none; "" before either.
func (t *Turn) SessionID() string {
	if t.init != nil && t.init.SessionID != "" {
		return t.init.SessionID
	}
	if t.result != nil {
		return t.result.SessionID
	}
	return ""
}

// Init returns the system/init event, nil before it.
func (t *Turn) Init() *Init { return t.init }

// Result returns the result event, nil before it.
func (t *Turn) Result() *Result { return t.result }

// Done reports whether the result event has arrived: the supervisor's
// finish mark, after which the agent gets its exit grace.
func (t *Turn) Done() bool { return t.result != nil }

// Warnings returns the warnings so far, the caller's included.
func (t *Turn) Warnings() []Warning { return append([]Warning{}, t.warnings...) }

func (t *Turn) fail(err error) error {
	t.err = err
	return err
}

// protocol builds a failure.Protocol error for line t.line. The excerpt is
// bounded, and left out for a line that may hold the prompt's echo.
func (t *Turn) protocol(offset int, line []byte, reason string) error {
	msg := "stream-json protocol violation at line " + strconv.Itoa(t.line)
	if line != nil {
		msg += ", byte offset " + strconv.Itoa(offset)
	}
	e := &failure.Error{Kind: failure.Protocol, Message: msg + ": " + reason}
	if line != nil {
		e.Detail = "excerpt: " + excerpt(line, offset)
	}
	return e
}

// describe names an event for a message.
func describe(ev Event) string {
	if u, ok := ev.(*Unknown); ok {
		if u.Type == "" {
			return "an event without a type"
		}
		return "of type " + boundedQuote(u.Type, 40)
	}
	return "of type " + strconv.Quote(ev.EventType())
}

// excerptWidth bounds the excerpt of a bad line.
const excerptWidth = 80

// excerpt quotes at most excerptWidth bytes of line around offset. A line
// that mentions the user event type may be the prompt's echo and is never
// quoted.
func excerpt(line []byte, offset int) string {
	if bytes.Contains(line, []byte(`"user"`)) {
		return "(withheld: the line may hold the prompt)"
	}
	start := max(0, min(offset, len(line))-excerptWidth/2)
	end := min(len(line), start+excerptWidth)
	s := strconv.Quote(strings.ToValidUTF8(string(line[start:end]), "\uFFFD"))
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}

func trimEOL(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line
}

func copyLine(line []byte) json.RawMessage {
	return append(json.RawMessage(nil), trimJSONSpace(line)...)
}
