package cursor

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
)

// Decoder follows one turn's stdout, `cursor-agent --print --output-format
// stream-json`, line by line: it enforces the stream protocol and the
// turn's tool policy, drops the text Cursor repeats, and turns each line
// into events (see the package documentation). Feed it every stdout line
// in order; once the agent has exited by itself, End gives the verdict.
// A Decoder is not safe for concurrent use.
type Decoder struct {
	allow allowlist
	r     *lineReader
	line  int // lines fed so far, blank ones included

	init      bool
	result    *event.Result
	resultErr error // the failure an error result reports
	err       error // a protocol or policy failure; sticky

	text  textDedupe
	tools map[string]*event.Tool // started calls by call id, until completed
	batch []event.Event          // Feed's results are carved from it, never reused
}

// NewDecoder returns a Decoder for the turn t, which allows the tools of
// t.Mode and t.Tools and the MCP tools of the servers t.MCPServers names,
// or for a Sandboxed turn exactly the stream tools of
// SandboxedTools(t.Mode). An unknown mode, a bad tool name or MCP server
// key, and a Sandboxed turn Args refuses are failure.Input errors.
func NewDecoder(t Turn) (*Decoder, error) {
	newList := newAllowlist
	if t.Sandboxed {
		newList = newSandboxedAllowlist
	}
	allow, err := newList(t.Mode, t.Tools)
	if err != nil {
		return nil, err
	}
	if t.Sandboxed {
		if err := checkSandboxedMCP(t.MCPServers); err != nil {
			return nil, err
		}
	}
	if allow, err = allow.withMCPServers(t.MCPServers); err != nil {
		return nil, err
	}
	d := &Decoder{allow: allow, r: newLineReader(), tools: map[string]*event.Tool{}}
	d.text.said.window = defaultWindow
	return d, nil
}

// Feed decodes the next stdout line (a trailing "\n" or "\r\n" is removed;
// blank lines yield nothing) and returns its events, in order: usually
// one, none for the prompt's echo or text already said, two at most.
// Feed keeps nothing of line; the events are the caller's to keep.
//
// A non-nil error is a *failure.Error of kind failure.Protocol or
// failure.Policy: the turn has failed, and the caller must stop the
// agent's process tree now. It is sticky: later calls return it again.
// It names the line by its number among all lines fed, blank ones
// included. The rules:
//
//   - the first event must be system/init; a line that is not a JSON
//     object before it is a banner, reported as an event.WarnBanner
//     warning and skipped;
//   - after the first event every line must be a well-formed event;
//   - exactly one result, and nothing after it;
//   - a tool call must name a tool the turn allows.
//
// A result that reports an error is not an error here: Feed returns the
// result event, and End the failure it reports.
func (d *Decoder) Feed(line []byte) ([]event.Event, error) {
	if d.err != nil {
		return nil, d.err
	}
	d.line++
	line = trimEOL(line)
	if len(trimSpace(line)) == 0 {
		return nil, nil
	}
	if d.result != nil {
		return nil, d.fail(d.protocol(0, line, "output after the result event"))
	}
	f, de := d.r.decode(line)
	if de != nil {
		if de.notJSON && !d.init {
			return d.one(event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnBanner,
				Message: fmt.Sprintf("ignored line %d before the first event (not JSON): %s", d.line, excerpt(line, 0))}}), nil
		}
		reason := de.reason
		if de.event != "" {
			reason = de.event + " event: " + reason
		}
		return nil, d.fail(d.protocol(de.offset, line, reason))
	}
	w := &f.w
	if !d.init {
		if f.kind != kindInit {
			return nil, d.fail(d.protocol(-1, nil, "the first event is "+describe(f)+", not system/init"))
		}
		d.init = true
		return d.one(event.Event{Type: event.TypeInit, Init: &event.Init{SessionID: w.SessionID, Model: w.Model,
			CWD: w.CWD, PermissionMode: w.PermissionMode, APIKeySource: w.APIKeySource}}), nil
	}
	switch f.kind {
	case kindInit:
		evs := d.take(2)
		evs[0] = event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnDuplicateInit,
			Message: fmt.Sprintf("line %d: a second system/init event (session %s)", d.line, boundedQuote(w.SessionID, 64))}}
		evs[1] = unknown(w, line)
		return evs, nil
	case kindUser:
		// The prompt's echo: never repeated anywhere.
	case kindThinking:
		return d.one(event.Event{Type: event.TypeThinking, Subtype: w.Subtype, Text: w.Text}), nil
	case kindAssistant:
		if s := d.text.add(classify(w.ModelCallID, w.TimestampMs.ok), w.ModelCallID, f.text); s != "" {
			return d.one(event.Event{Type: event.TypeText, Text: s}), nil
		}
	case kindToolCall:
		return d.toolCall(f, line)
	case kindResult:
		r := &event.Result{Subtype: w.Subtype, IsError: w.IsError, Text: w.Result, DurationMs: w.DurationMs,
			DurationAPIMs: w.DurationAPIMs, SessionID: w.SessionID, RequestID: w.RequestID, Usage: f.usage}
		d.result = r
		res := event.Event{Type: event.TypeResult, Result: r}
		if failed(r) {
			d.resultErr = resultFailure(r)
		} else if d.text.said.len() == 0 && r.Text != "" {
			// The agent answered only in its result: that is what it said.
			evs := d.take(2)
			evs[0] = event.Event{Type: event.TypeText, Text: d.text.emit(r.Text)}
			evs[1] = res
			return evs, nil
		}
		return d.one(res), nil
	case kindUnknown:
		return d.one(unknown(w, line)), nil
	}
	return nil, nil
}

func (d *Decoder) toolCall(f *fields, line []byte) ([]event.Event, error) {
	t := &event.Tool{CallID: f.w.CallID, Name: f.tool.name, Args: f.tool.args, Status: f.tool.status, Result: f.tool.result}
	started := d.tools[t.CallID]
	if t.Name == "" && started != nil {
		t.Name = started.Name
	}
	// A completed call may carry only its result (Cursor's completed
	// mcpToolCall has no args): the started call's args name its server.
	args := t.Args
	if args == nil && started != nil {
		args = started.Args
	}
	if fe := d.allow.check(t.Name, args); fe != nil {
		return nil, d.fail(fe.WithDetail(fmt.Sprintf("line %d, call_id %s", d.line, boundedQuote(t.CallID, 64))))
	}
	switch f.w.Subtype {
	case "started":
		d.tools[t.CallID] = t
		// Text after a tool call starts a new piece of the answer, which a
		// flush may repeat on its own: dedupe may compare from here.
		d.text.said.mark(d.text.said.len())
		return d.one(event.Event{Type: event.TypeToolStarted, Tool: t}), nil
	case "completed":
		if t.Args == nil && started != nil {
			t.Args = started.Args
		}
		delete(d.tools, t.CallID)
		return d.one(event.Event{Type: event.TypeToolCompleted, Tool: t}), nil
	}
	return d.one(unknown(&f.w, line)), nil
}

// Done reports whether the result event has arrived: the turn's last
// event, after which the agent should exit by itself.
func (d *Decoder) Done() bool { return d.result != nil }

// End returns the turn's verdict once the agent has exited by itself with
// exitCode, given the end of its stderr (stderrTail, "" if not kept). It
// is not meant for an agent that was stopped: the reason it was stopped
// (a timeout, a cancel, Feed's error) is the verdict then.
//
//   - a protocol or policy failure Feed returned is returned again;
//   - after a result: nil, or the failure an error result reports, its
//     kind from its text (ClassifyMessage), whatever the exit code;
//   - exit 0 without system/init or without a result: failure.Protocol;
//   - a non-zero exit before the result: failure.Process, with the end of
//     stderrTail as the detail, and the kind the tail indicates when
//     ClassifyMessage finds a cause in it (the keychain, the IDE, the
//     network, a usage or rate limit, the login).
func (d *Decoder) End(exitCode int, stderrTail string) error {
	switch {
	case d.err != nil:
		return d.err
	case d.result != nil:
		return d.resultErr
	}
	return agent.Unfinished{
		Agent: "cursor-agent", First: "a system/init event", Final: "a result event",
		SawFirst: d.init, Lines: d.line, ExitCode: exitCode, StderrTail: stderrTail,
		Classify: ClassifyMessage,
	}.Verdict()
}

func (d *Decoder) fail(err error) error {
	d.err = err
	return err
}

// take returns room for n events: a slice of the batch that no later call
// hands out again, so the events Feed returns stay the caller's. Batches
// start small and double up to 64 events, so a quiet turn holds little
// and a busy one allocates once per 64 events.
func (d *Decoder) take(n int) []event.Event {
	if cap(d.batch)-len(d.batch) < n {
		d.batch = make([]event.Event, 0, max(min(2*cap(d.batch), 64), 4, n))
	}
	start := len(d.batch)
	d.batch = d.batch[:start+n]
	return d.batch[start : start+n : start+n]
}

func (d *Decoder) one(ev event.Event) []event.Event {
	evs := d.take(1)
	evs[0] = ev
	return evs
}

// unknown is the event for a line passed on whole.
func unknown(w *wireLine, line []byte) event.Event {
	return event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: w.Type, Subtype: w.Subtype, Raw: bytes.Clone(trimSpace(line))}}
}

// protocol builds a failure.Protocol error for the current line. With a
// line, the message names the byte offset and the detail quotes a bounded
// excerpt around it, unless the line may hold the prompt's echo.
func (d *Decoder) protocol(offset int, line []byte, reason string) error {
	msg := "stream-json protocol violation at line " + strconv.Itoa(d.line)
	if line != nil {
		msg += ", byte offset " + strconv.Itoa(offset)
	}
	e := &failure.Error{Kind: failure.Protocol, Message: msg + ": " + reason}
	if line != nil {
		e.Detail = "excerpt: " + excerpt(line, offset)
	}
	return e
}

// describe names a line's event for a message.
func describe(f *fields) string {
	if f.kind == kindUnknown && f.w.Type == "" {
		return "an event without a type"
	}
	return "of type " + boundedQuote(f.w.Type, 40)
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
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}

// trimSpace trims JSON's whitespace (which is not unicode.IsSpace).
func trimSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }
