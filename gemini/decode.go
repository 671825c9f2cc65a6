package gemini

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"strconv"

	"github.com/cursorkit/cursorkit/event"
)

// This file reads one line of gemini's stream-json into the members its
// events carry. A line is read with jsontext as Node's JSON.parse reads
// it: invalid UTF-8 and lone surrogate escapes read as U+FFFD, and of a
// member given twice the last value counts. The line's top-level members
// are listed once; each event type then reads the members it uses, each
// of which must have the kind gemini sends (null counting as absent).

// eventKind is what a line is, by its type.
type eventKind int

const (
	kindUnknown eventKind = iota
	kindInit
	kindMessage
	kindToolUse
	kindToolResult
	kindError
	kindResult
)

func kindOf(typ string) eventKind {
	switch typ {
	case "init":
		return kindInit
	case "message":
		return kindMessage
	case "tool_use":
		return kindToolUse
	case "tool_result":
		return kindToolResult
	case "error":
		return kindError
	case "result":
		return kindResult
	}
	return kindUnknown
}

// fields is one decoded line: what its type uses.
type fields struct {
	kind eventKind
	typ  string

	sessionID, model string // init

	role, content string // message
	delta         bool

	toolName, toolID string         // tool_use, tool_result
	params           jsontext.Value // tool_use: nil when absent or null
	status           string         // tool_result, result
	output           jsontext.Value // tool_result: the output string as sent; nil when absent
	errObj           jsontext.Value // tool_result, result: the error object; nil when absent

	severity, message string // error; result: error.type and error.message in errType, message
	errType           string

	durationMs int64 // result stats
	usage      event.Usage
}

// decodeError says why a line could not be decoded.
type decodeError struct {
	// notJSON: the line is not a JSON object at all (a banner before the
	// first event). Otherwise it is an object whose members do not have
	// the shape its type requires.
	notJSON bool
	offset  int
	reason  string
}

// readOptions are the options every value is read with (see the top of
// the file).
func readOptions() json.Options {
	return json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}

// span is where a value lies in the line; the zero span is absent.
type span struct{ start, end int }

func (s span) absent() bool { return s.end == 0 }

// reader reads typed values out of one line and keeps the first value
// that does not have its expected kind.
type reader struct {
	b    []byte
	opts json.Options
	err  *decodeError
}

// decodeLine reads line (without its terminator; surrounding JSON
// whitespace allowed). Every string and value in the result is its own.
func decodeLine(line []byte) (*fields, *decodeError) {
	opts := readOptions()
	if !jsontext.Value(line).IsValid(opts) {
		var v jsontext.Value
		return nil, notJSON(json.Unmarshal(line, &v, opts))
	}
	if t := bytes.TrimLeft(line, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, &decodeError{notJSON: true, reason: "the line is JSON but not an object"}
	}
	r := &reader{b: line, opts: opts}
	top := r.members(span{0, len(line)}, "type", "session_id", "model", "timestamp", "role", "content", "delta",
		"tool_name", "tool_id", "parameters", "status", "output", "error", "severity", "message", "stats")
	f := &fields{}
	f.typ, _ = r.optString(top["type"])
	f.kind = kindOf(f.typ)
	if f.kind != kindUnknown {
		r.str(top["timestamp"], "timestamp")
	}
	switch f.kind {
	case kindInit:
		f.sessionID = r.str(top["session_id"], "session_id")
		f.model = r.str(top["model"], "model")
	case kindMessage:
		f.role = r.str(top["role"], "role")
		f.content = r.str(top["content"], "content")
		f.delta = r.bool(top["delta"], "delta")
	case kindToolUse:
		f.toolName = r.str(top["tool_name"], "tool_name")
		f.toolID = r.str(top["tool_id"], "tool_id")
		if r.object(top["parameters"], "parameters") {
			f.params = r.value(top["parameters"])
		}
	case kindToolResult:
		f.toolID = r.str(top["tool_id"], "tool_id")
		f.status = r.str(top["status"], "status")
		if r.str(top["output"], "output"); r.kind(top["output"]) == '"' {
			f.output = r.value(top["output"])
		}
		if r.object(top["error"], "error") {
			f.errObj = r.value(top["error"])
			f.errType, f.message = r.errorObject(top["error"])
		}
	case kindError:
		f.severity = r.str(top["severity"], "severity")
		f.message = r.str(top["message"], "message")
	case kindResult:
		f.status = r.str(top["status"], "status")
		if r.object(top["error"], "error") {
			f.errObj = r.value(top["error"])
			f.errType, f.message = r.errorObject(top["error"])
		}
		f.durationMs, f.usage = r.stats(top["stats"])
	}
	if r.err != nil {
		return f, r.err
	}
	return f, nil
}

func notJSON(err error) *decodeError {
	de := &decodeError{notJSON: true, reason: "not JSON"}
	if err == nil {
		return de
	}
	de.reason = "not JSON: " + err.Error()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		de.offset = int(se.ByteOffset)
		if se.Err != nil {
			de.reason = "not JSON: " + se.Err.Error()
		}
	}
	return de
}

func (r *reader) fail(at span, reason string) {
	if r.err == nil {
		r.err = &decodeError{offset: at.start, reason: reason}
	}
}

// kind returns the kind of the value at v ('n' for null or absent).
func (r *reader) kind(v span) jsontext.Kind {
	if v.absent() {
		return 'n'
	}
	return jsontext.Value(r.b[v.start:v.end]).Kind()
}

// members returns where the named members of the object at v are (the
// last of a name given twice). v must be a valid object.
func (r *reader) members(v span, names ...string) map[string]span {
	at := make(map[string]span, len(names))
	dec := jsontext.NewDecoder(bytes.NewReader(r.b[v.start:v.end]), r.opts)
	if _, err := dec.ReadToken(); err != nil { // '{': not reached for a valid object
		return at
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return at
		}
		name := tok.String()
		val, err := dec.ReadValue()
		if err != nil {
			return at
		}
		for _, n := range names {
			if n == name {
				end := v.start + int(dec.InputOffset())
				at[name] = span{end - len(val), end}
				break
			}
		}
	}
	return at
}

// optString returns the string at v; false when absent, null or another
// kind.
func (r *reader) optString(v span) (string, bool) {
	if r.kind(v) != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(r.b[v.start:v.end], &s, r.opts) != nil {
		return "", false
	}
	return s, true
}

// str returns the string member name at v: "" when absent or null, a
// failure when another kind.
func (r *reader) str(v span, name string) string {
	switch r.kind(v) {
	case 'n':
		return ""
	case '"':
		s, _ := r.optString(v)
		return s
	}
	r.fail(v, "field "+strconv.Quote(name)+" is not a string")
	return ""
}

func (r *reader) bool(v span, name string) bool {
	switch k := r.kind(v); k {
	case 'n':
		return false
	case 't', 'f':
		return k == 't'
	}
	r.fail(v, "field "+strconv.Quote(name)+" is not a boolean")
	return false
}

// object reports whether v is an object, failing when it is neither an
// object nor null.
func (r *reader) object(v span, name string) bool {
	switch r.kind(v) {
	case 'n':
		return false
	case '{':
		return true
	}
	r.fail(v, "field "+strconv.Quote(name)+" is not an object")
	return false
}

// count reads an integer member: nil when absent or null.
func (r *reader) count(v span, name string) *int64 {
	if r.kind(v) == 'n' {
		return nil
	}
	var n int64
	if r.kind(v) != '0' || json.Unmarshal(r.b[v.start:v.end], &n, r.opts) != nil {
		r.fail(v, "field "+strconv.Quote(name)+" is not a 64-bit integer")
		return nil
	}
	return &n
}

// value returns a copy of the value at v, surrounding space trimmed.
func (r *reader) value(v span) jsontext.Value {
	return bytes.Clone(r.b[v.start:v.end])
}

// errorObject reads {"type": string, "message": string}.
func (r *reader) errorObject(v span) (typ, msg string) {
	at := r.members(v, "type", "message")
	return r.str(at["type"], "error.type"), r.str(at["message"], "error.message")
}

// stats reads the result's stats (StreamJsonFormatter.convertToStreamStats):
// total_tokens, input_tokens, output_tokens, cached, input, duration_ms,
// tool_calls, models. An absent or null stats is unreported usage.
//
// Gemini's input_tokens is the prompt token count, which includes the
// cached tokens (cached); its input is input_tokens minus cached, per
// model (uiTelemetry: tokens.input = max(0, prompt - cached)). Usage's
// InputTokens excludes cache reads, so it is input when reported, else
// input_tokens minus cached when both are; CacheReadTokens is cached.
// Gemini reports no cache writes.
func (r *reader) stats(v span) (int64, event.Usage) {
	var u event.Usage
	if !r.object(v, "stats") {
		return 0, u
	}
	at := r.members(v, "input_tokens", "output_tokens", "cached", "input", "duration_ms", "total_tokens", "tool_calls")
	promptTokens := r.count(at["input_tokens"], "stats.input_tokens")
	u.OutputTokens = r.count(at["output_tokens"], "stats.output_tokens")
	u.CacheReadTokens = r.count(at["cached"], "stats.cached")
	u.InputTokens = r.count(at["input"], "stats.input")
	r.count(at["total_tokens"], "stats.total_tokens")
	r.count(at["tool_calls"], "stats.tool_calls")
	if u.InputTokens == nil && promptTokens != nil && u.CacheReadTokens != nil {
		n := max(0, *promptTokens-*u.CacheReadTokens)
		u.InputTokens = &n
	}
	u.Reported = true
	var d int64
	if p := r.count(at["duration_ms"], "stats.duration_ms"); p != nil {
		d = *p
	}
	return d, u
}
