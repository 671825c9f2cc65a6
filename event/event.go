// Package event is the agent-neutral model of one agent CLI turn: the
// events every backend's decoder produces from the agent's output, in the
// order the agent produced them. An Event marshals (encoding/json/v2) to
// one line of `cursorkit run --json`; docs/contract.md lists the shapes.
//
// The events of a turn, by type:
//
//	init            once, first: the session the agent opened
//	text            a new piece of what the agent said, each piece once
//	thinking        a piece of the model's reasoning, or the end of it
//	tool_started    the agent started a tool the caller's policy allows
//	tool_completed  that tool's result
//	warning         something worth saying that does not fail the turn
//	unknown         an event of the agent's that no decoder knows, verbatim
//	result          once, last: the agent's own verdict and usage
//
// and, between two agents' turns, one event of cursorkit's own:
//
//	cross-runtime-fallback-engaged  the primary agent's turn failed in a
//	                                way another agent may answer, and the
//	                                prompt now goes to the fallback
//
// Concatenating the Text of the text events gives what the agent said,
// once: decoders drop the copies some agents send of text already sent.
//
// Every value an Event holds is its own: decoders never hand out views of
// buffers they reuse, so events may be kept, sent to other goroutines or
// compared after the turn.
package event

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"io"

	"github.com/cursorkit/cursorkit/failure"
)

// Type says what an Event reports, and which of its fields are set.
type Type string

// The event types, each with the fields it sets.
const (
	TypeInit          Type = "init"           // Init
	TypeText          Type = "text"           // Text
	TypeThinking      Type = "thinking"       // Subtype, Text
	TypeToolStarted   Type = "tool_started"   // Tool
	TypeToolCompleted Type = "tool_completed" // Tool
	TypeResult        Type = "result"         // Result
	TypeWarning       Type = "warning"        // Warning
	TypeUnknown       Type = "unknown"        // Unknown
	// TypeFallbackEngaged is not an agent's: package fallback emits it
	// between the primary's failed turn and the fallback's turn.
	TypeFallbackEngaged Type = "cross-runtime-fallback-engaged" // Fallback
)

// Event is one event of a turn. Type says which fields are set; the others
// are zero. A nil pointer where Type wants one marshals as that struct's
// zero value.
type Event struct {
	Type Type

	// Text is, for a text event, a new piece of the agent's answer (each
	// piece is reported once); for a thinking event, a piece of reasoning.
	Text string

	// Subtype is a thinking event's phase as the agent reported it:
	// "delta" (a piece of reasoning in Text) or "completed" (its end).
	Subtype string

	Init    *Init    // init
	Tool    *Tool    // tool_started, tool_completed
	Result  *Result  // result
	Warning *Warning // warning
	Unknown *Unknown // unknown

	Fallback *Fallback // cross-runtime-fallback-engaged
}

// Fallback is the record of one cross-runtime handoff (docs/contract.md,
// "Cross-runtime fallback"): ids and outcomes only, never an error's prose
// or the transcript's text.
type Fallback struct {
	// SessionPurpose is what the session is for, as its owner named it
	// (e.g. "run").
	SessionPurpose string `json:"sessionPurpose"`
	// The primary's and the fallback's agent (cursorkit's name: claude,
	// cursor...), provider (anthropic, cursor...) and model ids; a model
	// is "" when the agent reported none and none was asked for.
	PrimaryAgent     string `json:"primaryAgent"`
	PrimaryProvider  string `json:"primaryProvider"`
	PrimaryModel     string `json:"primaryModel"`
	FallbackAgent    string `json:"fallbackAgent"`
	FallbackProvider string `json:"fallbackProvider"`
	FallbackModel    string `json:"fallbackModel"`
	// TriggerPoint is where the primary's failure showed: "result" (its
	// error result or error event), "exit" (it exited non-zero without
	// one) or "retry" (the fallback was asked to engage at the primary's
	// retry notices, and it was stopped at one).
	TriggerPoint string `json:"triggerPoint"`
	// PromptIndex is the 1-based number of the prompt that failed in the
	// session.
	PromptIndex int `json:"promptIndex"`
	// FailureCategory is "authentication", "rate-limit" or
	// "model-selection".
	FailureCategory string `json:"failureCategory"`
	// ContextTransferred reports whether a transcript went with the
	// first swapped prompt.
	ContextTransferred bool `json:"contextTransferred"`
}

// Init is the session an agent opened for the turn.
type Init struct {
	SessionID      string // the id that resumes the session in a later turn
	Model          string // the model as the agent names it, maybe a display name
	CWD            string // the agent's working directory
	PermissionMode string // as the agent reports it, e.g. "default"
	APIKeySource   string // where its credentials came from, e.g. "login" or "env"
}

// Tool is one tool call, started or completed. A completed call's Name and
// Args are those of its started event when the agent does not repeat them.
type Tool struct {
	CallID string         // the agent's id of the call; any text, newlines included
	Name   string         // the tool, e.g. "read" or "shell"
	Args   jsontext.Value // the tool's arguments as the agent reported them; nil when absent

	// Status is how a completed call ended, as the agent reported it
	// (Cursor: "success", "failure" or "rejected"); "" when not reported.
	Status string
	// Result is the value the agent reported with Status; nil when absent.
	Result jsontext.Value
}

// Result is the agent's last event: its verdict on the turn.
type Result struct {
	Subtype       string // as reported, e.g. "success" or "error"
	IsError       bool   // the agent reports that the turn failed
	Text          string // the agent's complete answer, or its error message
	DurationMs    int64  // the turn's wall time, as the agent measured it
	DurationAPIMs int64  // the time spent in model calls
	SessionID     string
	RequestID     string
	// Model is the model that answered, when the agent's stream names it
	// ("" otherwise): the init event's model may be a setting ("auto")
	// or the CLI's own name for it.
	Model string
	Usage Usage
}

// Usage is the token usage a result reports, kept exactly as reported: a
// count the agent omitted (or sent as null) stays nil, and Reported is
// false when it reported no usage at all. It marshals as
// {"reported":false} or {"reported":true, ...the counts reported}.
type Usage struct {
	Reported         bool   `json:"reported"`
	InputTokens      *int64 `json:"inputTokens,omitzero"` // excluding cache reads and writes
	OutputTokens     *int64 `json:"outputTokens,omitzero"`
	CacheReadTokens  *int64 `json:"cacheReadTokens,omitzero"`
	CacheWriteTokens *int64 `json:"cacheWriteTokens,omitzero"`
}

// Warning is something worth telling the caller that does not fail the
// turn. Code is stable (one of the Warn constants, or a caller's own);
// Message is for people.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Retry, on a WarnRetry warning, is what the agent said of the retry;
	// nil on every other warning.
	Retry *Retry `json:"retry,omitzero"`
}

// Retry is an agent's notice that a model request failed and that it
// will make it again: Claude Code's api_retry event, Codex's
// "Reconnecting... N/M", Gemini CLI's "Attempt N failed" on stderr.
type Retry struct {
	// Attempt is the retry's number, 1 for the first.
	Attempt int `json:"attempt"`
	// Max is the most retries the agent said it makes; 0 when unsaid.
	Max int `json:"max,omitzero"`
	// DelayMs is the wait before the retry, when the agent said it.
	DelayMs int64 `json:"delayMs,omitzero"`
	// Status is the failed request's HTTP status; 0 when the request got
	// no answer (a connection that failed or broke).
	Status int `json:"status,omitzero"`
	// Kind is what failed, as a failure kind: rate_limited (429, or the
	// API overloaded), auth (401, 403), network (no answer), ...
	Kind failure.Kind `json:"kind"`
}

// Warning codes.
const (
	// WarnBanner: a line that is not an event before the first event (an
	// agent's banner or update notice), skipped.
	WarnBanner = "banner"
	// WarnDuplicateInit: a second init event, passed on as unknown.
	WarnDuplicateInit = "duplicate_init"
	// WarnLateClose: the agent did not exit within its grace after its
	// result and was stopped (docs/contract.md, "Supervision").
	WarnLateClose = "late_close"
	// WarnRetry: the agent retries a failed model request; the warning's
	// Retry says what it said of it.
	WarnRetry = "retry"
)

// Unknown is an event of the agent's that its decoder does not know,
// passed on whole.
type Unknown struct {
	Type    string         // the agent's own event type; "" when it has none
	Subtype string         // the agent's own subtype; "" when it has none
	Raw     jsontext.Value // the agent's line, verbatim but for surrounding space
}

// MarshalJSONTo writes e as one JSON object, its members in this order:
//
//	{"type":"init","sessionId","model","cwd","permissionMode","apiKeySource"}
//	{"type":"text","text"}
//	{"type":"thinking","subtype","text"}
//	{"type":"tool_started","callId","tool","args"}
//	{"type":"tool_completed","callId","tool","args","status","result"}
//	{"type":"result","subtype","isError","result","durationMs","durationApiMs","sessionId","requestId","model","usage"}
//	{"type":"warning","code","message","retry"}
//	{"type":"unknown","eventType","subtype","raw"}
//	{"type":"cross-runtime-fallback-engaged","sessionPurpose","primaryAgent","primaryProvider","primaryModel",
//	  "fallbackAgent","fallbackProvider","fallbackModel","triggerPoint","promptIndex","failureCategory","contextTransferred"}
//
// args, result (a tool's) and raw are the agent's JSON values, null when
// absent; status is null when absent or empty; usage is Usage's shape;
// retry is Retry's shape, and absent from a warning without one. An event of
// another Type is {"type":...} alone.
//
// Strings are written as enc's options say. Use NewEncoder for the
// encoder of `cursorkit run --json`: with a stricter one (json.Marshal's
// defaults), an event whose agent line held invalid UTF-8 or a repeated
// member name in args, result or raw fails to marshal.
func (e Event) MarshalJSONTo(enc *jsontext.Encoder) error {
	w := writer{enc: enc}
	w.token(jsontext.BeginObject)
	w.str("type", string(e.Type))
	switch e.Type {
	case TypeInit:
		w.init(orZero(e.Init))
	case TypeText:
		w.str("text", e.Text)
	case TypeThinking:
		w.str("subtype", e.Subtype)
		w.str("text", e.Text)
	case TypeToolStarted, TypeToolCompleted:
		w.tool(orZero(e.Tool), e.Type == TypeToolCompleted)
	case TypeResult:
		w.result(orZero(e.Result))
	case TypeWarning:
		w.warning(orZero(e.Warning))
	case TypeUnknown:
		u := orZero(e.Unknown)
		w.str("eventType", u.Type)
		w.str("subtype", u.Subtype)
		w.raw("raw", u.Raw)
	case TypeFallbackEngaged:
		w.fallback(orZero(e.Fallback))
	}
	w.token(jsontext.EndObject)
	return w.err
}

// orZero is p, or a zero T when p is nil: a nil pointer an event's Type
// wants marshals as its struct's zero value.
func orZero[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}

// NewEncoder returns the encoder `cursorkit run --json` writes events
// with: one event per line, no HTML escaping, U+2028 and U+2029 escaped
// (so a line is also a JavaScript literal), and the agent's own values
// (args, a tool's result, raw) written as the agent sent them, compacted:
// their strings are not re-escaped, and what a decoder accepts from an
// agent (invalid UTF-8, a member name given twice) is accepted again.
// Invalid UTF-8 in a string field is written as U+FFFD.
//
// Like every jsontext.Encoder, it writes each line to w as soon as the
// line is complete: give it a bufio.Writer (flushed when the input pauses)
// to write many events at once.
func NewEncoder(w io.Writer) *jsontext.Encoder {
	return jsontext.NewEncoder(w,
		jsontext.EscapeForJS(true),
		jsontext.AllowInvalidUTF8(true),
		jsontext.AllowDuplicateNames(true),
		jsontext.PreserveRawStrings(true))
}

// writer writes the members of one object, keeping the first error.
type writer struct {
	enc *jsontext.Encoder
	err error
}

func (w *writer) token(t jsontext.Token) {
	if w.err == nil {
		w.err = w.enc.WriteToken(t)
	}
}

func (w *writer) name(k string) { w.token(jsontext.String(k)) }

func (w *writer) str(k, v string) {
	w.name(k)
	w.token(jsontext.String(v))
}

func (w *writer) int(k string, v int64) {
	w.name(k)
	w.token(jsontext.Int(v))
}

// raw writes k with the agent's value v, or null when v is empty.
func (w *writer) raw(k string, v jsontext.Value) {
	w.name(k)
	if len(v) == 0 {
		w.token(jsontext.Null)
	} else if w.err == nil {
		w.err = w.enc.WriteValue(v)
	}
}

func (w *writer) init(in *Init) {
	w.str("sessionId", in.SessionID)
	w.str("model", in.Model)
	w.str("cwd", in.CWD)
	w.str("permissionMode", in.PermissionMode)
	w.str("apiKeySource", in.APIKeySource)
}

// tool writes a started call's members, and a completed one's.
func (w *writer) tool(t *Tool, completed bool) {
	w.str("callId", t.CallID)
	w.str("tool", t.Name)
	w.raw("args", t.Args)
	if !completed {
		return
	}
	w.name("status")
	if t.Status == "" {
		w.token(jsontext.Null)
	} else {
		w.token(jsontext.String(t.Status))
	}
	w.raw("result", t.Result)
}

func (w *writer) result(r *Result) {
	w.str("subtype", r.Subtype)
	w.name("isError")
	w.token(jsontext.Bool(r.IsError))
	w.str("result", r.Text)
	w.int("durationMs", r.DurationMs)
	w.int("durationApiMs", r.DurationAPIMs)
	w.str("sessionId", r.SessionID)
	w.str("requestId", r.RequestID)
	w.str("model", r.Model)
	w.name("usage")
	w.value(r.Usage)
}

func (w *writer) warning(wa *Warning) {
	w.str("code", wa.Code)
	w.str("message", wa.Message)
	if wa.Retry != nil {
		w.name("retry")
		w.value(wa.Retry)
	}
}

func (w *writer) fallback(f *Fallback) {
	w.str("sessionPurpose", f.SessionPurpose)
	w.str("primaryAgent", f.PrimaryAgent)
	w.str("primaryProvider", f.PrimaryProvider)
	w.str("primaryModel", f.PrimaryModel)
	w.str("fallbackAgent", f.FallbackAgent)
	w.str("fallbackProvider", f.FallbackProvider)
	w.str("fallbackModel", f.FallbackModel)
	w.str("triggerPoint", f.TriggerPoint)
	w.int("promptIndex", int64(f.PromptIndex))
	w.str("failureCategory", f.FailureCategory)
	w.name("contextTransferred")
	w.token(jsontext.Bool(f.ContextTransferred))
}

// value writes v, one of the tagged types, with json/v2.
func (w *writer) value(v any) {
	if w.err == nil {
		w.err = json.MarshalEncode(w.enc, v)
	}
}
