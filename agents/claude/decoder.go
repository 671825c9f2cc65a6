package claude

import (
	"math"
	"strings"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/turn"
)

// Warning codes of the decoder.
const (
	// WarnAPIError: an assistant message is Claude Code's report of a
	// failed API call (it carries "error", e.g. "authentication_failed"),
	// not the model's words: its bounded text is this warning, never a
	// text event. The result that follows decides the turn.
	WarnAPIError = "api_error"
)

// maxAgentMessage bounds the agent's own error text carried in a failure
// or a warning.
const maxAgentMessage = 500

// decoder follows one turn's stdout, `claude -p --output-format
// stream-json --verbose`, line by line: it enforces the stream protocol
// and the turn's tool policy and turns each line into events (see the
// package documentation). A decoder is not safe for concurrent use.
type decoder struct {
	s     turn.Stream
	allow allowlist
	w     wireLine // the line being read; its blocks keep their capacity
	errs  []error  // the errors of the members the line uses, kept for their capacity
	views views    // what readAs reads a line into

	bridged map[string]bool // the started calls of the bridge's tools, by call id

	said     bool   // a text event was emitted
	apiError string // the category of the last assistant error
	model    string // the model of the last assistant message
}

// NewDecoder returns the decoder for the turn t, which allows the tools of
// t.Mode and t.Tools, and those t.Bridge publishes: a call of one of those
// is reported by the tool's own name (its registered name, without
// mcp__SERVER__ and the bridge's prefix), its input as the args and its
// text as the result. An unknown mode, a bad tool name or a bridge Args
// refuses is a failure.Input error.
func NewDecoder(t Turn) (turn.Decoder, error) {
	allow, err := newAllowlist(t.Mode, t.Tools)
	if err != nil {
		return nil, err
	}
	if t.Bridge != nil {
		if _, _, err := bridgeArgs(t.Bridge); err != nil {
			return nil, err
		}
		allow.bridge = t.Bridge
	}
	return &decoder{
		s: turn.Stream{Agent: "claude", Format: "stream-json", First: "a system/init event", Final: "a result event",
			Classify: ClassifyMessage},
		allow: allow,
	}, nil
}

// eventKind is what a line is, by its type and a system event's subtype.
type eventKind int

const (
	kindUnknown   eventKind = iota // any other type or system subtype: passed on whole
	kindInit                       // system/init
	kindRetry                      // system/api_retry
	kindAssistant                  // assistant
	kindUser                       // user
	kindResult                     // result
)

// Feed decodes the next stdout line (its terminator and surrounding space
// are removed; blank lines yield nothing) and returns its events, in
// order. Feed keeps nothing of line; the events are the caller's.
//
// A non-nil error is a *failure.Error of kind failure.Protocol or
// failure.Policy: the turn has failed and the caller must stop the
// agent's process tree now. It is sticky. A result that reports an error
// is not an error here: Feed returns the result event, End the failure.
func (d *decoder) Feed(raw []byte) ([]event.Event, error) {
	line, ok, err := d.s.Next(raw)
	if !ok {
		return nil, err
	}
	w := &d.w
	w.reset()
	if banner, err := d.readHead(line, w); banner != nil || err != nil {
		return banner, err
	}
	k := w.kind()
	if !d.s.Started() && k != kindInit && k != kindResult {
		// Claude Code's stream starts with system/init, or with a result
		// alone (--resume of a session that does not exist). An event no
		// decoder knows (a hook's) may come before: it neither starts nor
		// breaks the stream.
		if k == kindUnknown {
			return d.s.Pass(w.Type, w.systemSubtype(), line)
		}
		return nil, d.s.NotFirst(w.Type)
	}
	if err := d.readAs(line, k, w); err != nil {
		return nil, err
	}
	switch k {
	case kindInit:
		return d.initEvents(w, line), nil
	case kindRetry:
		return []event.Event{retryWarning(&w.retryMembers, w.Error)}, nil
	case kindAssistant:
		return d.assistant(w)
	case kindUser:
		return d.user(w), nil
	case kindResult:
		return d.result(w), nil
	}
	return d.s.Pass(w.Type, w.systemSubtype(), line)
}

// readHead reads into w the type of line and a system event's subtype,
// which decide what it is (turn.Stream.Head).
func (d *decoder) readHead(line []byte, w *wireLine) ([]event.Event, error) {
	typ, subtype, banner, err := d.s.Head(line)
	if banner != nil || err != nil {
		return banner, err
	}
	w.Type = typ
	if typ == "system" {
		w.Subtype = subtype
	}
	return nil, nil
}

// readAs reads line into w as an event of kind k: only the members k
// uses, whose kinds make the verdict; an event of another kind passes
// whole whatever its members hold.
func (d *decoder) readAs(line []byte, k eventKind, w *wireLine) error {
	// The views are the decoder's, so that a line allocates none.
	var v any
	vw := &d.views
	switch k {
	case kindInit:
		vw.init = initView{&w.SessionID, &w.initMembers}
		v = &vw.init
	case kindRetry:
		vw.retry = retryView{&w.Error, &w.retryMembers}
		v = &vw.retry
	case kindAssistant:
		vw.assistant = assistantView{&w.Error, &w.Message}
		v = &vw.assistant
	case kindUser:
		vw.userMessage = userMessage{&w.Message.messageContent}
		vw.user = userView{&vw.userMessage}
		v = &vw.user
	case kindResult:
		vw.result = resultView{&w.Subtype, &w.SessionID, &w.resultMembers}
		v = &vw.result
	default:
		return nil
	}
	if _, err := d.s.Unmarshal(line, v, w.Type); err != nil {
		return err
	}
	d.errs = w.Message.Content.appendMembers(d.errs[:0], k == kindUser)
	err := d.s.Invalid(line, w.Type, d.errs...)
	clear(d.errs) // keeps no error of this line
	return err
}

// initEvents are the events of system/init: the init event, or for a
// second one Stream's duplicate_init warning and the line passed on whole.
func (d *decoder) initEvents(w *wireLine, line []byte) []event.Event {
	in := &event.Init{SessionID: w.SessionID, Model: w.Model, CWD: w.CWD, PermissionMode: w.PermissionMode,
		APIKeySource: w.APIKeySource}
	return d.s.Init(in, "system", "init", line)
}

// retryWarning is the retry warning of a system/api_retry event: its
// numbers (a status outside HTTP's range, or none, read as no answer),
// its kind from the status, or from the error's category when the
// request got no answer, and the category as the cause, bounded: never
// free text.
func retryWarning(m *retryMembers, category string) event.Event {
	delay := 0.0
	if m.RetryDelayMs != nil {
		delay = *m.RetryDelayMs
	}
	r := event.Retry{Attempt: int(min(max(integer(m.Attempt), 0), math.MaxInt32)),
		Max:     int(min(max(integer(m.MaxRetries), 0), math.MaxInt32)),
		DelayMs: int64(min(max(delay, 0), math.MaxInt64/2)),
		Status:  int(min(max(integer(m.ErrorStatus), 0), math.MaxInt32))}
	if r.Status < 100 || r.Status > 599 {
		// No answer: the category may say what failed.
		if k := ClassifyMessage(category); k != failure.Unclassified {
			r.Kind = k
		}
	}
	return turn.RetryWarning(r, category)
}

// assistant maps an assistant message's content blocks: text, thinking,
// redacted_thinking and tool_use; blocks of other types are skipped. A
// tool_use the policy refuses fails the turn.
func (d *decoder) assistant(w *wireLine) ([]event.Event, error) {
	apiError := w.Error
	d.noteModel(w.Message.Model, apiError)
	var evs []event.Event
	var text strings.Builder
	for i := range w.Message.Content.list {
		b := &w.Message.Content.list[i]
		switch b.Type {
		case "text":
			text.WriteString(b.Text.Value())
		case "thinking":
			evs = d.flushText(evs, &text, apiError)
			evs = append(evs, event.Event{Type: event.TypeThinking, Subtype: "delta", Text: b.Thinking.Value()},
				event.Event{Type: event.TypeThinking, Subtype: "completed"})
		case "redacted_thinking":
			evs = d.flushText(evs, &text, apiError)
			evs = append(evs, event.Event{Type: event.TypeThinking, Subtype: "completed"})
		case "tool_use":
			evs = d.flushText(evs, &text, apiError)
			t := &event.Tool{CallID: b.ID.Value(), Name: b.Name.Value(), Args: present(b.Input.Value())}
			if err := d.s.StartTool(t, d.allow.check(t.Name)); err != nil {
				return nil, err
			}
			if own, _, ok := bridged(d.allow.bridge, t.Name); ok {
				t.Name = own
				if d.bridged == nil {
					d.bridged = map[string]bool{}
				}
				d.bridged[t.CallID] = true
			}
			evs = append(evs, event.Event{Type: event.TypeToolStarted, Tool: t})
		}
	}
	evs = d.flushText(evs, &text, apiError)
	if apiError != "" {
		d.apiError = apiError
	}
	return evs, nil
}

// flushText emits the text gathered so far: a text event, or for an error
// message the api_error warning.
func (d *decoder) flushText(evs []event.Event, text *strings.Builder, apiError string) []event.Event {
	if text.Len() == 0 {
		return evs
	}
	s := text.String()
	text.Reset()
	if apiError != "" {
		return append(evs, event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: WarnAPIError,
			Message: "the API call failed (" + turn.Quote(apiError, 40) + "): " + detail.Cut(strings.TrimSpace(s), maxAgentMessage)}})
	}
	d.said = true
	return append(evs, event.Event{Type: event.TypeText, Text: s})
}

// user maps a user message's tool_result blocks to tool_completed events,
// each with the started call's name and args. Nothing else of a user
// message is said: it may echo the prompt.
func (d *decoder) user(w *wireLine) []event.Event {
	var evs []event.Event
	for i := range w.Message.Content.list {
		b := &w.Message.Content.list[i]
		if b.Type != "tool_result" {
			continue
		}
		status := "success"
		if b.IsError.Value() {
			status = "error"
		}
		t := &event.Tool{CallID: b.ToolUseID.Value(), Status: status, Result: present(b.Content.Value())}
		if started := d.s.CompleteTool(t.CallID); started != nil {
			t.Name, t.Args = started.Name, started.Args
		}
		if d.bridged[t.CallID] {
			delete(d.bridged, t.CallID)
			t.Result = bridgedResult(b.Content.Value())
		}
		evs = append(evs, event.Event{Type: event.TypeToolCompleted, Tool: t})
	}
	return evs
}

// result records the result and returns its events: when no text was
// said, a successful result's text is said first.
func (d *decoder) result(w *wireLine) []event.Event {
	res := &event.Result{Subtype: w.Subtype, IsError: w.IsError, Text: w.Result, SessionID: w.SessionID,
		DurationMs: integer(w.DurationMs), DurationAPIMs: integer(w.DurationAPIMs), Model: d.model}
	if res.Text == "" {
		// A failed result without a result text says why in errors.
		res.Text = joinNonEmpty(w.Errors, "; ")
	}
	if w.Usage != nil {
		res.Usage = w.Usage.event()
	}
	if failed(res) {
		d.s.Finish(res, d.resultFailure(res))
		return []event.Event{{Type: event.TypeResult, Result: res}}
	}
	d.s.Finish(res, nil)
	if !d.said && res.Text != "" {
		// The agent answered only in its result: that is what it said.
		d.said = true
		return []event.Event{{Type: event.TypeText, Text: res.Text}, {Type: event.TypeResult, Result: res}}
	}
	return []event.Event{{Type: event.TypeResult, Result: res}}
}

// joinNonEmpty joins the non-empty strings of ss with sep.
func joinNonEmpty(ss []string, sep string) string {
	var b strings.Builder
	for _, s := range ss {
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s)
	}
	return b.String()
}

// synthetic is the model of a message Claude Code made itself (an API
// error's text), not a model's.
const synthetic = "<synthetic>"

// noteModel records the model of an assistant message: the model that
// answered, unless the message is Claude Code's own (an API error).
func (d *decoder) noteModel(model, apiError string) {
	if model != "" && model != synthetic && apiError == "" {
		d.model = model
	}
}

// failed reports whether r reports a failed turn: is_error decides (the
// unauthenticated result is subtype "success" with is_error true), and
// an error subtype (error_max_turns, error_during_execution, ...) fails
// too.
func failed(r *event.Result) bool { return r.IsError || strings.HasPrefix(r.Subtype, "error") }

// resultFailure is the failure an error result reports: the agent's own
// message, bounded, with the kind its text indicates, else the kind of
// the assistant error that preceded it, else the subtype's.
func (d *decoder) resultFailure(r *event.Result) error {
	msg := strings.TrimSpace(r.Text)
	if msg == "" {
		msg = "(no message)"
	}
	k := ClassifyMessage(r.Text)
	if k == failure.Unclassified {
		k = apiErrorKind(d.apiError)
	}
	if k == failure.Unclassified && r.Subtype == "error_max_budget_usd" {
		k = failure.Quota
	}
	// A failed turn may come with subtype "success" (is_error decides, as
	// when not logged in): the subtype is named only when it says more.
	what := "claude reported an error"
	if r.Subtype != "" && r.Subtype != "success" {
		what += " (" + turn.Quote(r.Subtype, 40) + ")"
	}
	return &failure.Error{Kind: k, Message: what, Detail: detail.Cut(msg, maxAgentMessage)}
}

// Done reports whether the result event has arrived.
func (d *decoder) Done() bool { return d.s.Done() }

// End returns the turn's verdict once the agent has exited by itself with
// exitCode, given the end of its stderr. Claude Code documents no exit
// codes of its own: it exits 0 after a successful turn and 1 after a
// failed one (an error result, a refused option, an unknown session).
//
//   - a protocol or policy failure Feed returned is returned again;
//   - after a result: nil, or the failure an error result reports,
//     whatever the exit code;
//   - exit 0 without system/init or without a result: failure.Protocol;
//   - a non-zero exit without a result: failure.Process, or the kind
//     ClassifyMessage finds in stderrTail, which is the detail (bounded).
func (d *decoder) End(exitCode int, stderrTail string) error {
	return d.s.End(exitCode, stderrTail)
}
