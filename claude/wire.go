package claude

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"math"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/event"
)

// This file holds the wire types a stdout line is read into with
// encoding/json/v2, as Node's JSON.parse reads it (Claude Code is a
// JavaScript program): agent.UnmarshalOptions. A line is read for its
// type first, then for only the members that type uses, which must have
// the kind Claude Code sends (null reads as absent); an event of another
// type passes whole whatever its members hold.

// wireLine is a line read as every event type the Decoder knows at once.
type wireLine struct {
	Type      string      `json:"type"`
	Subtype   string      `json:"subtype"`    // system, result
	SessionID string      `json:"session_id"` // system/init, result
	Error     string      `json:"error"`      // system/api_retry, assistant
	Message   wireMessage `json:"message"`    // assistant, user
	initMembers
	retryMembers
	resultMembers
}

// reset empties w for the next line, keeping its blocks' capacity.
func (w *wireLine) reset() {
	*w = wireLine{Message: wireMessage{Content: w.Message.Content[:0]}}
}

// kind is what the line is, by its type and a system event's subtype.
func (w *wireLine) kind() eventKind {
	switch w.Type {
	case "system":
		switch w.Subtype {
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

// systemSubtype is the subtype an unknown event is passed on with: a
// system event's; the Decoder reads no other type's.
func (w *wireLine) systemSubtype() string {
	if w.Type == "system" {
		return w.Subtype
	}
	return ""
}

// initMembers are the members of system/init besides session_id.
type initMembers struct {
	Model          string `json:"model"`
	CWD            string `json:"cwd"`
	PermissionMode string `json:"permissionMode"`
	APIKeySource   string `json:"apiKeySource"`
}

// retryMembers are the numbers of system/api_retry. Claude Code's numbers
// are JavaScript's: any of them may have a fraction.
type retryMembers struct {
	Attempt      *float64 `json:"attempt"`
	MaxRetries   *float64 `json:"max_retries"`
	RetryDelayMs *float64 `json:"retry_delay_ms"`
	ErrorStatus  *float64 `json:"error_status"`
}

// resultMembers are the members of a result besides subtype and
// session_id.
type resultMembers struct {
	IsError       bool       `json:"is_error"`
	Result        string     `json:"result"`
	DurationMs    *float64   `json:"duration_ms"`
	DurationAPIMs *float64   `json:"duration_api_ms"`
	Errors        []string   `json:"errors"`
	Usage         *wireUsage `json:"usage"`
}

// wireUsage is a result's usage.
type wireUsage struct {
	InputTokens      *float64 `json:"input_tokens"`
	OutputTokens     *float64 `json:"output_tokens"`
	CacheReadTokens  *float64 `json:"cache_read_input_tokens"`
	CacheWriteTokens *float64 `json:"cache_creation_input_tokens"`
}

// event is the reported usage. Anthropic's input_tokens already excludes
// the cache reads and writes (the request's input is the sum of the
// three), so it is InputTokens as it is.
func (u *wireUsage) event() event.Usage {
	count := func(n *float64) *int64 {
		if n == nil {
			return nil
		}
		v := integer(n)
		return &v
	}
	return event.Usage{Reported: true, InputTokens: count(u.InputTokens), OutputTokens: count(u.OutputTokens),
		CacheReadTokens: count(u.CacheReadTokens), CacheWriteTokens: count(u.CacheWriteTokens)}
}

// integer is the number n truncated to an int64 and clamped to its range,
// 0 when absent.
func integer(n *float64) int64 {
	switch {
	case n == nil:
		return 0
	case *n >= math.MaxInt64:
		return math.MaxInt64
	case *n <= math.MinInt64:
		return math.MinInt64
	}
	return int64(*n)
}

// wireMessage is the message of an assistant or user event.
type wireMessage struct {
	Model   string            `json:"model"` // assistant
	Content blocks[wireBlock] `json:"content"`
}

// assistantMessage is the message of an assistant event read alone:
// its blocks as assistantBlock reads them.
type assistantMessage struct {
	Model   string                 `json:"model"`
	Content blocks[assistantBlock] `json:"content"`
}

// userMessage is the message of a user event read alone: its blocks as
// userBlock reads them.
type userMessage struct {
	Content blocks[userBlock] `json:"content"`
}

// blocks is message.content: an array of blocks, each read as a B, or a
// string (the prompt's echo) or null, which hold none.
type blocks[B any] []B

// UnmarshalJSONFrom reads an array of blocks, a string or null.
func (c *blocks[B]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch k := dec.PeekKind(); k {
	case '[':
		return json.UnmarshalDecode(dec, (*[]B)(c))
	case '"', 'n':
		*c = (*c)[:0]
		return dec.SkipValue()
	case 0:
		return dec.SkipValue() // not JSON: skipping says where
	default:
		return &json.SemanticError{JSONKind: k}
	}
}

// wireBlock is a block of message.content read with the members of every
// block type the Decoder reads.
type wireBlock struct {
	Type string `json:"type"`
	textBlock
	thinkingBlock
	toolUseBlock
	toolResultBlock
}

// UnmarshalJSONFrom reads a block, which must be an object.
func (b *wireBlock) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if err := object(dec); err != nil {
		return err
	}
	type plain wireBlock
	return json.UnmarshalDecode(dec, (*plain)(b))
}

// The members of each block type the Decoder reads.
type (
	textBlock struct {
		Text string `json:"text"`
	}
	thinkingBlock struct {
		Thinking string `json:"thinking"`
	}
	toolUseBlock struct {
		ID    string         `json:"id"`
		Name  string         `json:"name"`
		Input jsontext.Value `json:"input"`
	}
	toolResultBlock struct {
		ToolUseID string         `json:"tool_use_id"`
		IsError   bool           `json:"is_error"`
		Content   jsontext.Value `json:"content"`
	}
)

// assistantBlock is a block of an assistant message read alone: only the
// members of its type, for a text, thinking or tool_use block, else none.
type assistantBlock wireBlock

// UnmarshalJSON reads the block raw. json/v2 calls it with the block's
// bytes and places its errors in the line.
func (b *assistantBlock) UnmarshalJSON(raw []byte) error {
	return (*wireBlock)(b).readAs(raw, func(b *wireBlock) any {
		switch b.Type {
		case "text":
			return &b.textBlock
		case "thinking":
			return &b.thinkingBlock
		case "tool_use":
			return &b.toolUseBlock
		}
		return nil
	})
}

// userBlock is a block of a user message read alone: only the members of
// a tool_result block, none of any other.
type userBlock wireBlock

// UnmarshalJSON reads the block raw, as assistantBlock's does.
func (b *userBlock) UnmarshalJSON(raw []byte) error {
	return (*wireBlock)(b).readAs(raw, func(b *wireBlock) any {
		if b.Type == "tool_result" {
			return &b.toolResultBlock
		}
		return nil
	})
}

// readAs reads raw, one block, in steps: its type, then the members
// members returns for it (nil for none).
func (b *wireBlock) readAs(raw []byte, members func(*wireBlock) any) error {
	opts := agent.UnmarshalOptions()
	var h wireHead
	if err := json.Unmarshal(raw, &h, opts); err != nil {
		return err
	}
	b.Type = h.Type
	if m := members(b); m != nil {
		return json.Unmarshal(raw, m, opts)
	}
	return nil
}

// wireHead is the type of an event or a block, read alone.
type wireHead struct {
	Type string `json:"type"`
}

// UnmarshalJSONFrom reads an object's type.
func (h *wireHead) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if err := object(dec); err != nil {
		return err
	}
	type plain wireHead
	return json.UnmarshalDecode(dec, (*plain)(h))
}

// object fails unless the next value is an object: json/v2 reads null
// into a struct as its zero value, and JSON.parse's null is no event and
// no block.
func object(dec *jsontext.Decoder) error {
	if k := dec.PeekKind(); k != '{' && k != 0 { // 0: not JSON, which reading says
		return &json.SemanticError{JSONKind: k}
	}
	return nil
}

// present is v, nil when it is null.
func present(v jsontext.Value) jsontext.Value {
	if v.Kind() == 'n' {
		return nil
	}
	return v
}
