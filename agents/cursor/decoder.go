package cursor

import (
	"cmp"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"strings"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// decoder follows one turn's stdout, `cursor-agent --print --output-format
// stream-json`, line by line: it enforces the stream protocol and the
// turn's tool policy, drops the text Cursor repeats, and turns each line
// into events (docs/contract.md, "Stream"). Feed it every stdout line
// in order; once the agent has exited by itself, End gives the verdict.
// A decoder is not safe for concurrent use.
type decoder struct {
	s     turn.Stream
	allow allowlist
	text  textDedupe
}

// NewDecoder returns the decoder for the turn t, which allows the tools of
// t.Mode and t.Tools, the MCP tools of the servers t.MCPServers names and,
// of the server of t.Bridge, exactly the tools the bridge publishes
// (reported by their own names), or for a Sandboxed turn exactly the
// stream tools of SandboxedTools(t.Mode). An unknown mode, a bad tool
// name, MCP server key or bridge, and a Sandboxed turn Args refuses are
// failure.Input errors.
func NewDecoder(t Turn) (turn.Decoder, error) {
	allow, err := newAllowlist(t)
	if err != nil {
		return nil, err
	}
	d := &decoder{
		s: turn.Stream{Agent: "cursor-agent", Format: "stream-json",
			First: "a system/init event", Final: "a result event", Classify: ClassifyMessage},
		allow: allow,
	}
	d.text.said.window = defaultWindow
	return d, nil
}

// Feed decodes the next stdout line and returns its events, in order:
// usually one, none for a blank line, the prompt's echo or text already
// said, two at most. Feed keeps nothing of line; the events are the
// caller's to keep.
//
// A non-nil error is a *failure.Error of kind failure.Protocol or
// failure.Policy: the turn has failed, and the caller must stop the
// agent's process tree now. It is sticky: later calls return it again.
// The rules are turn.Stream's, with Cursor's events (docs/contract.md,
// "Stream"); a tool call of any subtype must name a tool the turn allows.
// A result that reports an error is not an error here: Feed returns the
// result event, and End the failure it reports.
func (d *decoder) Feed(raw []byte) ([]event.Event, error) {
	line, ok, err := d.s.Next(raw)
	if !ok {
		return nil, err
	}
	e, typ, subtype, banner, err := d.read(line)
	if banner != nil || err != nil {
		return banner, err
	}
	if _, isInit := e.(*wireInitEvent); !isInit && !d.s.Started() {
		return nil, d.s.NotFirst(typ)
	}
	switch e := e.(type) {
	case *wireInitEvent:
		return d.s.Init(&event.Init{SessionID: e.SessionID, Model: e.Model, CWD: e.CWD,
			PermissionMode: e.PermissionMode, APIKeySource: e.APIKeySource}, "system", "init", line), nil
	case *wireUserEvent:
		return nil, nil // the prompt's echo: never repeated anywhere
	case *wireThinkingEvent:
		return []event.Event{{Type: event.TypeThinking, Subtype: e.Subtype, Text: e.Text}}, nil
	case *wireAssistantEvent:
		if s := d.text.add(e.ModelCallID, e.TimestampMs != nil, e.Message.text()); s != "" {
			return []event.Event{{Type: event.TypeText, Text: s}}, nil
		}
		return nil, nil
	case *wireToolCallEvent:
		return d.toolCall(e, line)
	case *wireResultEvent:
		return d.result(e), nil
	}
	return d.s.Pass(typ, subtype, line)
}

// read decodes line, trimmed and not blank: its type and subtype
// (turn.Stream.Head), then, for a type the decoder knows, the members that
// type uses into its own struct e (nil for another type). banner and err
// are Stream's: the warning of a banner, or the protocol error of a line
// that is not a well-formed event.
func (d *decoder) read(line []byte) (e any, typ, subtype string, banner []event.Event, err error) {
	typ, subtype, banner, err = d.s.Head(line)
	if banner != nil || err != nil {
		return nil, "", "", banner, err
	}
	if e = wireEventOf(typ, subtype); e != nil {
		if _, err = d.s.Unmarshal(line, e, typ); err != nil {
			return nil, typ, subtype, nil, err
		}
	}
	return e, typ, subtype, nil, nil
}

// toolCall is the event of a tool_call event, or the policy failure of a
// call the turn does not allow.
func (d *decoder) toolCall(w *wireToolCallEvent, line []byte) ([]event.Event, error) {
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
	// The Stream remembers the call as Cursor sent it, the args that name
	// its server included, for its completed event's policy check; the
	// events carry a bridged call as the embedder's own tool.
	switch w.Subtype {
	case "started":
		if err := d.s.StartTool(t, nil); err != nil {
			return nil, err
		}
		// Text after a tool call starts a new piece of the answer, which a
		// flush may repeat on its own: dedupe may compare from here.
		d.text.said.mark(d.text.said.len())
		return []event.Event{{Type: event.TypeToolStarted, Tool: d.bridged(t)}}, nil
	case "completed":
		d.s.CompleteTool(t.CallID)
		t.Args = args
		return []event.Event{{Type: event.TypeToolCompleted, Tool: d.bridged(t)}}, nil
	}
	return []event.Event{turn.Unknown("tool_call", w.Subtype, line)}, nil
}

// bridged is t, a call the policy allowed, as its events carry it: a call
// of the tool bridge's server is a copy of t named by the tool's own name
// (mcpbridge.Server.Own: "lookup_word"), with the tool's input as its args
// and, once completed, the text it answered as its result, a JSON string
// (mcpbridge.ResultString); its status is "failure" when the tool reported
// an error (Cursor says "success" with isError true). A result whose text
// cannot be read is kept as sent. Any other call is t.
func (d *decoder) bridged(t *event.Tool) *event.Tool {
	call, ok := d.allow.bridgeCall(t.Name, t.Args)
	if !ok {
		return t
	}
	own, _ := d.allow.bridge.Own(call.tool) // published: the policy checked it
	b := *t
	b.Name, b.Args = own, call.input
	if b.Status != "success" || b.Result == nil {
		return &b
	}
	if q, ok := mcpbridge.ResultString(b.Result); ok {
		b.Result = q
		if toolFailed(t.Result) {
			b.Status = "failure"
		}
	}
	return &b
}

// toolFailed reports whether an MCP tool's result, as a successful
// mcpToolCall carries it, says the tool failed: isError true.
func toolFailed(result jsontext.Value) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r, turn.UnmarshalOptions()) == nil && r.IsError
}

// maxAgentMessage bounds the agent's own error text carried in a failure.
const maxAgentMessage = 500

// result is the events of the result event: the result, after the
// result's text when the agent said nothing else. An error result
// (is_error true or subtype "error") fails the turn with the agent's own
// message, bounded, and the kind its text indicates.
func (d *decoder) result(w *wireResultEvent) []event.Event {
	r := &event.Result{Subtype: w.Subtype, IsError: w.IsError, Text: w.Result, DurationMs: w.DurationMs,
		DurationAPIMs: w.DurationAPIMs, SessionID: w.SessionID, RequestID: w.RequestID, Usage: w.Usage.usage()}
	res := event.Event{Type: event.TypeResult, Result: r}
	if r.IsError || r.Subtype == "error" {
		msg := cmp.Or(strings.TrimSpace(r.Text), "(no message)")
		d.s.Finish(r, &failure.Error{Kind: ClassifyMessage(r.Text), Message: "cursor-agent reported an error",
			Detail: detail.Cut(msg, maxAgentMessage)})
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
func (d *decoder) Done() bool { return d.s.Done() }

// End returns the turn's verdict once the agent has exited by itself with
// exitCode, given the end of its stderr (stderrTail, "" if not kept):
// turn.Stream.End, with the kinds ClassifyMessage finds in an error
// result's text or, before any result, in stderrTail (docs/contract.md,
// "Turns"). It is not meant for an agent that was stopped: the reason it
// was stopped (a timeout, a cancel, Feed's error) is the verdict then.
func (d *decoder) End(exitCode int, stderrTail string) error {
	return d.s.End(exitCode, stderrTail)
}
