package cursor

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"reflect"
	"strings"

	"github.com/cursorkit/cursorkit/event"
)

// This file holds the wire types a line of Cursor's stream-json is read
// into with encoding/json/v2 (turn.Stream.Unmarshal), one struct per event
// type holding only the members that type uses (docs/contract.md,
// "Turns"). A member given twice is its last value, as Node's JSON.parse
// reads it (Cursor is a Node program): json/v2 merges a second object into
// the first, so each wire type an object decodes into starts afresh.

// The members each event type uses, read into its own struct.
type (
	wireInitEvent struct {
		SessionID      string `json:"session_id"`
		Model          string `json:"model"`
		CWD            string `json:"cwd"`
		PermissionMode string `json:"permissionMode"`
		APIKeySource   string `json:"apiKeySource"`
	}
	wireUserEvent struct {
		SessionID string       `json:"session_id"`
		Message   *wireMessage `json:"message"`
	}
	wireThinkingEvent struct {
		Subtype     string `json:"subtype"`
		Text        string `json:"text"`
		SessionID   string `json:"session_id"`
		TimestampMs *int64 `json:"timestamp_ms"`
	}
	wireAssistantEvent struct {
		Message     *wireMessage `json:"message"`
		ModelCallID string       `json:"model_call_id"`
		SessionID   string       `json:"session_id"`
		TimestampMs *int64       `json:"timestamp_ms"`
	}
	wireToolCallEvent struct {
		Subtype     string        `json:"subtype"`
		CallID      string        `json:"call_id"`
		ModelCallID string        `json:"model_call_id"`
		SessionID   string        `json:"session_id"`
		TimestampMs *int64        `json:"timestamp_ms"`
		ToolCall    *wireToolCall `json:"tool_call"`
	}
	wireResultEvent struct {
		Subtype       string     `json:"subtype"`
		IsError       bool       `json:"is_error"`
		Result        string     `json:"result"`
		SessionID     string     `json:"session_id"`
		RequestID     string     `json:"request_id"`
		Usage         *wireUsage `json:"usage"`
		DurationMs    int64      `json:"duration_ms"`
		DurationAPIMs int64      `json:"duration_api_ms"`
	}
)

// wireEventOf returns a new struct of the event type typ (and, for
// system, subtype), nil for a type the decoder passes whole.
func wireEventOf(typ, subtype string) any {
	switch typ {
	case "system":
		if subtype == "init" {
			return new(wireInitEvent)
		}
	case "user":
		return new(wireUserEvent)
	case "thinking":
		return new(wireThinkingEvent)
	case "assistant":
		return new(wireAssistantEvent)
	case "tool_call":
		return new(wireToolCallEvent)
	case "result":
		return new(wireResultEvent)
	}
	return nil
}

// wireMessage is a user or assistant event's message.
type wireMessage struct {
	Content wireContent `json:"content"`
}

// UnmarshalJSONFrom reads the message afresh: of a message given twice,
// the last one counts.
func (m *wireMessage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type members wireMessage // without the method
	*m = wireMessage{}
	return json.UnmarshalDecode(dec, (*members)(m))
}

// text is what the message says: its text blocks, concatenated.
func (m *wireMessage) text() string {
	if m == nil {
		return ""
	}
	if m.Content.blocks == nil {
		return m.Content.text
	}
	var texts []string
	for _, b := range m.Content.blocks {
		if b.Type.s == "text" {
			texts = append(texts, b.Text.s)
		}
	}
	return strings.Join(texts, "") // one block's text is not copied
}

// wireContent is message.content: an array of blocks or a plain string.
type wireContent struct {
	text   string
	blocks []wireBlock
}

// UnmarshalJSONFrom reads a string as the text; anything else must be
// an array of blocks.
func (c *wireContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*c = wireContent{}
	if dec.PeekKind() == '"' {
		return json.UnmarshalDecode(dec, &c.text)
	}
	return json.UnmarshalDecode(dec, &c.blocks)
}

// wireBlock is one block of message.content. A block of a type other
// than "text" (an image, a tool use) says nothing, and its type and text
// may hold anything.
type wireBlock struct {
	Type blockString `json:"type"`
	Text blockString `json:"text"`
}

// UnmarshalJSONFrom reads an object (null is refused, which json/v2 would
// read as an empty block) whose text, in a text block, is a string.
func (b *wireBlock) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if err := wantObject[wireBlock](dec); err != nil {
		return err
	}
	type members wireBlock // without the method
	*b = wireBlock{}
	if err := json.UnmarshalDecode(dec, (*members)(b)); err != nil {
		return err
	}
	if b.Type.s == "text" {
		return b.Text.notString
	}
	return nil
}

// blockString is a block member that is a string (null reads as ""),
// except in a block whose type does not use it: any other value reads
// as "" and is an error only when the block is a text block.
type blockString struct {
	s         string
	notString error // the error of a value that is not a string, for the block to raise
}

func (b *blockString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*b = blockString{}
	if k := dec.PeekKind(); k == '"' || k == 'n' || k == 0 {
		return json.UnmarshalDecode(dec, &b.s)
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	b.notString = &json.SemanticError{JSONKind: v.Kind(), GoType: reflect.TypeFor[string](),
		ByteOffset: dec.InputOffset() - int64(len(v)), JSONPointer: dec.StackPointer()}
	return nil
}

// toolCallSuffix ends the name of the tool_call member that names the
// tool.
const toolCallSuffix = "ToolCall"

// wireToolCall is a tool_call event's tool_call object. The tool is its
// first member whose name ends in "ToolCall" with something before the
// suffix ("readToolCall" is read); that member's value holds the args
// and the result. Its other members may hold anything.
type wireToolCall struct {
	Name string // "" when no member names a tool
	Body wireToolBody
}

func (t *wireToolCall) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	isTool := func(name string) bool {
		return len(name) > len(toolCallSuffix) && strings.HasSuffix(name, toolCallSuffix)
	}
	*t = wireToolCall{}
	name, err := firstMember[wireToolCall](dec, isTool, &t.Body)
	t.Name = strings.TrimSuffix(name, toolCallSuffix)
	return err
}

// wireToolBody is the value of the member that names the tool.
type wireToolBody struct {
	Args   jsontext.Value  `json:"args"` // kept as sent; null is absent
	Result *wireToolResult `json:"result"`
}

// args is the call's args, nil when absent or null.
func (b *wireToolBody) args() jsontext.Value {
	if b.Args.Kind() == 'n' {
		return nil
	}
	return b.Args
}

// wireToolResult is a completed call's result object: its first member's
// name is the status ("success", "failure", "rejected"), its value the
// result, kept as sent.
type wireToolResult struct {
	Status string
	Value  jsontext.Value
}

func (r *wireToolResult) UnmarshalJSONFrom(dec *jsontext.Decoder) (err error) {
	*r = wireToolResult{}
	r.Status, err = firstMember[wireToolResult](dec, func(string) bool { return true }, &r.Value)
	return err
}

// wireUsage is a result's usage; a count absent or null is nil.
type wireUsage struct {
	InputTokens      *int64 `json:"inputTokens"`
	OutputTokens     *int64 `json:"outputTokens"`
	CacheReadTokens  *int64 `json:"cacheReadTokens"`
	CacheWriteTokens *int64 `json:"cacheWriteTokens"`
}

// UnmarshalJSONFrom reads the usage afresh: of a usage given twice, the
// last one counts.
func (u *wireUsage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	type members wireUsage // without the method
	*u = wireUsage{}
	return json.UnmarshalDecode(dec, (*members)(u))
}

// usage is the event's usage: unreported when absent or null.
func (u *wireUsage) usage() event.Usage {
	if u == nil {
		return event.Usage{}
	}
	return event.Usage{Reported: true, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}
}

// firstMember reads the object at dec's position member by member, in
// order, which a Go map does not keep: the value of the first member
// whose name match accepts is decoded into v, the other values skipped.
// name is that member's name, "" when none. A value that is not an
// object is a semantic error naming T, the Go type read.
func firstMember[T any](dec *jsontext.Decoder, match func(string) bool, v any) (name string, err error) {
	if err := wantObject[T](dec); err != nil {
		return "", err
	}
	if _, err := dec.ReadToken(); err != nil {
		return "", err
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", err
		}
		if n := tok.String(); name == "" && match(n) {
			name, err = n, json.UnmarshalDecode(dec, v)
		} else {
			err = dec.SkipValue()
		}
		if err != nil {
			return "", err
		}
	}
	_, err = dec.ReadToken() // '}', or the syntax error where it belongs
	return name, err
}

// wantObject returns nil when the next value of dec is an object, else
// the semantic error of reading it into T: json/v2 adds where it is. A
// syntax error is left to the read that follows, which reports it.
func wantObject[T any](dec *jsontext.Decoder) error {
	if k := dec.PeekKind(); k != '{' && k != 0 {
		return &json.SemanticError{JSONKind: k, GoType: reflect.TypeFor[T]()}
	}
	return nil
}
