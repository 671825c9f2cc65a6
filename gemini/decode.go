package gemini

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"strconv"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/jsonscan"
)

// This file reads one line of gemini's stream-json into the members its
// events carry. A line is read as Node's JSON.parse reads it: invalid
// UTF-8 and lone surrogate escapes read as U+FFFD, and of a member given
// twice the last value counts. Each event type reads the members it uses,
// each of which must have the kind gemini sends (null counting as absent).
// A line is read in one of two ways:
//
//   - One pass of a jsonscan.Scanner into wireLine (read), which holds the
//     members of every event type with the Go type of what gemini sends;
//     finish then checks the members kept raw. It reads every well-formed
//     event gemini prints: the lines of a normal turn are read this way
//     only. Anything it does not expect (an escaped name, a member of
//     another kind, a member it reads given twice, a count that is no
//     int64) sends the line to the walk.
//   - When that fails, the member walk (walk): validate the line, list its
//     top-level members with a jsontext.Decoder, and read only the members
//     the line's type uses. The walk gives every verdict the first way
//     cannot (not JSON, not an object, a member of the wrong kind, with
//     the byte offset of the culprit), and reads the lines the first way
//     refuses but the protocol allows: a member of another kind that the
//     line's type does not use, a member name given twice.
//
// Both accept what jsontext accepts with the walk's options and read
// strings the same way, so when the first way succeeds it yields what the
// walk would: FuzzDecoderFastSlow holds them to that.

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
	models     jsontext.Value // stats.models, as sent; nil when absent
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

// lenientOptions are the options the walk reads values with (see the
// top of the file).
var lenientOptions = json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// wireLine holds the top-level members of every event type gemini sends,
// each with the Go type gemini sends it with (read); parameters, output
// and error are kept raw and checked by finish.
type wireLine struct {
	Type string // type; timestamp is only checked to be a string

	SessionID, Model string // session_id, model: init

	Role, Content string // role, content, delta: message
	Delta         bool

	ToolName, ToolID string         // tool_name, tool_id: tool_use, tool_result
	Parameters       jsontext.Value // parameters
	Status           string         // status
	Output           jsontext.Value // output
	Error            jsontext.Value // error

	Severity, Message string // severity, message: error

	Stats *wireStats // stats: result
}

// read reads line's object into w (zero), member by member as json/v2
// reads a struct by its field names (case-sensitive, other members
// skipped), with s: a string member must be a string or null, delta a
// boolean or null, stats an object or null, the raw members any value
// (copied). Any other kind, a member read here given twice, or anything s
// declines reports false: the walk reads the line.
func (w *wireLine) read(s *jsonscan.Scanner, line []byte) bool {
	s.Reset(line)
	if !s.Object() {
		return false
	}
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "type":
			ok = seen.First(0) && s.String(&w.Type, words...)
		case "timestamp":
			_, ok = s.Str()
			ok = ok && seen.First(1)
		case "session_id":
			ok = seen.First(2) && s.String(&w.SessionID)
		case "model":
			ok = seen.First(3) && s.String(&w.Model)
		case "role":
			ok = seen.First(4) && s.String(&w.Role, words...)
		case "content":
			ok = seen.First(5) && s.String(&w.Content)
		case "delta":
			ok = seen.First(6) && s.Bool(&w.Delta)
		case "tool_name":
			ok = seen.First(7) && s.String(&w.ToolName)
		case "tool_id":
			ok = seen.First(8) && s.String(&w.ToolID)
		case "parameters":
			ok = seen.First(9) && readRaw(s, &w.Parameters)
		case "status":
			ok = seen.First(10) && s.String(&w.Status, words...)
		case "output":
			ok = seen.First(11) && readRaw(s, &w.Output)
		case "error":
			ok = seen.First(12) && readRaw(s, &w.Error)
		case "severity":
			ok = seen.First(13) && s.String(&w.Severity, words...)
		case "message":
			ok = seen.First(14) && s.String(&w.Message)
		case "stats":
			ok = seen.First(15) && readStats(s, &w.Stats)
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
var words = []string{"init", "message", "tool_use", "tool_result", "error", "result", "assistant", "user", "success", "warning"}

// readRaw reads a copy of the next value into *v.
func readRaw(s *jsonscan.Scanner, v *jsontext.Value) bool {
	raw := s.Value()
	*v = bytes.Clone(raw)
	return raw != nil
}

// readStats reads stats, an object or null (nil), into *st, as
// json.Unmarshal reads wireStats: each count an int64 or null.
func readStats(s *jsonscan.Scanner, st **wireStats) bool {
	switch s.Peek() {
	case 'n':
		*st = nil
		return s.Skip()
	case '{':
	default:
		return false
	}
	s.Object()
	w := &wireStats{}
	*st = w
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "input_tokens":
			ok = seen.First(0) && readCount(s, &w.InputTokens)
		case "output_tokens":
			ok = seen.First(1) && readCount(s, &w.OutputTokens)
		case "cached":
			ok = seen.First(2) && readCount(s, &w.Cached)
		case "input":
			ok = seen.First(3) && readCount(s, &w.Input)
		case "duration_ms":
			ok = seen.First(4) && readCount(s, &w.DurationMs)
		case "total_tokens":
			ok = seen.First(5) && readCount(s, &w.TotalTokens)
		case "tool_calls":
			ok = seen.First(6) && readCount(s, &w.ToolCalls)
		case "models":
			ok = seen.First(7) && readRaw(s, &w.Models)
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	return !s.Failed()
}

// readCount reads an int64 or null (nil) into *dst.
func readCount(s *jsonscan.Scanner, dst **int64) bool {
	n, present, ok := s.Int()
	*dst = nil
	if present {
		*dst = &n
	}
	return ok
}

// wireStats is the result's stats (see stats); nil is absent or null.
type wireStats struct {
	InputTokens, OutputTokens, Cached, Input *int64         // input_tokens, output_tokens, cached, input
	DurationMs, TotalTokens, ToolCalls       *int64         // duration_ms, total_tokens, tool_calls
	Models                                   jsontext.Value // models, any value (answeredModel reads it)
}

// lineReader decodes lines, reusing its buffers from one to the next.
type lineReader struct {
	// slowOnly makes every line take the walk (a test hook).
	slowOnly bool
	// walks counts the lines the walk read (a test hook).
	walks int

	s  jsonscan.Scanner
	es jsonscan.Scanner // an error object
	w  wireLine
	f  fields
}

// decode reads line (without its terminator; surrounding JSON whitespace
// allowed). The result is valid until the next call; every string and
// value in it is its own (none views line). The fields are nil only for a
// line that is not JSON.
func (r *lineReader) decode(line []byte) (*fields, *decodeError) {
	if !r.slowOnly {
		// Stats starts nil, so read allocates it anew: the result event
		// keeps its counts.
		r.w = wireLine{}
		if r.w.read(&r.s, line) && r.finish() {
			return &r.f, nil
		}
	}
	r.walks++
	return decodeLine(line)
}

// isObject reports whether line starts (after JSON whitespace) like an
// object.
func isObject(line []byte) bool {
	line = bytes.TrimLeft(line, " \t\r\n")
	return len(line) > 0 && line[0] == '{'
}

// finish completes what read read into r.w as the walk reads it; false
// sends the line to the walk.
func (r *lineReader) finish() bool {
	w := &r.w
	f := &r.f
	*f = fields{typ: w.Type, kind: kindOf(w.Type)}
	switch f.kind {
	case kindInit:
		f.sessionID, f.model = w.SessionID, w.Model
	case kindMessage:
		f.role, f.content, f.delta = w.Role, w.Content, w.Delta
	case kindToolUse:
		f.toolName, f.toolID = w.ToolName, w.ToolID
		switch rawKind(w.Parameters) {
		case 'n':
		case '{':
			f.params = w.Parameters
		default:
			return false
		}
	case kindToolResult:
		f.toolID, f.status = w.ToolID, w.Status
		switch rawKind(w.Output) {
		case 'n':
		case '"':
			f.output = w.Output
		default:
			return false
		}
		return r.errorObject()
	case kindError:
		f.severity, f.message = w.Severity, w.Message
	case kindResult:
		f.status = w.Status
		if !r.errorObject() {
			return false
		}
		if s := w.Stats; s != nil {
			f.usage = event.Usage{Reported: true, InputTokens: s.Input, OutputTokens: s.OutputTokens, CacheReadTokens: s.Cached}
			if s.Input == nil && s.InputTokens != nil && s.Cached != nil {
				n := max(0, *s.InputTokens-*s.Cached)
				f.usage.InputTokens = &n
			}
			if s.DurationMs != nil {
				f.durationMs = *s.DurationMs
			}
			f.models = s.Models
		}
	}
	return true
}

// errorObject reads r.w.Error, an object or null, into r.f.
func (r *lineReader) errorObject() bool {
	switch rawKind(r.w.Error) {
	case 'n':
		return true
	case '{':
	default:
		return false
	}
	s := &r.es
	s.Reset(r.w.Error)
	s.Object()
	var typ, msg string
	var seen jsonscan.Seen
	for {
		name, ok := s.Member()
		if !ok {
			break
		}
		switch string(name) {
		case "type":
			ok = seen.First(0) && s.String(&typ)
		case "message":
			ok = seen.First(1) && s.String(&msg)
		default:
			ok = s.Skip()
		}
		if !ok {
			return false
		}
	}
	if !s.End() {
		return false
	}
	r.f.errObj, r.f.errType, r.f.message = r.w.Error, typ, msg
	return true
}

// rawKind is the kind of a raw member read kept: 'n' when
// absent or null.
func rawKind(v jsontext.Value) jsontext.Kind {
	if len(v) == 0 {
		return 'n'
	}
	return v.Kind()
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
	opts := lenientOptions
	if !jsontext.Value(line).IsValid(opts) {
		var v jsontext.Value
		return nil, notJSON(json.Unmarshal(line, &v, opts))
	}
	if !isObject(line) {
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
		f.durationMs, f.usage, f.models = r.stats(top["stats"])
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
func (r *reader) stats(v span) (int64, event.Usage, jsontext.Value) {
	var u event.Usage
	if !r.object(v, "stats") {
		return 0, u, nil
	}
	at := r.members(v, "input_tokens", "output_tokens", "cached", "input", "duration_ms", "total_tokens", "tool_calls", "models")
	var models jsontext.Value
	if m := at["models"]; !m.absent() {
		models = r.value(m)
	}
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
	return d, u, models
}

// answeredModel is the model that answered the turn, read from the
// result's stats.models ({"MODEL": {"total_tokens": N, ...}, ...}, one
// entry per model the turn called, keyed by the model the API said
// answered): the one with the most tokens, as the turn's own model does
// most of the work (a routing classifier's call is small); "" when
// models is absent or not that shape. Ties go to the name that sorts
// first.
func answeredModel(models jsontext.Value) string {
	if len(models) == 0 {
		return ""
	}
	var byModel map[string]struct {
		TotalTokens int64 `json:"total_tokens"`
	}
	if json.Unmarshal(models, &byModel, lenientOptions) != nil {
		return ""
	}
	best, most := "", int64(-1)
	for name, m := range byModel {
		if m.TotalTokens > most || m.TotalTokens == most && name < best {
			best, most = name, m.TotalTokens
		}
	}
	return best
}
