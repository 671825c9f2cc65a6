package claude

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"math"
	"reflect"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/turn"
)

// This file holds the wire types a stdout line is read into with
// encoding/json/v2, as Node's JSON.parse reads it (Claude Code is a
// JavaScript program): turn.UnmarshalOptions. A line is read for its
// type first, then for only the members that type uses, which must have
// the kind Claude Code sends (null reads as absent); an event of another
// type passes whole whatever its members hold. A content block is read
// the same way within its line (turn.UnmarshalTyped).

// wireLine is what a line is read into: the members of every event type
// the Decoder knows, each type reading its own.
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
	*w = wireLine{Message: wireMessage{messageContent: messageContent{Content: blocks{list: w.Message.Content.list[:0]}}}}
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
	Model string `json:"model"` // assistant
	messageContent
}

// messageContent is a message's content.
type messageContent struct {
	Content blocks `json:"content"`
}

// userMessage is the message of a user event read alone: its content; its
// model may hold anything.
type userMessage struct {
	*messageContent
}

// blocks is message.content: an array of blocks, or a string (the
// prompt's echo) or null, which hold none. Each block is read for the
// members of its type that its message's role uses (wireBlock.members).
type blocks struct {
	list []wireBlock
	line []byte // the line being read, whose blocks are read from its bytes
	user bool   // a user message's blocks, else an assistant's
}

// UnmarshalJSONFrom reads an array of blocks, a string or null.
func (c *blocks) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	c.list = c.list[:0]
	switch k := dec.PeekKind(); k {
	case '[':
	case '"', 'n', 0: // 0: not JSON, which skipping says
		return dec.SkipValue()
	default:
		return &json.SemanticError{JSONKind: k, GoType: reflect.TypeFor[[]wireBlock]()}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != ']' {
		c.list = append(c.list, wireBlock{})
		b := &c.list[len(c.list)-1]
		if err := turn.UnmarshalTyped(dec, c.line, []turn.Member{{Name: "type", Value: &b.Type}},
			func() any { return b.members(c.user) }); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// wireBlock is a block of message.content: its type, and the members of
// the block types the Decoder reads.
type wireBlock struct {
	Type string
	textBlock
	thinkingBlock
	toolUseBlock
	toolResultBlock
}

// members is the Go value the members of b's type are read into: in a
// user message only a tool_result's, in an assistant message a text,
// thinking or tool_use block's; nil for a block of another type, whose
// members may hold anything.
func (b *wireBlock) members(user bool) any {
	switch {
	case user && b.Type == "tool_result":
		return &b.toolResultBlock
	case user:
		return nil
	case b.Type == "text":
		return &b.textBlock
	case b.Type == "thinking":
		return &b.thinkingBlock
	case b.Type == "tool_use":
		return &b.toolUseBlock
	}
	return nil
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

// present is v, nil when it is null.
func present(v jsontext.Value) jsontext.Value {
	if v.Kind() == 'n' {
		return nil
	}
	return v
}
