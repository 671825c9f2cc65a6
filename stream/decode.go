package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cursorkit/cursorkit/failure"
)

// DecodeError says why a line could not be decoded. Decode returns it
// wrapped in a *failure.Error of kind failure.Protocol.
type DecodeError struct {
	// NotJSON is true when the line is not a JSON object at all (Turn treats
	// such a line before the first event as a banner). When false the line is
	// an object whose fields do not have the shape its event type requires.
	NotJSON bool
	// Offset is the byte offset within the line where the problem is.
	Offset int
	// Event is the line's "type" when known ("" for NotJSON).
	Event string
	// Reason says what was wrong, e.g. `field "timestamp_ms" is not an integer`.
	Reason string
}

func (e *DecodeError) Error() string {
	if e.Event != "" {
		return e.Event + " event: " + e.Reason + " (byte offset " + strconv.Itoa(e.Offset) + ")"
	}
	return e.Reason + " (byte offset " + strconv.Itoa(e.Offset) + ")"
}

// Decode decodes one stream-json line (without its line terminator; leading
// and trailing JSON whitespace is allowed) into an Event. Unknown types are
// not errors: they decode to *Unknown. The error, when not nil, is a
// *failure.Error of kind failure.Protocol wrapping a *DecodeError.
//
// The event never aliases line: the caller may reuse its buffer.
func Decode(line []byte) (Event, error) { return decode(line, nil) }

// recent is what a Turn's decoding carries from line to line. Every line
// of a turn repeats the session id, and consecutive lines often the model
// call id; reusing the string saves an allocation per event.
type recent struct {
	sessionID, modelCallID string

	// aliasText lets decode return an Assistant whose Text is a view of
	// the line rather than a copy, when the text is one verbatim string:
	// set by a Turn, which copies what it keeps before Feed returns and
	// never hands the event itself out.
	aliasText bool
	// textASCII is set by decode when the message text it returned is
	// printable ASCII without quote or backslash: JSON output needs no
	// escaping for it.
	textASCII bool

	// Reused by decode from line to line: the content blocks, and the
	// Assistant event, which a Turn never keeps (it is valid until the
	// next decode).
	blocks    []block
	assistant Assistant
}

func decode(line []byte, ids *recent) (Event, error) {
	var f fields
	if ids != nil {
		f.blocks = ids.blocks[:0]
		defer func() { ids.blocks = f.blocks[:0] }()
	}
	r := reader{b: line}
	r.ws()
	if r.i >= len(line) || line[r.i] != '{' {
		if _, err := r.value(); err != nil {
			return nil, notJSON(err)
		}
		if err := r.end(); err != nil {
			return nil, notJSON(err)
		}
		return nil, protocolError(&DecodeError{NotJSON: true, Offset: 0, Reason: "the line is JSON but not an object"})
	}
	if err := f.read(&r); err != nil {
		return nil, notJSON(err)
	}
	if err := r.end(); err != nil {
		return nil, notJSON(err)
	}
	d := decoder{b: line, ids: ids}
	typ, ok := d.typeName(f.typ)
	if !ok || d.err != nil {
		return d.unknown(f, ""), nil
	}
	var ev Event
	switch typ {
	case TypeSystem:
		sub := d.str(f.subtype, "subtype")
		if sub != SubtypeInit || d.err != nil {
			d.err = nil
			return d.unknown(f, typ), nil
		}
		ev = &Init{
			SessionID:      d.sessionID(f.sessionID),
			Model:          d.str(f.model, "model"),
			CWD:            d.str(f.cwd, "cwd"),
			PermissionMode: d.str(f.permissionMode, "permissionMode"),
			APIKeySource:   d.str(f.apiKeySource, "apiKeySource"),
		}
	case TypeUser:
		ev = &User{SessionID: d.sessionID(f.sessionID), Text: d.messageText(&f, false)}
	case TypeThinking:
		t := &Thinking{
			Subtype:   d.str(f.subtype, "subtype"),
			Text:      d.str(f.text, "text"),
			SessionID: d.sessionID(f.sessionID),
		}
		t.TimestampMs, t.HasTimestamp = d.integer(f.timestampMs, "timestamp_ms")
		ev = t
	case TypeAssistant:
		var a *Assistant
		if ids != nil && ids.aliasText {
			a = &ids.assistant
		} else {
			a = new(Assistant)
		}
		*a = Assistant{
			Text:        d.messageText(&f, d.ids != nil && d.ids.aliasText),
			ModelCallID: d.modelCallID(f.modelCallID),
			SessionID:   d.sessionID(f.sessionID),
		}
		a.TimestampMs, a.HasTimestamp = d.integer(f.timestampMs, "timestamp_ms")
		ev = a
	case TypeToolCall:
		t := &ToolCall{
			Subtype:     d.str(f.subtype, "subtype"),
			CallID:      d.str(f.callID, "call_id"),
			ModelCallID: d.modelCallID(f.modelCallID),
			SessionID:   d.sessionID(f.sessionID),
		}
		t.TimestampMs, _ = d.integer(f.timestampMs, "timestamp_ms")
		d.toolCall(f.toolCall, t)
		ev = t
	case TypeResult:
		res := &Result{
			Subtype:   d.str(f.subtype, "subtype"),
			IsError:   d.boolean(f.isError, "is_error"),
			Text:      d.str(f.result, "result"),
			SessionID: d.sessionID(f.sessionID),
			RequestID: d.str(f.requestID, "request_id"),
			Usage:     d.usage(f.usage),
		}
		res.DurationMs, _ = d.integer(f.durationMs, "duration_ms")
		res.DurationAPIMs, _ = d.integer(f.durationAPIMs, "duration_api_ms")
		ev = res
	default:
		return d.unknown(f, typ), nil
	}
	if d.err != nil {
		d.err.Event = typ
		return nil, protocolError(d.err)
	}
	return ev, nil
}

func protocolError(de *DecodeError) error {
	return &failure.Error{Kind: failure.Protocol, Message: "malformed stream-json line", Err: de}
}

func notJSON(err error) error {
	de := &DecodeError{NotJSON: true, Reason: "not JSON: " + err.Error()}
	var se *syntaxError
	if errors.As(err, &se) {
		de.Offset, de.Reason = se.offset, "not JSON: "+se.msg
	}
	return protocolError(de)
}

// fields holds where each top-level member of interest is. A repeated key
// overwrites the earlier span: the last value wins, as with encoding/json.
// message.content is read in the same pass, since assistant text is most of
// the stream: content is the last message's last content value and blocks
// are its elements when it is an array.
type fields struct {
	content span
	blocks  []block

	typ, subtype, sessionID, message, modelCallID, timestampMs, text span
	callID, toolCall                                                 span
	isError, result, durationMs, durationAPIMs, requestID, usage     span
	cwd, model, permissionMode, apiKeySource                         span
}

// block is one element of message.content.
type block struct {
	whole     span
	isObject  bool
	typ, text span
	// text's value when it is a string: the raw content at verbatim when
	// that is present (the string holds no escape, no control character,
	// only valid UTF-8; ascii when also all ASCII), value otherwise.
	verbatim    span
	hasVerbatim bool
	ascii       bool
	value       string
}

// read reads the top-level object, recording the members of interest.
func (f *fields) read(r *reader) error {
	if r.i == 0 && len(r.b) > len(assistantHead) && string(r.b[:len(assistantHead)]) == assistantHead && f.readAssistantHead(r) {
		return f.members(r, false)
	}
	if err := r.enter('{'); err != nil {
		return err
	}
	return f.members(r, true)
}

// How Cursor starts an assistant event with one text block, up to the
// text's opening quote; the prefixes locate the members inside it.
const (
	headType      = `{"type":`
	headMessage   = headType + `"assistant","message":`
	headContent   = headMessage + `{"role":"assistant","content":`
	headBlockType = headContent + `[{"type":`
	assistantHead = headBlockType + `"text","text":"`
)

// readAssistantHead reads a line that starts with assistantHead, the
// most common line of a turn, without reading the head's members one by
// one: when the text is verbatim and closes the block, the content and
// the message at once, the head's members are known, and reading goes on
// with the object's next member. Otherwise it reports false, having moved
// nothing, and the line is read the general way.
func (f *fields) readAssistantHead(r *reader) bool {
	textAt := len(assistantHead) - 1 // the opening quote
	t := reader{b: r.b, i: textAt}
	raw, ascii, ok := t.verbatimStr()
	if !ok || len(r.b)-t.i < 3 || string(r.b[t.i:t.i+3]) != "}]}" {
		return false
	}
	end := t.i + 3
	f.typ = span{len(headType), len(headType) + len(`"assistant"`)}
	f.message = span{len(headMessage), end}
	f.content = span{len(headContent), end - 1}
	f.blocks = append(f.blocks[:0], block{
		whole:       span{len(headContent) + 1, end - 2},
		isObject:    true,
		typ:         span{len(headBlockType), len(headBlockType) + len(`"text"`)},
		text:        span{textAt, t.i},
		verbatim:    raw,
		hasVerbatim: true,
		ascii:       ascii,
	})
	r.i, r.depth = end, 1
	return true
}

// members reads the members of the top-level object after its '{' (and
// after the members already read when first is false), up to its '}'.
func (f *fields) members(r *reader, first bool) error {
	return r.membersFrom(first, func(key span, escaped bool) error {
		k := r.b[key.start:key.end]
		if escaped {
			k = []byte(unescape(k, true))
		}
		if string(k) == "message" {
			return f.readMessage(r)
		}
		val, err := r.value()
		if dst := f.lookup(k); dst != nil {
			*dst = val
		}
		return err
	})
}

func (f *fields) readMessage(r *reader) error {
	r.ws()
	start := r.i
	f.content, f.blocks = span{}, f.blocks[:0]
	err := f.readMessageObject(r)
	f.message = span{start, r.i}
	return err
}

func (f *fields) readMessageObject(r *reader) error {
	if r.i >= len(r.b) || r.b[r.i] != '{' {
		_, err := r.value()
		return err
	}
	return r.members(func(key span, escaped bool) error {
		if keyIs(r.b, key, escaped, "content") {
			return f.readContent(r)
		}
		_, err := r.value()
		return err
	})
}

func (f *fields) readContent(r *reader) error {
	r.ws()
	start := r.i
	f.blocks = f.blocks[:0]
	err := f.readContentArray(r)
	f.content = span{start, r.i}
	return err
}

func (f *fields) readContentArray(r *reader) error {
	if r.i >= len(r.b) || r.b[r.i] != '[' {
		_, err := r.value()
		return err
	}
	if err := r.enter('['); err != nil {
		return err
	}
	for first := true; ; {
		more, err := r.more(']', &first)
		if err != nil || !more {
			return err
		}
		r.ws()
		b := block{whole: span{r.i, r.i}}
		if r.i < len(r.b) && r.b[r.i] == '{' {
			b.isObject = true
			err = b.read(r)
		} else {
			_, err = r.value()
		}
		b.whole.end = r.i
		f.blocks = append(f.blocks, b)
		if err != nil {
			return err
		}
	}
}

// read reads one content block object.
func (b *block) read(r *reader) error {
	return r.members(func(key span, escaped bool) (err error) {
		switch {
		case keyIs(r.b, key, escaped, "text"):
			// The text is unescaped as it is validated.
			r.ws()
			start := r.i
			if r.i < len(r.b) && r.b[r.i] == '"' {
				if b.verbatim, b.ascii, b.hasVerbatim = r.verbatimStr(); !b.hasVerbatim {
					b.value, err = r.strValue()
				}
			} else {
				b.hasVerbatim = false
				b.value = ""
				_, err = r.value()
			}
			b.text = span{start, r.i}
		case keyIs(r.b, key, escaped, "type"):
			b.typ, err = r.value()
		default:
			_, err = r.value()
		}
		return err
	})
}

func (f *fields) lookup(name []byte) *span {
	// A switch on string(name) compares without allocating.
	switch string(name) {
	case "type":
		return &f.typ
	case "subtype":
		return &f.subtype
	case "session_id":
		return &f.sessionID
	case "model_call_id":
		return &f.modelCallID
	case "timestamp_ms":
		return &f.timestampMs
	case "text":
		return &f.text
	case "call_id":
		return &f.callID
	case "tool_call":
		return &f.toolCall
	case "is_error":
		return &f.isError
	case "result":
		return &f.result
	case "duration_ms":
		return &f.durationMs
	case "duration_api_ms":
		return &f.durationAPIMs
	case "request_id":
		return &f.requestID
	case "usage":
		return &f.usage
	case "cwd":
		return &f.cwd
	case "model":
		return &f.model
	case "permissionMode":
		return &f.permissionMode
	case "apiKeySource":
		return &f.apiKeySource
	}
	return nil
}

// decoder extracts typed values from spans of an already validated line. The
// first shape error is kept in err and later calls do nothing.
type decoder struct {
	b   []byte
	err *DecodeError
	ids *recent // may be nil
}

func (d *decoder) sessionID(s span) string {
	if d.ids == nil {
		return d.str(s, "session_id")
	}
	return d.recentStr(s, "session_id", &d.ids.sessionID)
}

func (d *decoder) modelCallID(s span) string {
	if d.ids == nil {
		return d.str(s, "model_call_id")
	}
	return d.recentStr(s, "model_call_id", &d.ids.modelCallID)
}

// recentStr is str, returning *last when the value is the same.
func (d *decoder) recentStr(s span, name string, last *string) string {
	if d.err == nil && !d.isNull(s) && d.b[s.start] == '"' {
		raw := d.b[s.start+1 : s.end-1]
		if string(raw) == *last && bytes.IndexByte(raw, '\\') < 0 {
			return *last
		}
	}
	v := d.str(s, name)
	if v != "" {
		*last = v
	}
	return v
}

func (d *decoder) fail(at span, format string) {
	if d.err == nil {
		d.err = &DecodeError{Offset: at.start, Reason: format}
	}
}

func (d *decoder) isNull(s span) bool {
	return !s.present() || d.b[s.start] == 'n'
}

// typeName is optString for the "type" field, returning the constant
// for the types this package knows instead of allocating their name.
func (d *decoder) typeName(s span) (string, bool) {
	if !d.isNull(s) && d.b[s.start] == '"' {
		switch raw := d.b[s.start+1 : s.end-1]; string(raw) {
		case TypeSystem:
			return TypeSystem, true
		case TypeUser:
			return TypeUser, true
		case TypeThinking:
			return TypeThinking, true
		case TypeAssistant:
			return TypeAssistant, true
		case TypeToolCall:
			return TypeToolCall, true
		case TypeResult:
			return TypeResult, true
		}
	}
	return d.optString(s)
}

// stringIs reports whether s is a string of value want, without
// allocating when it is written without escapes.
func (d *decoder) stringIs(s span, want string) bool {
	if d.isNull(s) || d.b[s.start] != '"' {
		return false
	}
	raw := d.b[s.start+1 : s.end-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == want
	}
	return d.stringAt(s) == want
}

// optString returns the string at s; ok is false when s is absent, null or
// not a string.
func (d *decoder) optString(s span) (string, bool) {
	if d.isNull(s) || d.b[s.start] != '"' {
		return "", false
	}
	return d.stringAt(s), true
}

// stringAt unescapes the string value spanning s (quotes included).
func (d *decoder) stringAt(s span) string {
	raw := d.b[s.start+1 : s.end-1]
	return unescape(raw, bytes.IndexByte(raw, '\\') >= 0)
}

// str returns the string field name at s: "" when absent or null, an error
// when it is another kind of value.
func (d *decoder) str(s span, name string) string {
	if d.err != nil || d.isNull(s) {
		return ""
	}
	if d.b[s.start] != '"' {
		d.fail(s, "field "+strconv.Quote(name)+" is not a string")
		return ""
	}
	return d.stringAt(s)
}

// integer returns the integer field name at s and whether it is present.
func (d *decoder) integer(s span, name string) (int64, bool) {
	if d.err != nil || d.isNull(s) {
		return 0, false
	}
	raw := d.b[s.start:s.end]
	if len(raw) <= 18 && raw[0] != '0' {
		// A validated number of up to 18 digits, no sign, fraction or
		// exponent (a timestamp): it fits, no parser needed.
		var n int64
		digits := true
		for _, c := range raw {
			if c < '0' || c > '9' {
				digits = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if digits {
			return n, true
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		d.fail(s, "field "+strconv.Quote(name)+" is not a 64-bit integer")
		return 0, false
	}
	return n, true
}

func (d *decoder) boolean(s span, name string) bool {
	if d.err != nil || d.isNull(s) {
		return false
	}
	switch d.b[s.start] {
	case 't':
		return true
	case 'f':
		return false
	}
	d.fail(s, "field "+strconv.Quote(name)+" is not a boolean")
	return false
}

func (d *decoder) raw(s span) json.RawMessage {
	if !s.present() {
		return nil
	}
	return append(json.RawMessage(nil), d.b[s.start:s.end]...)
}

// sub walks the object at s (already validated), calling field for each
// member; it reports false, recording an error, when s is not an object.
func (d *decoder) sub(s span, name string, field func(key []byte, val span)) bool {
	if d.err != nil || d.isNull(s) {
		return false
	}
	if d.b[s.start] != '{' {
		d.fail(s, "field "+strconv.Quote(name)+" is not an object")
		return false
	}
	// The line was validated as a whole, so this walk cannot fail.
	r := reader{b: d.b[:s.end], i: s.start, trusted: true}
	_ = r.members(func(key span, escaped bool) error {
		k := d.b[key.start:key.end]
		if escaped {
			k = []byte(unescape(k, true))
		}
		val, err := r.value()
		field(k, val)
		return err
	})
	return true
}

// messageText concatenates the text blocks of message.content, which
// fields read. content may also be a plain string. Blocks of other types
// (images, tool uses) are skipped. With alias, the text of a message with
// one verbatim text block is a view of the line (see recent.aliasText).
func (d *decoder) messageText(f *fields, alias bool) string {
	if d.ids != nil {
		d.ids.textASCII = false
	}
	if d.err != nil || d.isNull(f.message) {
		return ""
	}
	if d.b[f.message.start] != '{' {
		d.fail(f.message, `field "message" is not an object`)
		return ""
	}
	if d.isNull(f.content) {
		return ""
	}
	switch d.b[f.content.start] {
	case '"':
		return d.stringAt(f.content)
	case '[':
	default:
		d.fail(f.content, `field "message.content" is neither an array nor a string`)
		return ""
	}
	var first *block
	var texts []string // from the second text block on
	n, ascii := 0, true
	for i := range f.blocks {
		b := &f.blocks[i]
		if !b.isObject {
			d.fail(b.whole, `an element of "message.content" is not an object`)
			return ""
		}
		if !d.stringIs(b.typ, "text") || d.isNull(b.text) {
			continue
		}
		if d.b[b.text.start] != '"' {
			d.fail(b.text, `a text block's "text" is not a string`)
			return ""
		}
		ascii = ascii && b.hasVerbatim && b.ascii
		if n == 0 {
			first = b
		} else {
			if n == 1 {
				texts = append(texts, d.blockText(first, true))
			}
			texts = append(texts, d.blockText(b, true))
		}
		n++
	}
	if d.ids != nil {
		d.ids.textASCII = ascii
	}
	switch n {
	case 0:
		return ""
	case 1:
		return d.blockText(first, alias)
	}
	return strings.Join(texts, "")
}

// blockText is the value of b's text; with alias, a view of the line when
// the text is verbatim.
func (d *decoder) blockText(b *block, alias bool) string {
	if !b.hasVerbatim {
		return b.value
	}
	raw := d.b[b.verbatim.start:b.verbatim.end]
	if alias && len(raw) > 0 {
		return unsafe.String(&raw[0], len(raw))
	}
	return string(raw)
}

const toolCallSuffix = "ToolCall"

// toolCall fills t from the tool_call object: the tool is its first key that
// ends in "ToolCall" (with something before the suffix).
func (d *decoder) toolCall(s span, t *ToolCall) {
	var body span
	d.sub(s, "tool_call", func(key []byte, val span) {
		if t.Key == "" && len(key) > len(toolCallSuffix) && strings.HasSuffix(string(key), toolCallSuffix) {
			t.Key = string(key)
			t.Name, body = strings.TrimSuffix(t.Key, toolCallSuffix), val
		}
	})
	if t.Key == "" {
		return
	}
	var args, result span
	d.sub(body, "tool_call."+t.Key, func(key []byte, val span) {
		switch string(key) {
		case "args":
			args = val
		case "result":
			result = val
		}
	})
	if !d.isNull(args) {
		t.Args = d.raw(args)
	}
	var status string
	var value span
	if d.sub(result, "tool_call."+t.Key+".result", func(key []byte, val span) {
		if !value.present() {
			status, value = string(key), val
		}
	}) {
		t.Result = &ToolResult{Status: status, Value: d.raw(value)}
	}
}

// usage reads the result's usage object; an absent or null usage is
// unreported.
func (d *decoder) usage(s span) Usage {
	var u Usage
	var in, out, cr, cw span
	if !d.sub(s, "usage", func(key []byte, val span) {
		switch string(key) {
		case "inputTokens":
			in = val
		case "outputTokens":
			out = val
		case "cacheReadTokens":
			cr = val
		case "cacheWriteTokens":
			cw = val
		}
	}) {
		return u
	}
	u.Reported = true
	u.InputTokens = d.optInteger(in, "usage.inputTokens")
	u.OutputTokens = d.optInteger(out, "usage.outputTokens")
	u.CacheReadTokens = d.optInteger(cr, "usage.cacheReadTokens")
	u.CacheWriteTokens = d.optInteger(cw, "usage.cacheWriteTokens")
	return u
}

func (d *decoder) optInteger(s span, name string) *int64 {
	n, ok := d.integer(s, name)
	if !ok {
		return nil
	}
	return &n
}

func (d *decoder) unknown(f fields, typ string) *Unknown {
	sub, _ := d.optString(f.subtype)
	return &Unknown{Type: typ, Subtype: sub, Raw: append(json.RawMessage(nil), trimJSONSpace(d.b)...)}
}

func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
