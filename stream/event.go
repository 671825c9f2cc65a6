package stream

import (
	"encoding/json"
	"strings"
)

// Event is one decoded line of `cursor-agent --print --output-format
// stream-json`: one of *Init, *User, *Thinking, *Assistant, *ToolCall,
// *Result or *Unknown. EventType returns the line's "type" field.
type Event interface {
	EventType() string
}

// The "type" values of the events this package knows.
const (
	TypeSystem    = "system"
	TypeUser      = "user"
	TypeThinking  = "thinking"
	TypeAssistant = "assistant"
	TypeToolCall  = "tool_call"
	TypeResult    = "result"
)

// Subtypes of thinking and tool_call events.
const (
	SubtypeInit      = "init"      // system
	SubtypeDelta     = "delta"     // thinking
	SubtypeCompleted = "completed" // thinking, tool_call
	SubtypeStarted   = "started"   // tool_call
)

// Init is the `system`/`init` event that opens every turn.
type Init struct {
	SessionID      string // session_id: the id `--resume` takes
	Model          string // model: a display name, which may differ from the catalog's label
	CWD            string // cwd: the agent's working directory
	PermissionMode string // permissionMode
	APIKeySource   string // apiKeySource, e.g. "login" or "env"
}

// User is the agent's echo of the prompt. Its text is the caller's prompt:
// it is never written to outputs, errors or excerpts.
type User struct {
	SessionID string
	Text      string // the text blocks of message.content, concatenated
}

// Thinking is a piece of the model's reasoning: a "delta" with text, or the
// "completed" mark that ends a thinking phase.
type Thinking struct {
	Subtype      string // "delta", "completed", or another value as reported
	Text         string
	SessionID    string
	TimestampMs  int64
	HasTimestamp bool
}

// Assistant is one assistant message event. Text is the concatenation of
// the "text" blocks of message.content. The same text may arrive more than
// once (see the package documentation); Turn emits it once.
type Assistant struct {
	Text         string
	ModelCallID  string // model_call_id, "" when absent
	TimestampMs  int64  // timestamp_ms, valid when HasTimestamp
	HasTimestamp bool
	SessionID    string
}

// ToolCall is a `tool_call` event. Name is the first key of the tool_call
// object that ends in "ToolCall", without that suffix ("readToolCall" is
// "read"); it is "" when no key has that shape.
type ToolCall struct {
	Subtype     string // "started", "completed", or another value as reported
	CallID      string // opaque; may contain any character, a newline included
	Name        string
	Key         string          // the key Name came from, e.g. "readToolCall"
	Args        json.RawMessage // the tool's args as reported; nil when absent
	Result      *ToolResult     // completed events only; nil when absent
	ModelCallID string
	SessionID   string
	TimestampMs int64
}

// ToolResult is the result of a completed tool call: Status is the first key
// of the result object ("success", "failure" or "rejected" as Cursor reports
// them) and Value is that key's raw value.
type ToolResult struct {
	Status string
	Value  json.RawMessage
}

// Result is the `result` event that closes every turn.
type Result struct {
	Subtype       string // "success" or "error" as reported
	IsError       bool
	Text          string // result: the agent's complete answer, or its error message
	DurationMs    int64
	DurationAPIMs int64
	SessionID     string
	RequestID     string
	Usage         Usage
}

// Failed reports whether the result reports a failed turn: is_error true or
// subtype "error".
func (r *Result) Failed() bool { return r.IsError || r.Subtype == "error" }

// Usage is the token usage a result reports, kept exactly as reported: a
// field the agent omitted (or sent as null) stays nil. Reported is false when
// the result carried no usage object at all.
type Usage struct {
	Reported         bool   `json:"reported"`
	InputTokens      *int64 `json:"inputTokens,omitempty"` // excluding cache reads and writes
	OutputTokens     *int64 `json:"outputTokens,omitempty"`
	CacheReadTokens  *int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens *int64 `json:"cacheWriteTokens,omitempty"`
}

// Unknown is any event whose type this package does not know (or a system
// event other than init), passed through with its raw line.
type Unknown struct {
	Type    string // "" when the line has no string "type"
	Subtype string
	Raw     json.RawMessage // the whole line, without its line terminator
}

func (*Init) EventType() string      { return TypeSystem }
func (*User) EventType() string      { return TypeUser }
func (*Thinking) EventType() string  { return TypeThinking }
func (*Assistant) EventType() string { return TypeAssistant }
func (*ToolCall) EventType() string  { return TypeToolCall }
func (*Result) EventType() string    { return TypeResult }
func (u *Unknown) EventType() string { return u.Type }

// summaryArgs are the args that say most about a call, in the order tried.
func summaryArgKeys() []string {
	return []string{"path", "command", "pattern", "globPattern", "query", "url", "targetDirectory", "name"}
}

// Summary describes the call in one short line for people, e.g.
// `read README.md` or `shell go test ./...`: the tool name and its most
// telling argument, control characters replaced, at most about 120 bytes.
func (t *ToolCall) Summary() string {
	name := t.Name
	if name == "" {
		name = "(unidentified tool)"
	}
	var args map[string]any
	if len(t.Args) == 0 || json.Unmarshal(t.Args, &args) != nil {
		return oneLine(name, 120)
	}
	for _, k := range summaryArgKeys() {
		if v, ok := args[k].(string); ok && v != "" {
			return oneLine(name+" "+v, 120)
		}
	}
	return oneLine(name, 120)
}

// oneLine replaces control characters with spaces and bounds s.
func oneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return truncate(s, max)
}
