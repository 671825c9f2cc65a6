package cursor

import (
	"cmp"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/turn"
)

// Decoder follows one turn's stdout, `cursor-agent --print --output-format
// stream-json`, line by line: it enforces the stream protocol and the
// turn's tool policy, drops the text Cursor repeats, and turns each line
// into events (see the package documentation). Feed it every stdout line
// in order; once the agent has exited by itself, End gives the verdict.
// A Decoder is not safe for concurrent use.
type Decoder struct {
	s     turn.Stream
	allow allowlist
	text  textDedupe
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
	d := &Decoder{
		s: turn.Stream{Agent: "cursor-agent", Format: "stream-json",
			First: "a system/init event", Final: "a result event", Classify: ClassifyMessage},
		allow: allow,
	}
	d.text.said.window = defaultWindow
	return d, nil
}

// Feed decodes the next stdout line (surrounding space is removed; blank
// lines yield nothing) and returns its events, in order: usually one,
// none for the prompt's echo or text already said, two at most. Feed
// keeps nothing of line; the events are the caller's to keep.
//
// A non-nil error is a *failure.Error of kind failure.Protocol or
// failure.Policy: the turn has failed, and the caller must stop the
// agent's process tree now. It is sticky: later calls return it again.
// It names the line by its number among all lines fed, blank ones
// included. The rules are turn.Stream's, with Cursor's events:
//
//   - the first event must be system/init; a line that is not a JSON
//     object before it is a banner, reported as an event.WarnBanner
//     warning and skipped;
//   - after the first event every line must be a well-formed event;
//   - exactly one result, and nothing after it;
//   - a tool call, started, completed or of any other subtype, must
//     name a tool the turn allows.
//
// A result that reports an error is not an error here: Feed returns the
// result event, and End the failure it reports.
func (d *Decoder) Feed(raw []byte) ([]event.Event, error) {
	line, ok, err := d.s.Next(raw)
	if !ok {
		return nil, err
	}
	w, kind, banner, err := d.read(line)
	if banner != nil || err != nil {
		return banner, err
	}
	if !d.s.Started() && kind != kindInit {
		return nil, d.s.NotFirst(w.Type)
	}
	switch kind {
	case kindInit:
		return d.init(&w, line), nil
	case kindUser:
		return nil, nil // the prompt's echo: never repeated anywhere
	case kindThinking:
		return []event.Event{{Type: event.TypeThinking, Subtype: w.Subtype, Text: w.Text}}, nil
	case kindAssistant:
		if s := d.text.add(classify(w.ModelCallID, w.TimestampMs != nil), w.ModelCallID, w.Message.text()); s != "" {
			return []event.Event{{Type: event.TypeText, Text: s}}, nil
		}
		return nil, nil
	case kindToolCall:
		return d.toolCall(&w, line)
	case kindResult:
		return d.result(&w), nil
	}
	return d.s.Pass(w.Type, w.Subtype, line)
}

// read decodes line, trimmed and not blank, into w: its type and
// subtype first (turn.Stream.Head), then, for a type the decoder knows,
// the members that type uses (its own struct); kind is its event type.
// banner and err are Stream's: the warning of a banner, or the protocol
// error of a line that is not a well-formed event.
func (d *Decoder) read(line []byte) (w wireLine, kind eventKind, banner []event.Event, err error) {
	typ, subtype, banner, err := d.s.Head(line)
	if banner != nil || err != nil {
		return wireLine{}, kindUnknown, banner, err
	}
	kind = kindOf(typ, subtype)
	e := wireEventOf(kind)
	if e == nil {
		return wireLine{Type: typ, Subtype: subtype}, kind, nil, nil
	}
	if _, err = d.s.Unmarshal(line, e, typ); err != nil {
		return wireLine{}, kind, nil, err
	}
	w = e.line()
	w.Type = typ
	return w, kind, nil, nil
}

// init is the events of a system/init event: the init event, or for a
// second one a warning and the line passed on whole.
func (d *Decoder) init(w *wireLine, line []byte) []event.Event {
	return d.s.Init(&event.Init{SessionID: w.SessionID, Model: w.Model, CWD: w.CWD,
		PermissionMode: w.PermissionMode, APIKeySource: w.APIKeySource}, "system", "init", line)
}

// toolCall is the event of a tool_call event, or the policy failure of a
// call the turn does not allow.
func (d *Decoder) toolCall(w *wireLine, line []byte) ([]event.Event, error) {
	t := &event.Tool{CallID: w.CallID}
	if tc := w.ToolCall; tc != nil {
		t.Name, t.Args = tc.Name, tc.Body.args()
		if r := tc.Body.Result; r != nil {
			t.Status, t.Result = r.Status, r.Value
		}
	}
	// A completed call may name no tool and carry only its result
	// (Cursor's completed mcpToolCall has no args): the started call's
	// name and args identify it, and its args name an MCP call's server.
	args := t.Args
	if started := d.s.Tool(t.CallID); started != nil {
		t.Name = cmp.Or(t.Name, started.Name)
		if args == nil {
			args = started.Args
		}
	}
	if refused := d.allow.check(t.Name, args); refused != nil {
		// Cursor's policy holds for every call, whatever its subtype:
		// StartTool fails the turn with the refusal.
		return nil, d.s.StartTool(t, refused)
	}
	switch w.Subtype {
	case "started":
		if err := d.s.StartTool(t, nil); err != nil {
			return nil, err
		}
		// Text after a tool call starts a new piece of the answer, which a
		// flush may repeat on its own: dedupe may compare from here.
		d.text.said.mark(d.text.said.len())
		return []event.Event{{Type: event.TypeToolStarted, Tool: t}}, nil
	case "completed":
		d.s.CompleteTool(t.CallID)
		t.Args = args
		return []event.Event{{Type: event.TypeToolCompleted, Tool: t}}, nil
	}
	return []event.Event{turn.Unknown(w.Type, w.Subtype, line)}, nil
}

// result is the events of the result event: the result, after the
// result's text when the agent said nothing else.
func (d *Decoder) result(w *wireLine) []event.Event {
	r := &event.Result{Subtype: w.Subtype, IsError: w.IsError, Text: w.Result, DurationMs: w.DurationMs,
		DurationAPIMs: w.DurationAPIMs, SessionID: w.SessionID, RequestID: w.RequestID, Usage: w.Usage.usage()}
	res := event.Event{Type: event.TypeResult, Result: r}
	if failed(r) {
		d.s.Finish(r, resultFailure(r))
		return []event.Event{res}
	}
	d.s.Finish(r, nil)
	if d.text.said.len() == 0 && r.Text != "" {
		// The agent answered only in its result: that is what it said.
		return []event.Event{{Type: event.TypeText, Text: d.text.emit(r.Text)}, res}
	}
	return []event.Event{res}
}

// Done reports whether the result event has arrived: the turn's last
// event, after which the agent should exit by itself.
func (d *Decoder) Done() bool { return d.s.Done() }

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
	return d.s.End(exitCode, stderrTail)
}
