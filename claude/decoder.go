package claude

import (
	"bytes"
	"encoding/json/jsontext"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// Warning codes of the Decoder.
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

// Decoder follows one turn's stdout, `claude -p --output-format
// stream-json --verbose`, line by line: it enforces the stream protocol
// and the turn's tool policy and turns each line into events (see the
// package documentation). A Decoder is not safe for concurrent use.
type Decoder struct {
	allow allowlist
	line  int // lines fed so far, blank ones included

	started   bool // the first event (system/init or a result) arrived
	init      bool
	result    *event.Result
	resultErr error
	err       error // a protocol or policy failure; sticky

	said     bool                   // a text event was emitted
	apiError string                 // the category of the last assistant error
	model    string                 // the model of the last assistant message
	tools    map[string]*event.Tool // started calls by id, until completed

	wire     lineReader // reads a line the first way (wire.go)
	walkOnly bool       // tests: read every line with the walk (decode.go)
}

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
// blank lines yield nothing) and returns its events, in order. Feed keeps
// nothing of line; the events are the caller's.
//
// A non-nil error is a *failure.Error of kind failure.Protocol or
// failure.Policy: the turn has failed and the caller must stop the
// agent's process tree now. It is sticky. A result that reports an error
// is not an error here: Feed returns the result event, End the failure.
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
	if !d.walkOnly {
		if w := d.wire.decode(line); w != nil {
			return d.feedWire(w, line)
		}
	}
	return d.feedWalk(line)
}

// feedWalk reads line with the member walk (decode.go), which decodes
// only the members the line's type uses and names the culprit of a line
// that is not a well-formed event.
func (d *Decoder) feedWalk(line []byte) ([]event.Event, error) {
	r := newReader(line)
	o, le := r.top()
	if le != nil {
		if !d.started {
			return []event.Event{{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnBanner,
				Message: fmt.Sprintf("ignored line %d before the first event (not a JSON object): %s", d.line, excerpt(line, 0))}}}, nil
		}
		return nil, d.fail(d.protocol(le.offset, line, le.reason))
	}
	typ := r.str(o, "type")
	subtype := ""
	if typ == "system" || typ == "result" {
		subtype = r.str(o, "subtype")
	}
	k := kindOf(typ, subtype)
	if r.err == nil {
		if evs, done, err := d.first(typ, subtype, k, line); done {
			return evs, err
		}
	}
	var evs []event.Event
	switch k {
	case kindInit:
		evs = d.initEvent(&event.Init{SessionID: r.str(o, "session_id"), Model: r.str(o, "model"), CWD: r.str(o, "cwd"),
			PermissionMode: r.str(o, "permissionMode"), APIKeySource: r.str(o, "apiKeySource")}, line)
	case kindRetry:
		evs = retryEvent(r, o)
	case kindAssistant:
		evs = d.assistant(r, o)
	case kindUser:
		evs = d.user(r, o)
	case kindResult:
		evs = d.resultEvent(r, o)
	default:
		evs = []event.Event{unknown(typ, subtype, line)}
	}
	if r.err != nil {
		reason := r.err.reason
		if typ != "" {
			reason = agent.Quote(typ, 40) + " event: " + reason
		}
		d.result, d.resultErr = nil, nil
		return nil, d.fail(d.protocol(r.err.offset, line, reason))
	}
	if d.err != nil {
		return nil, d.err
	}
	return evs, nil
}

// feedWire makes the events of a line read the first way (wire.go): the
// members of every event type, each of the kind Claude Code sends, so
// what feedWalk would make of it.
func (d *Decoder) feedWire(w *wireLine, line []byte) ([]event.Event, error) {
	subtype := ""
	if w.Type == "system" || w.Type == "result" {
		subtype = w.Subtype
	}
	k := kindOf(w.Type, subtype)
	if evs, done, err := d.first(w.Type, subtype, k, line); done {
		return evs, err
	}
	var evs []event.Event
	switch k {
	case kindInit:
		evs = d.initEvent(&event.Init{SessionID: w.SessionID, Model: w.Model, CWD: w.CWD,
			PermissionMode: w.PermissionMode, APIKeySource: w.APIKeySource}, line)
	case kindRetry:
		attempt, _ := w.Attempt.integer()
		most, _ := w.MaxRetries.integer()
		status, _ := w.ErrorStatus.integer()
		evs = retryWarning(attempt, most, w.RetryDelayMs.n, status, w.Error)
	case kindAssistant:
		evs = d.assistantWire(w)
	case kindUser:
		evs = d.userWire(w)
	case kindResult:
		res := &event.Result{Subtype: w.Subtype, IsError: w.IsError, Text: w.Result, SessionID: w.SessionID}
		res.DurationMs, _ = w.DurationMs.integer()
		res.DurationAPIMs, _ = w.DurationAPIMs.integer()
		if res.Text == "" && len(w.Errors) > 0 {
			res.Text = strings.Join(w.Errors, "; ")
		}
		if w.Usage.reported {
			res.Usage = w.Usage.event()
		}
		evs = d.resultEvents(res)
	default:
		evs = []event.Event{unknown(w.Type, subtype, line)}
	}
	if d.err != nil {
		return nil, d.err
	}
	return evs, nil
}

// first handles a well-read event before the first one: done says Feed
// returns evs and err.
func (d *Decoder) first(typ, subtype string, k eventKind, line []byte) (evs []event.Event, done bool, err error) {
	if d.started {
		return nil, false, nil
	}
	switch k {
	case kindInit, kindResult:
		d.started = true
		return nil, false, nil
	case kindUnknown:
		// An event no decoder knows (a hook's) may come first: it neither
		// starts nor breaks the stream.
		return []event.Event{unknown(typ, subtype, line)}, true, nil
	}
	return nil, true, d.fail(d.protocol(-1, nil, "the first event is of type "+agent.Quote(typ, 40)+", not system/init"))
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

func kindOf(typ, subtype string) eventKind {
	switch typ {
	case "system":
		switch subtype {
		case "init":
			return kindInit
		case "api_retry":
			return kindRetry
		}
	case "assistant":
		return kindAssistant
	case "user":
		return kindUser
	case "result":
		return kindResult
	}
	return kindUnknown
}

func (d *Decoder) initEvent(in *event.Init, line []byte) []event.Event {
	if d.init {
		return []event.Event{
			{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnDuplicateInit,
				Message: fmt.Sprintf("line %d: a second system/init event (session %s)", d.line, agent.Quote(in.SessionID, 64))}},
			unknown("system", "init", line),
		}
	}
	d.init = true
	return []event.Event{{Type: event.TypeInit, Init: in}}
}

// retryEvent is the warning of a system/api_retry event, said from its
// numbers and the error's category only (bounded): never free text.
func retryEvent(r *reader, o object) []event.Event {
	attempt, _ := r.integer(o, "attempt")
	most, _ := r.integer(o, "max_retries")
	delay, _ := r.number(o, "retry_delay_ms")
	status, _ := r.integer(o, "error_status")
	return retryWarning(attempt, most, delay, status, r.str(o, "error"))
}

// retryWarning is the retry warning of an api_retry event: its numbers
// (a status outside HTTP's range, or none, read as no answer), its kind
// from the status, or from the error's category when the request got no
// answer, and the category as the cause.
func retryWarning(attempt, most int64, delay float64, status int64, category string) []event.Event {
	r := event.Retry{Attempt: int(min(max(attempt, 0), math.MaxInt32)), Max: int(min(max(most, 0), math.MaxInt32)),
		DelayMs: int64(min(max(delay, 0), math.MaxInt64/2)), Status: int(min(max(status, 0), math.MaxInt32))}
	if r.Status < 100 || r.Status > 599 {
		// No answer: the category may say what failed.
		if k := ClassifyMessage(category); k != failure.Other {
			r.Kind = k
		}
	}
	return []event.Event{agent.RetryWarning(r, category)}
}

// assistant maps an assistant message's content blocks: text, thinking,
// redacted_thinking and tool_use; blocks of other types are skipped.
func (d *Decoder) assistant(r *reader, o object) []event.Event {
	apiError := r.str(o, "error")
	msg, _ := r.obj(o, "message")
	d.noteModel(r.str(msg, "model"), apiError)
	var evs []event.Event
	var text strings.Builder
	for _, b := range r.blocks(msg) {
		switch r.str(b, "type") {
		case "text":
			text.WriteString(r.str(b, "text"))
		case "thinking":
			evs = d.flushText(evs, &text, apiError)
			evs = append(evs, event.Event{Type: event.TypeThinking, Subtype: "delta", Text: r.str(b, "thinking")},
				event.Event{Type: event.TypeThinking, Subtype: "completed"})
		case "redacted_thinking":
			evs = d.flushText(evs, &text, apiError)
			evs = append(evs, event.Event{Type: event.TypeThinking, Subtype: "completed"})
		case "tool_use":
			evs = d.flushText(evs, &text, apiError)
			t := &event.Tool{CallID: r.str(b, "id"), Name: r.str(b, "name"), Args: raw(b, "input")}
			if r.err != nil || !d.startTool(t) {
				return nil
			}
			evs = append(evs, event.Event{Type: event.TypeToolStarted, Tool: t})
		}
	}
	evs = d.flushText(evs, &text, apiError)
	if apiError != "" {
		d.apiError = apiError
	}
	return evs
}

// assistantWire is assistant for a line read the first way.
func (d *Decoder) assistantWire(w *wireLine) []event.Event {
	apiError := w.Error
	d.noteModel(w.MessageModel, apiError)
	var evs []event.Event
	var text strings.Builder
	for i := range w.Blocks {
		b := &w.Blocks[i]
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			evs = d.flushText(evs, &text, apiError)
			evs = append(evs, event.Event{Type: event.TypeThinking, Subtype: "delta", Text: b.Thinking},
				event.Event{Type: event.TypeThinking, Subtype: "completed"})
		case "redacted_thinking":
			evs = d.flushText(evs, &text, apiError)
			evs = append(evs, event.Event{Type: event.TypeThinking, Subtype: "completed"})
		case "tool_use":
			evs = d.flushText(evs, &text, apiError)
			t := &event.Tool{CallID: b.ID, Name: b.Name, Args: b.Input}
			if !d.startTool(t) {
				return nil
			}
			evs = append(evs, event.Event{Type: event.TypeToolStarted, Tool: t})
		}
	}
	evs = d.flushText(evs, &text, apiError)
	if apiError != "" {
		d.apiError = apiError
	}
	return evs
}

// startTool checks the call t against the tool policy and remembers it
// until its result; false is a policy failure.
func (d *Decoder) startTool(t *event.Tool) bool {
	if fe := d.allow.check(t.Name); fe != nil {
		d.fail(fe.WithDetail(fmt.Sprintf("line %d, tool_use id %s", d.line, agent.Quote(t.CallID, 64))))
		return false
	}
	d.tools[t.CallID] = t
	return true
}

// flushText emits the text gathered so far: a text event, or for an error
// message the api_error warning.
func (d *Decoder) flushText(evs []event.Event, text *strings.Builder, apiError string) []event.Event {
	if text.Len() == 0 {
		return evs
	}
	s := text.String()
	text.Reset()
	if apiError != "" {
		return append(evs, event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: WarnAPIError,
			Message: "the API call failed (" + agent.Quote(apiError, 40) + "): " + detail.Cut(strings.TrimSpace(s), maxAgentMessage)}})
	}
	d.said = true
	return append(evs, event.Event{Type: event.TypeText, Text: s})
}

// user maps a user message's tool_result blocks to tool_completed events.
// Nothing else of a user message is said: it may echo the prompt.
func (d *Decoder) user(r *reader, o object) []event.Event {
	msg, _ := r.obj(o, "message")
	var evs []event.Event
	for _, b := range r.blocks(msg) {
		if r.str(b, "type") != "tool_result" {
			continue
		}
		id := r.str(b, "tool_use_id")
		isError := r.boolean(b, "is_error")
		evs = append(evs, d.completeTool(id, isError, raw(b, "content")))
	}
	return evs
}

// userWire is user for a line read the first way.
func (d *Decoder) userWire(w *wireLine) []event.Event {
	var evs []event.Event
	for i := range w.Blocks {
		if b := &w.Blocks[i]; b.Type == "tool_result" {
			evs = append(evs, d.completeTool(b.ToolUseID, b.IsError, b.Content))
		}
	}
	return evs
}

// completeTool is the tool_completed event of the call id, with the
// started call's name and args.
func (d *Decoder) completeTool(id string, isError bool, result jsontext.Value) event.Event {
	status := "success"
	if isError {
		status = "error"
	}
	t := &event.Tool{CallID: id, Status: status, Result: result}
	if started := d.tools[id]; started != nil {
		t.Name, t.Args = started.Name, started.Args
		delete(d.tools, id)
	}
	return event.Event{Type: event.TypeToolCompleted, Tool: t}
}

// blocks returns the objects of message.content; a string content (a
// prompt's echo) has none.
func (r *reader) blocks(msg object) []object {
	m, ok := msg.get("content")
	switch kind(m, ok) {
	case 'n', '"':
		return nil
	case '[':
	default:
		r.fail(m, `field "message.content" is neither an array nor a string`)
		return nil
	}
	var out []object
	for _, el := range r.elements(m) {
		if kind(el, true) != '{' {
			r.fail(el, `an element of "message.content" is not an object`)
			return nil
		}
		out = append(out, r.members(el))
	}
	return out
}

func (d *Decoder) resultEvent(r *reader, o object) []event.Event {
	res := &event.Result{Subtype: r.str(o, "subtype"), IsError: r.boolean(o, "is_error"), Text: r.str(o, "result"),
		SessionID: r.str(o, "session_id")}
	res.DurationMs, _ = r.integer(o, "duration_ms")
	res.DurationAPIMs, _ = r.integer(o, "duration_api_ms")
	if m, ok := o.get("errors"); kind(m, ok) != 'n' {
		var errs []string
		if kind(m, ok) != '[' {
			r.fail(m, `field "errors" is not an array`)
		} else {
			for _, el := range r.elements(m) {
				if s := r.strOf(el, true, "errors[]"); s != "" {
					errs = append(errs, s)
				}
			}
		}
		// A failed result without a result text says why in errors.
		if res.Text == "" {
			res.Text = strings.Join(errs, "; ")
		}
	}
	if u, ok := r.obj(o, "usage"); ok {
		res.Usage = r.usage(u)
	}
	return d.resultEvents(res)
}

// synthetic is the model of a message Claude Code made itself (an API
// error's text), not a model's.
const synthetic = "<synthetic>"

// noteModel records the model of an assistant message: the model that
// answered, unless the message is Claude Code's own (an API error).
func (d *Decoder) noteModel(model, apiError string) {
	if model != "" && model != synthetic && apiError == "" {
		d.model = model
	}
}

// resultEvents records the result res and returns its events.
func (d *Decoder) resultEvents(res *event.Result) []event.Event {
	res.Model = d.model
	d.result = res
	if failed(res) {
		d.resultErr = d.resultFailure(res)
		return []event.Event{{Type: event.TypeResult, Result: res}}
	}
	if !d.said && res.Text != "" {
		// The agent answered only in its result: that is what it said.
		d.said = true
		return []event.Event{{Type: event.TypeText, Text: res.Text}, {Type: event.TypeResult, Result: res}}
	}
	return []event.Event{{Type: event.TypeResult, Result: res}}
}

// usage reads a result's usage. Anthropic's input_tokens already excludes
// the cache reads and writes (the request's input is the sum of the
// three), so it is InputTokens as it is.
func (r *reader) usage(u object) event.Usage {
	count := func(name string) *int64 {
		if n, ok := r.integer(u, name); ok {
			return &n
		}
		return nil
	}
	return event.Usage{Reported: true, InputTokens: count("input_tokens"), OutputTokens: count("output_tokens"),
		CacheReadTokens: count("cache_read_input_tokens"), CacheWriteTokens: count("cache_creation_input_tokens")}
}

// failed reports whether r reports a failed turn: is_error decides (the
// unauthenticated result is subtype "success" with is_error true), and
// an error subtype (error_max_turns, error_during_execution, ...) fails
// too.
func failed(r *event.Result) bool { return r.IsError || strings.HasPrefix(r.Subtype, "error") }

// resultFailure is the failure an error result reports: the agent's own
// message, bounded, with the kind its text indicates, else the kind of
// the assistant error that preceded it, else the subtype's.
func (d *Decoder) resultFailure(r *event.Result) error {
	msg := strings.TrimSpace(r.Text)
	if msg == "" {
		msg = "(no message)"
	}
	k := ClassifyMessage(r.Text)
	if k == failure.Other {
		k = apiErrorKind(d.apiError)
	}
	if k == failure.Other && r.Subtype == "error_max_budget_usd" {
		k = failure.Quota
	}
	// A failed turn may come with subtype "success" (is_error decides, as
	// when not logged in): the subtype is named only when it says more.
	what := "claude reported an error"
	if r.Subtype != "" && r.Subtype != "success" {
		what += " (" + agent.Quote(r.Subtype, 40) + ")"
	}
	return &failure.Error{Kind: k, Message: what, Detail: detail.Cut(msg, maxAgentMessage)}
}

// Done reports whether the result event has arrived.
func (d *Decoder) Done() bool { return d.result != nil }

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
func (d *Decoder) End(exitCode int, stderrTail string) error {
	switch {
	case d.err != nil:
		return d.err
	case d.result != nil:
		return d.resultErr
	}
	return agent.Unfinished{
		Agent: "claude", First: "a system/init event", Final: "a result event",
		SawFirst: d.init, Lines: d.line, ExitCode: exitCode, StderrTail: stderrTail,
		Classify: ClassifyMessage,
	}.Verdict()
}

func (d *Decoder) fail(err error) error {
	d.err = err
	return err
}

// unknown is the event for a line passed on whole.
func unknown(typ, subtype string, line []byte) event.Event {
	return event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: typ, Subtype: subtype, Raw: bytes.Clone(trimSpace(line))}}
}

// protocol builds a failure.Protocol error for the current line. With a
// line, the message names the byte offset and the detail quotes a bounded
// excerpt around it, unless the line may echo the prompt.
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

// excerptWidth bounds the excerpt of a bad line.
const excerptWidth = 80

// excerpt quotes at most excerptWidth bytes of line around offset. A line
// that mentions "user" in any case (the type of the events that may echo
// the prompt) or holds a \u escape (which may spell it) is never quoted.
func excerpt(line []byte, offset int) string {
	if bytes.Contains(bytes.ToLower(line), []byte(`user`)) || bytes.Contains(line, []byte(`\u`)) {
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
