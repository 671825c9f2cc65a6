package stream

import (
	"encoding/json"
	"unsafe"

	"github.com/cursorkit/cursorkit/failure"
)

// OutputType is the "type" of one line of `cursorkit run --json`.
type OutputType string

// The output line types of SPEC.md, plus OutcomeType for the last line.
const (
	OutputInit          OutputType = "init"
	OutputText          OutputType = "text"
	OutputThinking      OutputType = "thinking"
	OutputToolStarted   OutputType = "tool_started"
	OutputToolCompleted OutputType = "tool_completed"
	OutputResult        OutputType = "result"
	OutputWarning       OutputType = "warning"
	OutputUnknown       OutputType = "unknown"
	OutcomeType         OutputType = "outcome"
)

// Output is one event of a turn as cursorkit reports it: deduplicated text,
// checked tool calls, warnings. Type says which field is set:
//
//	init            Init
//	text            Text (a new piece of assistant text, emitted exactly once)
//	thinking        Thinking (Text holds its text too)
//	tool_started    Tool
//	tool_completed  Tool (Args taken from the started event when the completed one omits them)
//	result          Result
//	warning         Warning
//	unknown         Unknown (an event type this package does not know, passed through)
//
// The pointed-to values are shared with the Turn and must not be modified.
// MarshalJSON writes the camelCase shape documented on AppendJSON.
type Output struct {
	Type     OutputType
	Text     string
	Init     *Init
	Thinking *Thinking
	Tool     *ToolCall
	Result   *Result
	Warning  Warning
	Unknown  *Unknown

	// verbatim, when it is the very string Text is (same bytes in memory,
	// same length), says that Text needs no JSON escaping: printable
	// ASCII without quote or backslash, as Turn found it while decoding.
	// A caller that changes Text breaks the identity, and AppendJSON then
	// escapes as usual.
	verbatim string
}

// textVerbatim reports whether Text is known to need no JSON escaping.
func (o *Output) textVerbatim() bool {
	return len(o.verbatim) == len(o.Text) && len(o.Text) > 0 && unsafe.StringData(o.verbatim) == unsafe.StringData(o.Text)
}

// Warning is something worth telling the caller that does not fail the turn.
// Code is stable (e.g. "banner", "late_close"); Message is for people.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Warning codes this package emits. WarnLateClose is for the caller: the
// agent had to be stopped after its result (SPEC.md "Supervision").
const (
	WarnBanner        = "banner"         // a non-JSON line before the first event, ignored
	WarnDuplicateInit = "duplicate_init" // a second system/init event, passed through as unknown
	WarnLateClose     = "late_close"
)

// AppendJSON appends o as one JSON object (no newline) and returns the
// extended buffer. The shapes:
//
//	{"type":"init","sessionId","model","cwd","permissionMode","apiKeySource"}
//	{"type":"text","text"}
//	{"type":"thinking","subtype","text"}
//	{"type":"tool_started","callId","tool","args"}
//	{"type":"tool_completed","callId","tool","args","status","result"}
//	{"type":"result","subtype","isError","result","durationMs","durationApiMs","sessionId","requestId","usage"}
//	{"type":"warning","code","message"}
//	{"type":"unknown","eventType","subtype","raw"}
//
// args, result (of a tool) and raw are the agent's JSON values verbatim (null
// when absent); usage is {"reported":false} or {"reported":true, ...} with
// the token fields the agent reported.
func (o Output) AppendJSON(dst []byte) []byte {
	w := beginObject(dst)
	w.str("type", string(o.Type))
	switch o.Type {
	case OutputInit:
		in := o.Init
		if in == nil {
			in = &Init{}
		}
		w.str("sessionId", in.SessionID)
		w.str("model", in.Model)
		w.str("cwd", in.CWD)
		w.str("permissionMode", in.PermissionMode)
		w.str("apiKeySource", in.APIKeySource)
	case OutputText:
		if o.textVerbatim() {
			w.key("text")
			w.b = append(w.b, '"')
			w.b = append(w.b, o.Text...)
			w.b = append(w.b, '"')
		} else {
			w.str("text", o.Text)
		}
	case OutputThinking:
		sub := ""
		if o.Thinking != nil {
			sub = o.Thinking.Subtype
		}
		w.str("subtype", sub)
		w.str("text", o.Text)
	case OutputToolStarted, OutputToolCompleted:
		t := o.Tool
		if t == nil {
			t = &ToolCall{}
		}
		w.str("callId", t.CallID)
		w.str("tool", t.Name)
		w.raw("args", t.Args)
		if o.Type == OutputToolCompleted {
			if t.Result != nil {
				w.str("status", t.Result.Status)
				w.raw("result", t.Result.Value)
			} else {
				w.raw("status", nil)
				w.raw("result", nil)
			}
		}
	case OutputResult:
		r := o.Result
		if r == nil {
			r = &Result{}
		}
		w.str("subtype", r.Subtype)
		w.bool("isError", r.IsError)
		w.str("result", r.Text)
		w.int("durationMs", r.DurationMs)
		w.int("durationApiMs", r.DurationAPIMs)
		w.str("sessionId", r.SessionID)
		w.str("requestId", r.RequestID)
		w.key("usage")
		w.b = r.Usage.AppendJSON(w.b)
	case OutputWarning:
		w.str("code", o.Warning.Code)
		w.str("message", o.Warning.Message)
	case OutputUnknown:
		u := o.Unknown
		if u == nil {
			u = &Unknown{}
		}
		w.str("eventType", u.Type)
		w.str("subtype", u.Subtype)
		w.raw("raw", u.Raw)
	}
	return w.end()
}

// MarshalJSON implements json.Marshaler with AppendJSON's shapes.
func (o Output) MarshalJSON() ([]byte, error) { return o.AppendJSON(nil), nil }

// AppendJSON appends u as {"reported":bool, ...the fields reported}.
func (u Usage) AppendJSON(dst []byte) []byte {
	w := beginObject(dst)
	w.bool("reported", u.Reported)
	for _, f := range [...]struct {
		name string
		v    *int64
	}{{"inputTokens", u.InputTokens}, {"outputTokens", u.OutputTokens},
		{"cacheReadTokens", u.CacheReadTokens}, {"cacheWriteTokens", u.CacheWriteTokens}} {
		if f.v != nil {
			w.int(f.name, *f.v)
		}
	}
	return w.end()
}

// Outcome statuses.
const (
	StatusDone      = "done"
	StatusError     = "error"
	StatusCancelled = "cancelled"
)

// Outcome is the last line of `cursorkit run --json`:
//
//	{"type":"outcome","status","kind","message","sessionId","model","usage","warnings"}
//
// status is done, error or cancelled; kind is the failure kind (null when
// done); message is the failure's bounded text (absent when done);
// sessionId is the id `--resume` takes (null when the agent never reported
// one); model is the display name init reported (absent when unknown).
type Outcome struct {
	Status    string
	Kind      failure.Kind
	Message   string
	SessionID string
	Model     string
	Usage     Usage
	Warnings  []Warning
}

// MarshalJSON writes the shape documented on Outcome.
func (o Outcome) MarshalJSON() ([]byte, error) {
	type wire struct {
		Type      OutputType `json:"type"`
		Status    string     `json:"status"`
		Kind      *string    `json:"kind"`
		Message   string     `json:"message,omitempty"`
		SessionID *string    `json:"sessionId"`
		Model     string     `json:"model,omitempty"`
		Usage     Usage      `json:"usage"`
		Warnings  []Warning  `json:"warnings"`
	}
	out := wire{Type: OutcomeType, Status: o.Status, Message: o.Message, Model: o.Model,
		Usage: o.Usage, Warnings: o.Warnings}
	if o.Kind != "" {
		k := string(o.Kind)
		out.Kind = &k
	}
	if o.SessionID != "" {
		out.SessionID = &o.SessionID
	}
	if out.Warnings == nil {
		out.Warnings = []Warning{}
	}
	return json.Marshal(out)
}
