package cursor

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/jsonscan"
)

// This file reads one line of Cursor's stream-json into the members its
// events carry. A line is read in one of two ways:
//
//   - One pass of a jsonscan.Scanner into wireLine (read), which holds the
//     members of every event type, each with the Go type of what Cursor
//     sends (tool_call and usage kept raw, read by shape as the walk
//     reads them). It reads every well-formed event Cursor prints: the
//     lines of a normal turn are read this way only. Anything it does not
//     expect (an escaped name, a member of another kind, a member it reads
//     given twice) sends the line to the walk.
//   - When that fails, the member walk: validate the line, list its
//     members with a jsontext.Decoder, and read only the members the
//     line's type uses, as the package documentation states. The walk
//     gives every verdict the first way cannot (not JSON, not an object, a
//     member of the wrong kind, each with the byte offset of the culprit),
//     and reads the lines the first way refuses but the protocol allows: a
//     member of another kind that the line's type does not use, a
//     message.content that is a string, a member name given twice (the
//     last value wins, as with encoding/json v1).
//
// Both accept what jsontext accepts with the walk's options and read
// strings and numbers the same way, so when the first way succeeds it
// yields what the walk would: FuzzDecode holds them to that.

// eventKind is what a line is, by its type (and, for system, subtype).
type eventKind int

const (
	kindUnknown eventKind = iota // any other type, or a system event other than init
	kindInit
	kindUser
	kindThinking
	kindAssistant
	kindToolCall
	kindResult
)

// wireLine holds the members of every event type Cursor sends, with the
// types Cursor sends them with. The Decoder keeps one and decodes every
// line into it, so its slices keep their capacity from line to line.
type wireLine struct {
	Type, Subtype, SessionID string // type, subtype, session_id

	// system/init: model, cwd, permissionMode, apiKeySource
	Model, CWD, PermissionMode, APIKeySource string

	// user, assistant: message.content's blocks, model_call_id,
	// timestamp_ms; thinking has text
	Blocks      []wireBlock
	ModelCallID string
	TimestampMs optInt
	Text        string

	// tool_call: call_id; the tool_call object is read by shape.tool
	CallID string

	// result: is_error, result, duration_ms, duration_api_ms, request_id;
	// usage is read by shape.usage
	IsError                   bool
	Result                    string
	DurationMs, DurationAPIMs int64
	RequestID                 string
	Usage                     jsontext.Value
}

// wireBlock is one element of message.content. Blocks of a type other
// than "text" (images, tool uses) are skipped.
type wireBlock struct {
	Type, Text string
}

// optInt is an integer that may be absent or null.
type optInt struct {
	n  int64
	ok bool
}

// fields is one decoded line.
type fields struct {
	kind  eventKind
	w     wireLine
	text  string // user, assistant: the text blocks of message.content, concatenated
	tool  toolFields
	usage event.Usage
}

// toolFields is what a tool_call object says.
type toolFields struct {
	name   string         // the first key ending in "ToolCall", without the suffix; "" when none
	args   jsontext.Value // nil when absent or null
	status string         // the first key of the result object
	result jsontext.Value // its value; nil when there is no result object
}

// decodeError says why a line could not be decoded.
type decodeError struct {
	// notJSON is true when the line is not a JSON object at all (a banner
	// before the first event). When false the line is an object whose
	// members do not have the shape its event type requires.
	notJSON bool
	offset  int    // the byte offset within the line where the problem is
	event   string // the line's type, when known
	reason  string // e.g. `field "timestamp_ms" is not a 64-bit integer`
}

// lineReader decodes lines, reusing its buffers from one to the next.
type lineReader struct {
	lenient json.Options // the walk: the last value of a name given twice wins
	f       fields

	s jsonscan.Scanner // the first way's
	// The first way's tool_call and usage: views of the line being read,
	// for finish; nil when absent.
	toolCall, usage jsontext.Value
}

func newLineReader() *lineReader {
	// Invalid UTF-8 and lone surrogate escapes read as U+FFFD, as with
	// encoding/json (v1) and Node's JSON.parse: Cursor is a Node program,
	// and a model's text streamed in pieces may split a surrogate pair.
	// The first way reads strings so too (jsonscan.Text).
	return &lineReader{
		lenient: json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)),
	}
}

// decode reads line (without its terminator; surrounding JSON whitespace
// is allowed). The result is valid until the next call; every string and
// value in it is its own (none views line).
func (r *lineReader) decode(line []byte) (*fields, *decodeError) {
	f := &r.f
	blocks := f.w.Blocks[:0]
	*f = fields{}
	f.w.Blocks = blocks
	r.toolCall, r.usage = nil, nil
	read := r.read(line) && r.finish()
	r.toolCall, r.usage = nil, nil // views of line, which the caller reuses
	if read {
		return f, nil
	}
	return f, r.walk(line)
}

// read reads line's object into r.f.w (zero but for its blocks' capacity)
// as json.Unmarshal would read it into a struct of wireLine's members by
// their names (case-sensitive, other members skipped): strings a string
// or null, is_error a boolean or null, the durations and timestamp_ms an
// int64 or null, message an object or null whose content is an array of
// objects or null, tool_call and usage any value. Any other kind, a
// member read here given twice, or anything the Scanner declines reports
// false: the walk reads the line.
func (r *lineReader) read(line []byte) bool {
	s := &r.s
	s.Reset(line)
	if !s.Object() {
		return false
	}
	w := &r.f.w
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
		case "message":
			ok = seen.First(7) && r.message()
		case "model_call_id":
			ok = seen.First(8) && s.String(&w.ModelCallID)
		case "timestamp_ms":
			ok = seen.First(9) && r.optInt(&w.TimestampMs)
		case "text":
			ok = seen.First(10) && s.String(&w.Text)
		case "call_id":
			ok = seen.First(11) && s.String(&w.CallID)
		case "tool_call":
			r.toolCall = s.Value()
			ok = seen.First(12) && r.toolCall != nil
		case "is_error":
			ok = seen.First(13) && s.Bool(&w.IsError)
		case "result":
			ok = seen.First(14) && s.String(&w.Result)
		case "duration_ms":
			ok = seen.First(15) && r.int(&w.DurationMs)
		case "duration_api_ms":
			ok = seen.First(16) && r.int(&w.DurationAPIMs)
		case "request_id":
			ok = seen.First(17) && s.String(&w.RequestID)
		case "usage":
			r.usage = s.Value()
			ok = seen.First(18) && r.usage != nil
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	return s.End()
}

// words are the words of the protocol read without allocating.
var words = []string{"system", "init", "user", "assistant", "thinking", "delta", "completed", "tool_call", "started", "result", "success"}

// int reads an int64 or null (0) into *dst, as json.Unmarshal into an
// int64 reads it.
func (r *lineReader) int(dst *int64) bool {
	var ok bool
	*dst, _, ok = r.s.Int()
	return ok
}

// optInt reads an int64 or null (absent) into *dst.
func (r *lineReader) optInt(dst *optInt) bool {
	var ok bool
	dst.n, dst.ok, ok = r.s.Int()
	return ok
}

// message reads a user or assistant event's message, an object or null:
// its content, an array of blocks (objects) or null. A string content
// (which only the walk reads) sends the line to the walk.
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
		if string(name) != "content" {
			if !s.Skip() {
				return false
			}
			continue
		}
		if !seen.First(0) {
			return false
		}
		switch s.Peek() {
		case 'n':
			r.f.w.Blocks = r.f.w.Blocks[:0]
			if !s.Skip() {
				return false
			}
			continue
		case '[':
		default:
			return false
		}
		s.Array()
		blocks := r.f.w.Blocks[:0]
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
		r.f.w.Blocks = blocks
	}
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
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	return !s.Failed()
}

// isObject reports whether line starts (after JSON whitespace) like an
// object.
func isObject(line []byte) bool {
	line = bytes.TrimLeft(line, " \t\r\n")
	return len(line) > 0 && line[0] == '{'
}

// finish completes what read read; false sends the line to the walk.
func (r *lineReader) finish() bool {
	f := &r.f
	w := &f.w
	f.kind = kindOf(w.Type, w.Subtype)
	switch f.kind {
	case kindUser, kindAssistant:
		switch blocks := w.Blocks; len(blocks) {
		case 0:
		case 1:
			if blocks[0].Type == "text" {
				f.text = blocks[0].Text
			}
		default:
			var b strings.Builder
			for _, blk := range blocks {
				if blk.Type == "text" {
					b.WriteString(blk.Text)
				}
			}
			f.text = b.String()
		}
	case kindToolCall:
		s := shape{b: r.toolCall, opts: r.lenient}
		f.tool = s.tool(span{0, len(r.toolCall)}) // its values are copies
		return s.err == nil
	case kindResult:
		s := shape{b: r.usage, opts: r.lenient}
		f.usage = s.usage(span{0, len(r.usage)})
		return s.err == nil
	}
	return true
}

func kindOf(typ, subtype string) eventKind {
	switch typ {
	case "system":
		if subtype == "init" {
			return kindInit
		}
	case "user":
		return kindUser
	case "thinking":
		return kindThinking
	case "assistant":
		return kindAssistant
	case "tool_call":
		return kindToolCall
	case "result":
		return kindResult
	}
	return kindUnknown
}

// walk is the second way (see the top of this file).
func (r *lineReader) walk(line []byte) *decodeError {
	f := &r.f
	blocks := f.w.Blocks[:0]
	*f = fields{}
	f.w.Blocks = blocks
	if !jsontext.Value(line).IsValid(r.lenient) {
		var v jsontext.Value
		return notJSON(json.Unmarshal(line, &v, r.lenient))
	}
	if !isObject(line) {
		return &decodeError{notJSON: true, reason: "the line is JSON but not an object"}
	}
	var at members
	s := shape{b: line, opts: r.lenient}
	s.members(span{0, len(line)}, func(name string, v span) {
		if p := at.lookup(name); p != nil {
			*p = v
		}
	})
	w := &f.w
	w.Type, _ = s.optString(at.typ)
	subtype, _ := s.optString(at.subtype)
	f.kind = kindOf(w.Type, subtype)
	switch f.kind {
	case kindUnknown:
		w.Subtype = subtype
		return nil
	case kindInit:
		w.Subtype = subtype
		w.SessionID = s.str(at.sessionID, "session_id")
		w.Model = s.str(at.model, "model")
		w.CWD = s.str(at.cwd, "cwd")
		w.PermissionMode = s.str(at.permissionMode, "permissionMode")
		w.APIKeySource = s.str(at.apiKeySource, "apiKeySource")
	case kindUser:
		w.SessionID = s.str(at.sessionID, "session_id")
		f.text = s.messageText(at.message)
	case kindThinking:
		w.Subtype = s.str(at.subtype, "subtype")
		w.Text = s.str(at.text, "text")
		w.SessionID = s.str(at.sessionID, "session_id")
		w.TimestampMs = s.optInt(at.timestampMs, "timestamp_ms")
	case kindAssistant:
		f.text = s.messageText(at.message)
		w.ModelCallID = s.str(at.modelCallID, "model_call_id")
		w.SessionID = s.str(at.sessionID, "session_id")
		w.TimestampMs = s.optInt(at.timestampMs, "timestamp_ms")
	case kindToolCall:
		w.Subtype = s.str(at.subtype, "subtype")
		w.CallID = s.str(at.callID, "call_id")
		w.ModelCallID = s.str(at.modelCallID, "model_call_id")
		w.SessionID = s.str(at.sessionID, "session_id")
		w.TimestampMs = s.optInt(at.timestampMs, "timestamp_ms")
		f.tool = s.tool(at.toolCall)
	case kindResult:
		w.Subtype = s.str(at.subtype, "subtype")
		w.IsError = s.bool(at.isError, "is_error")
		w.Result = s.str(at.result, "result")
		w.SessionID = s.str(at.sessionID, "session_id")
		w.RequestID = s.str(at.requestID, "request_id")
		f.usage = s.usage(at.usage)
		w.DurationMs = s.optInt(at.durationMs, "duration_ms").n
		w.DurationAPIMs = s.optInt(at.durationAPIMs, "duration_api_ms").n
	}
	if s.err != nil && !s.err.notJSON {
		s.err.event = w.Type
	}
	return s.err
}

func notJSON(err error) *decodeError {
	if err == nil { // not reached: IsValid and Unmarshal agree
		return &decodeError{notJSON: true, reason: "not JSON"}
	}
	de := &decodeError{notJSON: true, reason: "not JSON: " + err.Error()}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		de.offset = int(se.ByteOffset)
		if se.Err != nil {
			de.reason = "not JSON: " + se.Err.Error()
		}
	}
	return de
}

// span is where a value lies in the bytes a shape reads; the zero span is
// an absent value.
type span struct{ start, end int }

func (s span) absent() bool { return s.end == 0 }

// members is where the walk found each top-level member of interest.
type members struct {
	typ, subtype, sessionID, model, cwd, permissionMode, apiKeySource span
	message, modelCallID, timestampMs, text, callID, toolCall         span
	isError, result, durationMs, durationAPIMs, requestID, usage      span
}

func (m *members) lookup(name string) *span {
	switch name {
	case "type":
		return &m.typ
	case "subtype":
		return &m.subtype
	case "session_id":
		return &m.sessionID
	case "model":
		return &m.model
	case "cwd":
		return &m.cwd
	case "permissionMode":
		return &m.permissionMode
	case "apiKeySource":
		return &m.apiKeySource
	case "message":
		return &m.message
	case "model_call_id":
		return &m.modelCallID
	case "timestamp_ms":
		return &m.timestampMs
	case "text":
		return &m.text
	case "call_id":
		return &m.callID
	case "tool_call":
		return &m.toolCall
	case "is_error":
		return &m.isError
	case "result":
		return &m.result
	case "duration_ms":
		return &m.durationMs
	case "duration_api_ms":
		return &m.durationAPIMs
	case "request_id":
		return &m.requestID
	case "usage":
		return &m.usage
	}
	return nil
}

// shape reads typed values out of b, valid JSON read with opts, and keeps
// the first value that does not have its expected kind.
type shape struct {
	b    []byte
	opts json.Options
	err  *decodeError
}

func (s *shape) fail(at span, reason string) {
	if s.err == nil {
		s.err = &decodeError{offset: at.start, reason: reason}
	}
}

// kind returns the kind of the value at v ('n' for null or absent), as
// jsontext.Kind does: '"', '0', 't', 'f', '{', '['.
func (s *shape) kind(v span) jsontext.Kind {
	if v.absent() {
		return 'n'
	}
	return jsontext.Value(s.b[v.start:v.end]).Kind()
}

// members calls fn with the name and place of each member of the object
// at v, in order.
func (s *shape) members(v span, fn func(name string, val span)) {
	dec := s.decoder(v)
	_, err := dec.ReadToken() // '{'
	for err == nil && dec.PeekKind() == '"' {
		var tok jsontext.Token
		var val jsontext.Value
		if tok, err = dec.ReadToken(); err == nil {
			name := tok.String() // the token is valid only until the next read
			if val, err = dec.ReadValue(); err == nil {
				end := v.start + int(dec.InputOffset())
				fn(name, span{end - len(val), end})
			}
		}
	}
	s.broken(v, dec, err)
}

// elements calls fn with the place of each element of the array at v.
func (s *shape) elements(v span, fn func(el span)) {
	dec := s.decoder(v)
	_, err := dec.ReadToken() // '['
	for err == nil && dec.PeekKind() != ']' {
		var val jsontext.Value
		if val, err = dec.ReadValue(); err == nil {
			end := v.start + int(dec.InputOffset())
			fn(span{end - len(val), end})
		}
	}
	s.broken(v, dec, err)
}

// decoder returns a decoder of the value at v. It reads s.b in place: a
// jsontext.Decoder takes a bytes.Buffer's contents as its buffer.
func (s *shape) decoder(v span) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewBuffer(s.b[v.start:v.end:v.end]), s.opts)
}

// broken records err, which a walk over a validated value cannot meet.
func (s *shape) broken(v span, dec *jsontext.Decoder, err error) {
	if err != nil && s.err == nil {
		s.err = notJSON(err)
		s.err.offset = v.start + int(dec.InputOffset())
	}
}

// unmarshal decodes the value at v into out; it fails only when the value
// does not have the kind out needs.
func (s *shape) unmarshal(v span, out any) error {
	return json.Unmarshal(s.b[v.start:v.end], out, s.opts)
}

// optString returns the string at v; ok is false when v is absent, null or
// not a string.
func (s *shape) optString(v span) (str string, ok bool) {
	if s.kind(v) != '"' {
		return "", false
	}
	return str, s.unmarshal(v, &str) == nil
}

// str returns the string member name at v: "" when absent or null, an
// error when it is another kind of value.
func (s *shape) str(v span, name string) string {
	switch s.kind(v) {
	case 'n':
		return ""
	case '"':
		str, _ := s.optString(v)
		return str
	}
	s.fail(v, "field "+strconv.Quote(name)+" is not a string")
	return ""
}

func (s *shape) optInt(v span, name string) optInt {
	if s.kind(v) == 'n' {
		return optInt{}
	}
	var n int64
	if s.unmarshal(v, &n) != nil {
		s.fail(v, "field "+strconv.Quote(name)+" is not a 64-bit integer")
		return optInt{}
	}
	return optInt{n, true}
}

func (s *shape) bool(v span, name string) bool {
	switch s.kind(v) {
	case 'n':
		return false
	case 't', 'f':
		return s.kind(v) == 't'
	}
	s.fail(v, "field "+strconv.Quote(name)+" is not a boolean")
	return false
}

// object reports whether v is an object, failing when it is neither an
// object nor null.
func (s *shape) object(v span, name string) bool {
	switch s.kind(v) {
	case 'n':
		return false
	case '{':
		return true
	}
	s.fail(v, "field "+strconv.Quote(name)+" is not an object")
	return false
}

// value returns a copy of the value at v.
func (s *shape) value(v span) jsontext.Value {
	return bytes.Clone(s.b[v.start:v.end])
}

// messageText concatenates the text blocks of message.content, which may
// also be a plain string. Blocks of other types are skipped.
func (s *shape) messageText(msg span) string {
	if !s.object(msg, "message") {
		return ""
	}
	var content span
	s.members(msg, func(name string, v span) {
		if name == "content" {
			content = v
		}
	})
	switch s.kind(content) {
	case 'n':
		return ""
	case '"':
		text, _ := s.optString(content)
		return text
	case '[':
	default:
		s.fail(content, `field "message.content" is neither an array nor a string`)
		return ""
	}
	var b strings.Builder
	s.elements(content, func(el span) {
		if s.err != nil {
			return
		}
		if s.kind(el) != '{' {
			s.fail(el, `an element of "message.content" is not an object`)
			return
		}
		var typ, text span
		s.members(el, func(name string, v span) {
			switch name {
			case "type":
				typ = v
			case "text":
				text = v
			}
		})
		if t, _ := s.optString(typ); t != "text" || s.kind(text) == 'n' {
			return
		}
		if s.kind(text) != '"' {
			s.fail(text, `a text block's "text" is not a string`)
			return
		}
		t, _ := s.optString(text)
		b.WriteString(t)
	})
	return b.String()
}

const toolCallSuffix = "ToolCall"

// tool reads the tool_call object: the tool is its first key that ends in
// "ToolCall" with something before the suffix ("readToolCall" is "read"),
// whose value holds the args and the result. The result's first key is the
// status ("success", "failure", "rejected"), its value the result.
func (s *shape) tool(v span) toolFields {
	var t toolFields
	if !s.object(v, "tool_call") {
		return t
	}
	var key string
	var body span
	s.members(v, func(name string, val span) {
		if key == "" && len(name) > len(toolCallSuffix) && strings.HasSuffix(name, toolCallSuffix) {
			key, body = name, val
		}
	})
	if key == "" {
		return t
	}
	t.name = strings.TrimSuffix(key, toolCallSuffix)
	if !s.object(body, "tool_call."+key) {
		return t
	}
	var args, result span
	s.members(body, func(name string, val span) {
		switch name {
		case "args":
			args = val
		case "result":
			result = val
		}
	})
	if s.kind(args) != 'n' {
		t.args = s.value(args)
	}
	if !s.object(result, "tool_call."+key+".result") {
		return t
	}
	var value span
	s.members(result, func(name string, val span) {
		if value.absent() {
			t.status, value = name, val
		}
	})
	if !value.absent() {
		t.result = s.value(value)
	}
	return t
}

// usage reads the result's usage object; an absent or null usage is
// unreported, a count absent or null is nil.
func (s *shape) usage(v span) event.Usage {
	var u event.Usage
	if !s.object(v, "usage") {
		return u
	}
	var in, out, cr, cw span
	s.members(v, func(name string, val span) {
		switch name {
		case "inputTokens":
			in = val
		case "outputTokens":
			out = val
		case "cacheReadTokens":
			cr = val
		case "cacheWriteTokens":
			cw = val
		}
	})
	count := func(v span, name string) *int64 {
		if n := s.optInt(v, "usage."+name); n.ok {
			return &n.n
		}
		return nil
	}
	u.Reported = true
	u.InputTokens = count(in, "inputTokens")
	u.OutputTokens = count(out, "outputTokens")
	u.CacheReadTokens = count(cr, "cacheReadTokens")
	u.CacheWriteTokens = count(cw, "cacheWriteTokens")
	return u
}
