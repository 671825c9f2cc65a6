package gemini

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// Warning codes of the gemini Decoder.
const (
	// WarnGemini: an error event of severity "warning" (a loop detected,
	// an agent execution blocked by a hook, a retryable API error).
	WarnGemini = "gemini_warning"
	// WarnGeminiError: an error event of severity "error" (an invalid
	// stream, the session turn limit, a quota). The turn fails with it
	// (End) even when the result that follows says success.
	WarnGeminiError = "gemini_error"
)

// maxRun bounds the assistant text kept to recognise a non-delta copy of
// the deltas before it; a longer run is not compared (a copy is emitted).
const maxRun = 1 << 20

// Decoder follows one turn's stdout, `gemini --output-format stream-json`,
// line by line (see the package documentation). It implements
// agent.Decoder. A Decoder is not safe for concurrent use.
type Decoder struct {
	allow allowlist
	line  int // lines fed so far, blank ones included

	init      bool
	sessionID string
	result    *event.Result
	resultErr error          // the failure a result (or an error event before it) reports
	fatal     *failure.Error // the first error event of severity "error"
	err       error          // a protocol or policy failure; sticky

	tools map[string]*event.Tool // started calls by tool_id, until completed
	read  lineReader

	run         strings.Builder // the assistant deltas since the last boundary
	runOverflow bool

	pending *pendingRetry // a stderr retry notice not complete yet
}

var _ agent.StderrDecoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for the turn t, which allows the tools of
// t.Mode and t.Tools. An unknown mode or a bad tool name is a
// failure.Input error.
func NewDecoder(t Turn) (*Decoder, error) {
	allow, err := newAllowlist(t.Mode, t.Tools)
	if err != nil {
		return nil, err
	}
	return &Decoder{allow: allow, tools: map[string]*event.Tool{}}, nil
}

// Feed decodes the next stdout line (a trailing "\n" or "\r\n" is removed;
// blank lines yield nothing) and returns its events. Feed keeps nothing of
// line. A non-nil error is a *failure.Error of kind failure.Protocol or
// failure.Policy and is sticky: the caller stops the agent's tree.
func (d *Decoder) Feed(line []byte) ([]event.Event, error) {
	if d.err != nil {
		return nil, d.err
	}
	d.line++
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	if len(trimSpace(line)) == 0 {
		return nil, nil
	}
	if d.result != nil {
		return nil, d.fail(d.protocol(0, line, "output after the result event", false))
	}
	f, de := d.read.decode(line)
	if de != nil {
		if de.notJSON && !d.init {
			return one(event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnBanner,
				Message: fmt.Sprintf("ignored line %d before the first event (not JSON): %s", d.line, excerpt(line, 0))}}), nil
		}
		reason := de.reason
		if !de.notJSON && f != nil {
			reason = strconv.Quote(f.typ) + " event: " + reason
		}
		withhold := f != nil && f.kind == kindMessage
		return nil, d.fail(d.protocol(de.offset, line, reason, withhold))
	}
	if !d.init && f.kind != kindInit && f.kind != kindResult {
		return nil, d.fail(d.protocol(-1, nil, "the first event is "+describe(f)+", not init", false))
	}
	switch f.kind {
	case kindInit:
		if d.init {
			return []event.Event{
				{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnDuplicateInit,
					Message: fmt.Sprintf("line %d: a second init event (session %s)", d.line, agent.Quote(f.sessionID, 64))}},
				unknown(f, line),
			}, nil
		}
		d.init, d.sessionID = true, f.sessionID
		return one(event.Event{Type: event.TypeInit, Init: &event.Init{SessionID: f.sessionID, Model: f.model}}), nil
	case kindMessage:
		switch f.role {
		case "user":
			// The prompt's echo: never repeated anywhere, as cursor's.
			return nil, nil
		case "assistant":
			if s := d.text(f.content, f.delta); s != "" {
				return one(event.Event{Type: event.TypeText, Text: s}), nil
			}
			return nil, nil
		}
		return one(unknown(f, line)), nil
	case kindToolUse:
		t := &event.Tool{CallID: f.toolID, Name: f.toolName, Args: f.params}
		if fe := d.allow.check(t.Name); fe != nil {
			return nil, d.fail(fe.WithDetail(fmt.Sprintf("line %d, tool_id %s", d.line, agent.Quote(t.CallID, 64))))
		}
		d.tools[t.CallID] = t
		d.boundary()
		return one(event.Event{Type: event.TypeToolStarted, Tool: t}), nil
	case kindToolResult:
		t := &event.Tool{CallID: f.toolID, Status: f.status, Result: f.output}
		if f.errObj != nil {
			t.Result = f.errObj
		}
		if started := d.tools[t.CallID]; started != nil {
			t.Name, t.Args = started.Name, started.Args
		}
		if fe := d.allow.check(t.Name); fe != nil {
			return nil, d.fail(fe.WithDetail(fmt.Sprintf("line %d, tool_id %s (a tool_result without its tool_use)", d.line, agent.Quote(t.CallID, 64))))
		}
		delete(d.tools, t.CallID)
		d.boundary()
		return one(event.Event{Type: event.TypeToolCompleted, Tool: t}), nil
	case kindError:
		code := WarnGemini
		if f.severity == "error" {
			code = WarnGeminiError
			if d.fatal == nil {
				d.fatal = &failure.Error{Kind: ClassifyMessage(f.message), Message: "gemini reported an error",
					Detail: detail.Cut(strings.TrimSpace(f.message), maxAgentMessage)}
			}
		}
		return one(event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: code,
			Message: detail.Cut(strings.TrimSpace(f.message), maxAgentMessage)}}), nil
	case kindResult:
		r := &event.Result{Subtype: f.status, IsError: f.status == "error", Text: f.message,
			DurationMs: f.durationMs, SessionID: d.sessionID, Usage: f.usage, Model: answeredModel(f.models)}
		if !r.IsError && r.Text == "" && !d.runOverflow {
			// Gemini's result carries no text: the answer is what the
			// agent said since its last tool call.
			r.Text = d.run.String()
		}
		d.result = r
		switch {
		case r.IsError && f.errObj == nil && d.fatal != nil:
			// An invalid stream: the error event said why, the result only
			// that the turn failed.
			d.resultErr = d.fatal
		case r.IsError:
			d.resultErr = resultFailure(f.errType, f.message)
		case d.fatal != nil:
			d.resultErr = d.fatal
		}
		return one(event.Event{Type: event.TypeResult, Result: r}), nil
	}
	return one(unknown(f, line)), nil
}

// text returns what an assistant message adds to what was said. Gemini
// 0.61.0 sends every piece as a delta (delta: true), each new. A message
// without delta is taken as a whole message: when it repeats the deltas
// since the last tool call (a final copy) it adds nothing, when it
// extends them it adds the rest; either way it closes the run.
func (d *Decoder) text(content string, delta bool) string {
	if delta {
		if !d.runOverflow {
			if d.run.Len()+len(content) > maxRun {
				d.runOverflow = true
				d.run.Reset()
			} else {
				d.run.WriteString(content)
			}
		}
		return content
	}
	run, known := d.run.String(), !d.runOverflow
	d.boundary()
	if known && run != "" && strings.HasPrefix(content, run) {
		return content[len(run):]
	}
	return content
}

// boundary closes the run of deltas: text after a tool call or a whole
// message is new.
func (d *Decoder) boundary() {
	d.run.Reset()
	d.runOverflow = false
}

// Done reports whether the result event has arrived.
func (d *Decoder) Done() bool { return d.result != nil }

// End returns the turn's verdict once gemini has exited by itself:
//
//   - a protocol or policy failure Feed returned, again;
//   - after a result: nil, or the failure an error result (or an error
//     event of severity "error") reports, its kind from the error type or
//     text, whatever the exit code; a success result without init is
//     failure.Protocol;
//   - exit 0 without init or without a result: failure.Protocol;
//   - another exit without a result: the kind gemini's exit code
//     documents (exitMeaning: 41 auth, 42 input, 44 sandbox, 52 and 55
//     setup, ...), else the kind ClassifyMessage finds in stderrTail,
//     else failure.Process; the end of stderrTail is the detail.
func (d *Decoder) End(exitCode int, stderrTail string) error {
	switch {
	case d.err != nil:
		return d.err
	case d.result != nil && d.resultErr != nil:
		return d.resultErr
	case d.result != nil && !d.init:
		return failure.New(failure.Protocol, "gemini reported success without an init event (%d lines read)", d.line)
	case d.result != nil:
		return nil
	}
	err := agent.Unfinished{
		Agent: "gemini", First: "an init event", Final: "a result event",
		SawFirst: d.init, Lines: d.line, ExitCode: exitCode, StderrTail: stderrTail,
		Classify: ClassifyMessage,
	}.Verdict()
	if exitCode == 0 {
		return err
	}
	// err.Kind is failure.Process unless ClassifyMessage found one; the
	// exit code's documented meaning comes first, the error event last.
	if kind, meaning, ok := exitMeaning(exitCode); ok {
		err.Kind = kind
		err.Message += " (" + meaning + ")"
	} else if err.Kind == failure.Process && d.fatal != nil {
		err.Kind = d.fatal.Kind
	}
	if err.Detail == "" && d.fatal != nil {
		err.Detail = d.fatal.Detail
	}
	return err
}

func (d *Decoder) fail(err error) error {
	d.err = err
	return err
}

func one(ev event.Event) []event.Event { return []event.Event{ev} }

// unknown is the event for a line passed on whole.
func unknown(f *fields, line []byte) event.Event {
	return event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: f.typ, Raw: bytes.Clone(trimSpace(line))}}
}

// protocol builds a failure.Protocol error for the current line: with a
// line, the byte offset and a bounded excerpt, never of a line that may
// echo the prompt (withhold: a message event; see excerpt).
func (d *Decoder) protocol(offset int, line []byte, reason string, withhold bool) error {
	msg := "stream-json protocol violation at line " + strconv.Itoa(d.line)
	if line != nil {
		msg += ", byte offset " + strconv.Itoa(offset)
	}
	e := &failure.Error{Kind: failure.Protocol, Message: msg + ": " + reason}
	switch {
	case line != nil && withhold:
		e.Detail = "excerpt: " + withheld
	case line != nil:
		e.Detail = "excerpt: " + excerpt(line, offset)
	}
	return e
}

// describe names a line's event for a message.
func describe(f *fields) string {
	if f.typ == "" {
		return "an event without a type"
	}
	return "of type " + agent.Quote(f.typ, 40)
}

// excerptWidth bounds the excerpt of a bad line.
const excerptWidth = 80

// withheld stands for the excerpt of a line that may hold the prompt.
const withheld = "(withheld: the line may hold the prompt)"

// excerpt quotes at most excerptWidth bytes of line around offset. A line
// that mentions "user", or holds a \u escape (which can spell it), may be
// the prompt's echo ({"type":"message","role":"user","content":PROMPT})
// and is never quoted.
func excerpt(line []byte, offset int) string {
	if bytes.Contains(line, []byte(`user`)) || bytes.Contains(line, []byte(`\u`)) {
		return withheld
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

// trimSpace trims JSON's whitespace.
func trimSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }
