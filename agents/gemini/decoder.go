package gemini

import (
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"strings"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/turn"
)

// Warning codes of the gemini decoder.
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

// decoder follows one turn's stdout, `gemini --output-format stream-json`,
// line by line (see the package documentation). It implements
// turn.StderrDecoder. A decoder is not safe for concurrent use.
type decoder struct {
	s       turn.Stream
	allow   allowlist
	bridged map[string]bool // the started calls of the bridge's tools, by call id

	sessionID string         // the first init event's
	fatal     *failure.Error // the first error event of severity "error"

	run         strings.Builder // the assistant deltas since the last boundary
	runOverflow bool

	pending *pendingRetry // a stderr retry notice not complete yet

	wires wires // what handle reads a line into
}

// wires are the wire types of the events the decoder reads, one each.
type wires struct {
	init       wireInit
	message    wireMessage
	toolUse    wireToolUse
	toolResult wireToolResult
	error      wireError
	result     wireResult
}

var _ turn.StderrDecoder = (*decoder)(nil)

// NewDecoder returns the decoder for the turn t, which allows the tools of
// t.Mode and t.Tools, and those t.Bridge publishes: a call of one of those
// (mcp_SERVER_fn_NAME) is reported by the tool's own name, NAME, with its
// parameters and its output. An unknown mode, a bad tool name or a bridge
// Args refuses is a failure.Input error.
func NewDecoder(t Turn) (turn.StderrDecoder, error) {
	allow, err := newAllowlist(t.Mode, t.Tools)
	if err != nil {
		return nil, err
	}
	if err := checkBridge(t); err != nil {
		return nil, err
	}
	allow.bridge = t.Bridge
	return &decoder{allow: allow, s: turn.Stream{Agent: Name, Format: "stream-json",
		First: "an init event", Final: "a result event", Classify: ClassifyMessage}}, nil
}

// Feed decodes the next stdout line (its terminator and surrounding space
// trimmed; blank lines yield nothing) and returns its events. Feed keeps
// nothing of line. A non-nil error is a *failure.Error of kind
// failure.Protocol or failure.Policy and is sticky: the caller stops the
// agent's tree.
func (d *decoder) Feed(line []byte) ([]event.Event, error) {
	line, ok, err := d.s.Next(line)
	if !ok {
		return nil, err
	}
	typ, _, banner, err := d.s.Head(line)
	if banner != nil || err != nil {
		return banner, err
	}
	// A result may come first: gemini reports an error thrown before its
	// init (a session that cannot be resumed) as a failed result alone.
	if !d.s.Started() && typ != "init" && typ != "result" {
		return nil, d.s.NotFirst(typ)
	}
	switch typ {
	case "init":
		return handle(d, line, typ, &d.wires.init, d.initEvent)
	case "message":
		return handle(d, line, typ, &d.wires.message, d.message)
	case "tool_use":
		return handle(d, line, typ, &d.wires.toolUse, d.toolUse)
	case "tool_result":
		return handle(d, line, typ, &d.wires.toolResult, d.toolResult)
	case "error":
		return handle(d, line, typ, &d.wires.error, d.errorEvent)
	case "result":
		return handle(d, line, typ, &d.wires.result, d.result)
	}
	return d.s.Pass(typ, "", line)
}

// handle reads line, an event of type typ, into w, emptied first (one of
// the decoder's wires, so that a line allocates none), and returns what f
// makes of it.
func handle[W any](d *decoder, line []byte, typ string, w *W, f func(w *W, line []byte) ([]event.Event, error)) ([]event.Event, error) {
	var zero W
	*w = zero
	if _, err := d.s.Unmarshal(line, w, typ); err != nil {
		return nil, err
	}
	return f(w, line)
}

// initEvent is the init event, the first time; its session is the
// result's.
func (d *decoder) initEvent(w *wireInit, line []byte) ([]event.Event, error) {
	if !d.s.Initialized() {
		d.sessionID = w.SessionID
	}
	return d.s.Init(&event.Init{SessionID: w.SessionID, Model: w.Model}, "init", "", line), nil
}

// message is what the model says; the prompt's echo yields nothing, and
// a message of another role passes whole.
func (d *decoder) message(w *wireMessage, line []byte) ([]event.Event, error) {
	switch w.Role {
	case "user":
		// The prompt's echo: never repeated anywhere, as cursor's.
		return nil, nil
	case "assistant":
		if s := d.text(w.Content, w.Delta); s != "" {
			return one(event.Event{Type: event.TypeText, Text: s}), nil
		}
		return nil, nil
	}
	return one(turn.Unknown("message", "", line)), nil
}

// toolUse starts a call the policy allows, before gemini runs it.
func (d *decoder) toolUse(w *wireToolUse, _ []byte) ([]event.Event, error) {
	t := &event.Tool{CallID: w.ToolID, Name: w.ToolName, Args: jsontext.Value(w.Parameters)}
	if err := d.s.StartTool(t, d.allow.check(t.Name)); err != nil {
		return nil, err
	}
	if own, _, ok := bridged(d.allow.bridge, t.Name); ok {
		// Stream keeps t: the completed event takes this name too.
		t.Name = own
		if d.bridged == nil {
			d.bridged = map[string]bool{}
		}
		d.bridged[t.CallID] = true
	}
	d.boundary()
	return one(event.Event{Type: event.TypeToolStarted, Tool: t}), nil
}

// toolResult completes a started call. A result whose tool_use was not
// seen is a call the policy never checked: it fails the turn as a tool
// that cannot be identified.
func (d *decoder) toolResult(w *wireToolResult, _ []byte) ([]event.Event, error) {
	started := d.s.CompleteTool(w.ToolID)
	if started == nil {
		return nil, d.s.Fail(d.allow.check("").WithDetail(fmt.Sprintf("line %d, call id %s (a tool_result without its tool_use)",
			d.s.Line(), turn.Quote(w.ToolID, 64))))
	}
	t := &event.Tool{CallID: w.ToolID, Name: started.Name, Args: started.Args, Status: w.Status, Result: jsontext.Value(w.Output)}
	if w.Error != nil {
		t.Result = jsontext.Value(w.Error)
		if d.bridged[w.ToolID] {
			t.Result = bridgedError(t.Result)
		}
	}
	delete(d.bridged, w.ToolID)
	d.boundary()
	return one(event.Event{Type: event.TypeToolCompleted, Tool: t}), nil
}

// errorEvent is a warning; the first of severity "error" is also the
// turn's failure (End), whatever the result says.
func (d *decoder) errorEvent(w *wireError, _ []byte) ([]event.Event, error) {
	msg := detail.Cut(strings.TrimSpace(w.Message), maxAgentMessage)
	code := WarnGemini
	if w.Severity == "error" {
		code = WarnGeminiError
		if d.fatal == nil {
			d.fatal = &failure.Error{Kind: ClassifyMessage(w.Message), Message: "gemini reported an error", Detail: msg}
		}
	}
	return one(event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: code, Message: msg}}), nil
}

// result is the final event. The turn fails with an error event of
// severity "error" before it, else with a failed result's error; a
// success without init is a protocol failure.
func (d *decoder) result(w *wireResult, _ []byte) ([]event.Event, error) {
	r := &event.Result{Subtype: w.Status, IsError: w.Status == "error", SessionID: d.sessionID, Usage: w.Stats.usage()}
	if s := w.Stats; s != nil {
		r.Model = answeredModel(s.Models)
		if s.DurationMs != nil {
			r.DurationMs = *s.DurationMs
		}
	}
	var errType string
	if w.Error != nil {
		errType, r.Text = w.Error.Type, w.Error.Message
	}
	if !r.IsError && r.Text == "" && !d.runOverflow {
		// Gemini's result carries no text: the answer is what the agent
		// said since its last tool call.
		r.Text = d.run.String()
	}
	var failed error
	switch {
	case r.IsError && w.Error == nil && d.fatal != nil:
		// An invalid stream: the error event said why, the result only
		// that the turn failed.
		failed = d.fatal
	case r.IsError:
		failed = resultFailure(errType, r.Text)
	case d.fatal != nil:
		failed = d.fatal
	case !d.s.Initialized():
		failed = failure.New(failure.Protocol, "gemini reported success without an init event (%d lines read)", d.s.Line())
	}
	d.s.Finish(r, failed)
	return one(event.Event{Type: event.TypeResult, Result: r}), nil
}

// text returns what an assistant message adds to what was said. Gemini
// 0.61.0 sends every piece as a delta (delta: true), each new. A message
// without delta is taken as a whole message: when it repeats the deltas
// since the last tool call (a final copy) it adds nothing, when it
// extends them it adds the rest; either way it closes the run.
func (d *decoder) text(content string, delta bool) string {
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
func (d *decoder) boundary() {
	d.run.Reset()
	d.runOverflow = false
}

// Done reports whether the result event has arrived.
func (d *decoder) Done() bool { return d.s.Done() }

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
//     else the kind of an error event of severity "error", else
//     failure.Process; the end of stderrTail is the detail, else that
//     error event's message.
func (d *decoder) End(exitCode int, stderrTail string) error {
	err := d.s.End(exitCode, stderrTail)
	var verdict *failure.Error
	if d.s.Err() != nil || d.s.Done() || exitCode == 0 || !errors.As(err, &verdict) {
		return err
	}
	amended := *verdict
	// The kind is failure.Process unless ClassifyMessage found one: the
	// exit code's documented meaning comes first, the error event last.
	if kind, meaning, ok := exitMeaning(exitCode); ok {
		amended.Kind = kind
		amended.Message += " (" + meaning + ")"
	} else if amended.Kind == failure.Process && d.fatal != nil {
		amended.Kind = d.fatal.Kind
	}
	if amended.Detail == "" && d.fatal != nil {
		amended.Detail = d.fatal.Detail
	}
	return &amended
}

func one(ev event.Event) []event.Event { return []event.Event{ev} }
