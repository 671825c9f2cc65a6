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
// once, into the members of every block type (wireBlock), of which only
// those its type uses must have their kind.

// wireLine is what a line is read into: the members of every event type
// the decoder knows, each type reading its own.
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
// system event's; the decoder reads no other type's.
func (w *wireLine) systemSubtype() string {
	if w.Type == "system" {
		return w.Subtype
	}
	return ""
}

// views are what readAs reads a line into, one view of a wireLine's
// members for each kind of event, and a user event's message.
type views struct {
	init        initView
	retry       retryView
	assistant   assistantView
	user        userView
	userMessage userMessage
	result      resultView
}

// initView is a system/init event's members.
type initView struct {
	SessionID *string `json:"session_id"`
	*initMembers
}

// retryView is a system/api_retry event's members.
type retryView struct {
	Error *string `json:"error"`
	*retryMembers
}

// assistantView is an assistant event's members.
type assistantView struct {
	Error   *string      `json:"error"`
	Message *wireMessage `json:"message"`
}

// userView is a user event's members.
type userView struct {
	Message *userMessage `json:"message"`
}

// resultView is a result event's members.
type resultView struct {
	Subtype   *string `json:"subtype"`
	SessionID *string `json:"session_id"`
	*resultMembers
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
// prompt's echo) or null, which hold none.
type blocks struct {
	list []wireBlock
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
		if k := dec.PeekKind(); k == 'n' {
			// json/v2 reads null into a struct as nothing: a block is an object.
			v, err := dec.ReadValue()
			if err != nil {
				return err
			}
			return &json.SemanticError{ByteOffset: dec.InputOffset() - int64(len(v)), JSONPointer: dec.StackPointer(),
				JSONKind: k, GoType: reflect.TypeFor[wireBlock]()}
		}
		c.list = append(c.list, wireBlock{})
		if err := json.UnmarshalDecode(dec, &c.list[len(c.list)-1]); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// appendMembers appends to errs the errors of the members the blocks'
// types use in a message of the role user says (wireBlock.appendMembers).
func (c *blocks) appendMembers(errs []error, user bool) []error {
	for i := range c.list {
		errs = c.list[i].appendMembers(errs, user)
	}
	return errs
}

// wireBlock is a block of message.content, read once: its type, and the
// members of every block type the decoder reads, each a turn.Field whose
// kind matters only when the block's type uses it (members).
type wireBlock struct {
	Type string `json:"type"`

	Text     turn.Field[string]         `json:"text"`     // text
	Thinking turn.Field[string]         `json:"thinking"` // thinking
	ID       turn.Field[string]         `json:"id"`       // tool_use
	Name     turn.Field[string]         `json:"name"`     // tool_use
	Input    turn.Field[jsontext.Value] `json:"input"`    // tool_use

	ToolUseID turn.Field[string]         `json:"tool_use_id"` // tool_result
	IsError   turn.Field[bool]           `json:"is_error"`    // tool_result
	Content   turn.Field[jsontext.Value] `json:"content"`     // tool_result
}

// appendMembers appends to errs the errors of the members b's type uses:
// in a user message only a tool_result's, in an assistant message a text,
// thinking or tool_use block's; none for a block of another type, whose
// members may hold anything.
func (b *wireBlock) appendMembers(errs []error, user bool) []error {
	switch {
	case user && b.Type == "tool_result":
		return append(errs, b.ToolUseID.Err(), b.IsError.Err(), b.Content.Err())
	case user:
		return errs
	case b.Type == "text":
		return append(errs, b.Text.Err())
	case b.Type == "thinking":
		return append(errs, b.Thinking.Err())
	case b.Type == "tool_use":
		return append(errs, b.ID.Err(), b.Name.Err(), b.Input.Err())
	}
	return errs
}

// present is v, nil when it is null.
func present(v jsontext.Value) jsontext.Value {
	if v.Kind() == 'n' {
		return nil
	}
	return v
}
