package claude

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"math"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/jsonscan"
)

// This file is the first of the two ways a line is read (decode.go holds
// the second, the member walk): one pass of a jsonscan.Scanner into
// wireLine, which holds every member any event type uses, each with the Go
// type of the kind Claude Code sends. It reads every well-formed line of a
// normal turn. It refuses what it cannot read exactly as the walk would (a
// member it reads given twice, a member of another kind, a null block, a
// number out of range, an escaped member name, anything that is not an
// object), even when the line's type does not use that member: the
// Decoder then reads the line with the walk, which gives the verdict, the
// byte offset of the culprit or the events of a line the protocol allows.
// Both accept what jsontext accepts with the walk's options and read
// strings and numbers the same way, so when this way succeeds it yields
// what the walk would: FuzzFastSlow holds them to that.

// wireLine is one line read the first way. A Decoder keeps one and reads
// every line into it, so the blocks keep their capacity from line to line.
type wireLine struct {
	Type, Subtype, SessionID string // type, subtype, session_id

	// system/init: model, cwd, permissionMode, apiKeySource
	Model, CWD, PermissionMode, APIKeySource string

	// system/api_retry: attempt, max_retries, retry_delay_ms,
	// error_status; error is an assistant event's too
	Attempt, MaxRetries, RetryDelayMs, ErrorStatus optNumber
	Error                                          string

	// assistant, user: message.content's blocks and message.model
	Blocks       []wireBlock
	MessageModel string

	// result: is_error, result, duration_ms, duration_api_ms, errors, usage
	IsError                   bool
	Result                    string
	DurationMs, DurationAPIMs optNumber
	Errors                    []string // the non-empty strings
	Usage                     wireUsage
}

// wireBlock is one element of message.content: the members of every
// block type the Decoder reads.
type wireBlock struct {
	Type     string // type
	Text     string // text: text
	Thinking string // thinking: thinking
	// tool_use: id, name, input (a copy; nil when absent or null)
	ID, Name string
	Input    jsontext.Value
	// tool_result: tool_use_id, is_error, content (a copy; nil when absent
	// or null)
	ToolUseID string
	IsError   bool
	Content   jsontext.Value
}

// numberOptions read a number as the walk reads it.
var numberOptions = readOptions()

// optNumber is a number that may be absent or null, read as the walk's
// reader.number reads it.
type optNumber struct {
	n  float64
	ok bool
}

// integer is the number as reader.integer returns it.
func (o optNumber) integer() (int64, bool) {
	if !o.ok {
		return 0, false
	}
	return clampInt(o.n), true
}

// wireUsage is a result's usage; reported is false when it is absent or
// null.
type wireUsage struct {
	reported bool
	counts   wireCounts
}

// wireCounts are usage's input_tokens, output_tokens,
// cache_read_input_tokens and cache_creation_input_tokens.
type wireCounts struct {
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens optNumber
}

// lineReader reads lines the first way, reusing its wireLine.
type lineReader struct {
	w wireLine
	s jsonscan.Scanner
}

// decode reads line (without its terminator) the first way; nil when it
// cannot, and the walk must. The result is valid until the next call;
// its strings and values do not view line.
func (r *lineReader) decode(line []byte) *wireLine {
	blocks := r.w.Blocks[:0]
	r.w = wireLine{Blocks: blocks}
	s := &r.s
	s.Reset(line)
	if !s.Object() {
		return nil
	}
	w := &r.w
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "type":
			ok = seen.First(0) && s.String(&w.Type, words...)
		case "subtype":
			ok = seen.First(1) && s.String(&w.Subtype, words...)
		case "session_id":
			ok = seen.First(2) && s.String(&w.SessionID)
		case "model":
			ok = seen.First(3) && s.String(&w.Model)
		case "cwd":
			ok = seen.First(4) && s.String(&w.CWD)
		case "permissionMode":
			ok = seen.First(5) && s.String(&w.PermissionMode)
		case "apiKeySource":
			ok = seen.First(6) && s.String(&w.APIKeySource)
		case "attempt":
			ok = seen.First(7) && r.number(&w.Attempt)
		case "max_retries":
			ok = seen.First(8) && r.number(&w.MaxRetries)
		case "retry_delay_ms":
			ok = seen.First(9) && r.number(&w.RetryDelayMs)
		case "error_status":
			ok = seen.First(10) && r.number(&w.ErrorStatus)
		case "error":
			ok = seen.First(11) && s.String(&w.Error)
		case "message":
			ok = seen.First(12) && r.message()
		case "is_error":
			ok = seen.First(13) && s.Bool(&w.IsError)
		case "result":
			ok = seen.First(14) && s.String(&w.Result)
		case "duration_ms":
			ok = seen.First(15) && r.number(&w.DurationMs)
		case "duration_api_ms":
			ok = seen.First(16) && r.number(&w.DurationAPIMs)
		case "errors":
			ok = seen.First(17) && r.errors()
		case "usage":
			ok = seen.First(18) && r.usage()
		default:
			ok = s.Skip()
		}
		if !ok {
			return nil
		}
	}
	if !s.End() {
		return nil
	}
	return w
}

// words are the words of the protocol read without allocating.
var words = []string{"system", "init", "assistant", "user", "result", "success", "text", "thinking", "redacted_thinking", "tool_use", "tool_result"}

// number reads a number or null (absent) into *dst, as the walk's
// reader.number reads it.
func (r *lineReader) number(dst *optNumber) bool {
	*dst = optNumber{}
	switch r.s.Peek() {
	case 'n':
		return r.s.Skip()
	case '0':
	default:
		return false
	}
	v := r.s.Value()
	if v == nil || json.Unmarshal(v, &dst.n, numberOptions) != nil || math.IsInf(dst.n, 0) {
		return false
	}
	dst.ok = true
	return true
}

// raw reads a copy of the next value into *dst, nil when null.
func (r *lineReader) raw(dst *jsontext.Value) bool {
	v := r.s.Value()
	if v == nil {
		return false
	}
	*dst = nil
	if v.Kind() != 'n' {
		*dst = bytes.Clone(v)
	}
	return true
}

// message reads an assistant or user event's message, an object or null:
// its content's blocks.
func (r *lineReader) message() bool {
	s := &r.s
	switch s.Peek() {
	case 'n':
		return s.Skip()
	case '{':
	default:
		return false
	}
	s.Object()
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "content":
			ok = seen.First(0) && r.content()
		case "model":
			ok = seen.First(1) && s.String(&r.w.MessageModel)
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	return !s.Failed()
}

// content reads message.content: an array of blocks (objects), or a
// string (a prompt's echo) or null, which have none.
func (r *lineReader) content() bool {
	s := &r.s
	switch s.Peek() {
	case 'n', '"':
		r.w.Blocks = r.w.Blocks[:0]
		return s.Skip()
	case '[':
	default:
		return false
	}
	s.Array()
	blocks := r.w.Blocks[:0]
	for s.Element() {
		// The walk wants an object: a null block is not read as empty.
		if s.Peek() != '{' {
			return false
		}
		blocks = append(blocks, wireBlock{})
		if !r.block(&blocks[len(blocks)-1]) {
			return false
		}
	}
	r.w.Blocks = blocks
	return !s.Failed()
}

// block reads one block (an object) into b.
func (r *lineReader) block(b *wireBlock) bool {
	s := &r.s
	s.Object()
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "type":
			ok = seen.First(0) && s.String(&b.Type, words...)
		case "text":
			ok = seen.First(1) && s.String(&b.Text)
		case "thinking":
			ok = seen.First(2) && s.String(&b.Thinking)
		case "id":
			ok = seen.First(3) && s.String(&b.ID)
		case "name":
			ok = seen.First(4) && s.String(&b.Name)
		case "input":
			ok = seen.First(5) && r.raw(&b.Input)
		case "tool_use_id":
			ok = seen.First(6) && s.String(&b.ToolUseID)
		case "is_error":
			ok = seen.First(7) && s.Bool(&b.IsError)
		case "content":
			ok = seen.First(8) && r.raw(&b.Content)
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	return !s.Failed()
}

// errors reads a result's errors: an array of strings (null ones skipped,
// as empty ones are), or null.
func (r *lineReader) errors() bool {
	s := &r.s
	r.w.Errors = nil
	switch s.Peek() {
	case 'n':
		return s.Skip()
	case '[':
	default:
		return false
	}
	s.Array()
	for s.Element() {
		var e string
		switch s.Peek() {
		case 'n':
			if !s.Skip() {
				return false
			}
		case '"':
			if !s.String(&e) {
				return false
			}
			if e != "" {
				r.w.Errors = append(r.w.Errors, e)
			}
		default:
			return false
		}
	}
	return !s.Failed()
}

// usage reads a result's usage, an object or null.
func (r *lineReader) usage() bool {
	s := &r.s
	u := &r.w.Usage
	*u = wireUsage{}
	switch s.Peek() {
	case 'n':
		return s.Skip()
	case '{':
	default:
		return false
	}
	s.Object()
	u.reported = true
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "input_tokens":
			ok = seen.First(0) && r.number(&u.counts.InputTokens)
		case "output_tokens":
			ok = seen.First(1) && r.number(&u.counts.OutputTokens)
		case "cache_read_input_tokens":
			ok = seen.First(2) && r.number(&u.counts.CacheReadTokens)
		case "cache_creation_input_tokens":
			ok = seen.First(3) && r.number(&u.counts.CacheWriteTokens)
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	return !s.Failed()
}

// event is the event.Usage of a reported usage, as reader.usage reads it.
func (u *wireUsage) event() event.Usage {
	count := func(n optNumber) *int64 {
		if v, ok := n.integer(); ok {
			return &v
		}
		return nil
	}
	c := &u.counts
	return event.Usage{Reported: true, InputTokens: count(c.InputTokens), OutputTokens: count(c.OutputTokens),
		CacheReadTokens: count(c.CacheReadTokens), CacheWriteTokens: count(c.CacheWriteTokens)}
}
