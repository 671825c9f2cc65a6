package codex

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"strconv"
)

// This file reads one line of `codex exec --json` into the members its
// events use, in one of two ways:
//
//   - The token loop (fast.go): one reused jsonscan.Scanner reads the
//     line's members in one pass, switching on their raw names, and keeps
//     those of every event type (and of every item type) when each has
//     the kind Codex sends (exec/src/exec_events.rs), null counting as
//     absent. It reads every well-formed line Codex prints: the lines of
//     a normal turn are read this way only. Anything it does not expect
//     (an escaped name, a member of another kind, a member it reads given
//     twice, a number that is no int64, an item event without its item)
//     sends the line to the walk.
//   - The member walk: the line is validated as one JSON value with
//     invalid UTF-8 and repeated member names allowed (what Node's
//     JSON.parse and serde_json's lenient readers accept), its members
//     are listed with a jsontext.Decoder (of a name given twice the last
//     value counts), and only the members the line's type uses are read,
//     each checked for the kind Codex sends, null counting as absent. The
//     walk gives every verdict the first way cannot (not JSON, not an
//     object, a member of the wrong kind, each with the byte offset of
//     the culprit), and reads the lines the first way refuses but the
//     protocol allows: a member name given twice (web_search items carry
//     two "id"s), a member of another kind that the line's type does not
//     use.
//
// Both fill the same wireLine and read strings the same way (invalid
// UTF-8 and lone surrogate escapes read as U+FFFD), so when the first way
// succeeds it yields what the walk would: FuzzFastSlow holds them to
// that.

// wireLine holds the members of every event type Codex sends. The
// Decoder keeps one and decodes every line into it, so its raw values
// keep their capacity from line to line: the events copy what they keep.
type wireLine struct {
	Type     string
	ThreadID string     // thread.started
	Item     wireItem   // item.started, item.updated, item.completed
	Usage    *wireUsage // turn.completed; nil when absent or null
	Error    *wireError // turn.failed; nil when absent or null
	Message  string     // error
}

// wireItem is the item of an item event. A raw member is empty when
// absent or null.
type wireItem struct {
	ID      string // tool items only on the first way (see id)
	Type    string
	Text    string // agent_message, reasoning
	Message string // error
	Status  string // command_execution, file_change, mcp_tool_call, collab_tool_call

	Command           jsontext.Value // command_execution: a string
	AggregatedOutput  jsontext.Value // command_execution: a string
	ExitCode          jsontext.Value // command_execution: an integer
	Changes           jsontext.Value // file_change: an array
	Server            jsontext.Value // mcp_tool_call: a string
	Tool              jsontext.Value // mcp_tool_call, collab_tool_call: a string
	Arguments         jsontext.Value // mcp_tool_call: any
	Result            jsontext.Value // mcp_tool_call: an object
	Error             jsontext.Value // mcp_tool_call: an object
	Query             jsontext.Value // web_search: a string
	Action            jsontext.Value // web_search: any
	ReceiverThreadIDs jsontext.Value // collab_tool_call: an array
	AgentsStates      jsontext.Value // collab_tool_call: an object

	server string // mcp_tool_call: Server's string
	id     []byte // ID's bytes, for every item type
}

// wireUsage is turn.completed's usage; a count is nil when absent or null.
type wireUsage struct {
	InputTokens       *int64
	CachedInputTokens *int64
	OutputTokens      *int64
}

// wireError is turn.failed's error.
type wireError struct {
	Message string
}

// reset empties w for the next line, keeping its raw values' capacity.
// It must name every field.
func (w *wireLine) reset() {
	w.Type, w.ThreadID, w.Usage, w.Error, w.Message = "", "", nil, nil, ""
	it := &w.Item
	it.ID, it.Type, it.Text, it.Message, it.Status, it.server = "", "", "", "", "", ""
	it.Command, it.AggregatedOutput, it.ExitCode = it.Command[:0], it.AggregatedOutput[:0], it.ExitCode[:0]
	it.Changes, it.Server, it.Tool, it.Arguments = it.Changes[:0], it.Server[:0], it.Tool[:0], it.Arguments[:0]
	it.Result, it.Error, it.Query, it.Action = it.Result[:0], it.Error[:0], it.Query[:0], it.Action[:0]
	it.ReceiverThreadIDs, it.AgentsStates = it.ReceiverThreadIDs[:0], it.AgentsStates[:0]
	it.id = it.id[:0]
}

// lineReader decodes lines, reusing its wireLine from one to the next.
type lineReader struct {
	lenient json.Options // the walk: the last value of a name given twice wins
	w       wireLine
	f       fastState // the token loop's reused state

	slowOnly  bool // test hook: read every line with the walk
	fastLines int  // lines read the first way, for tests
}

func newLineReader() *lineReader {
	return &lineReader{lenient: readOpts()}
}

// readOpts are the options the walk reads values with: invalid UTF-8 and
// lone surrogate escapes read as U+FFFD, repeated names allowed.
func readOpts() json.Options {
	return json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}

// decode reads line (without its terminator; surrounding JSON whitespace
// is allowed). The result is valid until the next call; its strings are
// its own, its raw values are reused by the next call.
func (r *lineReader) decode(line []byte) (*wireLine, *badLine) {
	w := &r.w
	w.reset()
	if !r.slowOnly && r.f.line(line, w) {
		r.fastLines++
		return w, nil
	}
	w.reset()
	return w, r.walk(line)
}

// walk is the second way (see the top of this file). It reads the members
// in the order the events use them and reports the first that does not
// have its kind; inType is set when that is the type itself.
func (r *lineReader) walk(line []byte) *badLine {
	rd, top, bad := parseLine(line, r.lenient)
	if bad != nil {
		return bad
	}
	w := &r.w
	w.Type = rd.str(top, "type", "type")
	if rd.err != nil {
		rd.err.inType = true
		return rd.err
	}
	switch w.Type {
	case "thread.started":
		w.ThreadID = rd.str(top, "thread_id", "thread_id")
	case "item.started", "item.updated", "item.completed":
		item, ok := rd.obj(top, "item", "item")
		if !ok {
			if rd.err == nil {
				rd.fail(span{}, `field "item" is missing`)
			}
			break
		}
		rd.item(item, &w.Item)
	case "turn.completed":
		if u, ok := rd.obj(top, "usage", "usage"); ok {
			w.Usage = &wireUsage{
				InputTokens:       rd.intp(u, "input_tokens", "usage.input_tokens"),
				CachedInputTokens: rd.intp(u, "cached_input_tokens", "usage.cached_input_tokens"),
				OutputTokens:      rd.intp(u, "output_tokens", "usage.output_tokens"),
			}
		}
	case "turn.failed":
		if e, ok := rd.obj(top, "error", "error"); ok {
			w.Error = &wireError{Message: rd.str(e, "message", "error.message")}
		}
	case "error":
		w.Message = rd.str(top, "message", "message")
	}
	return rd.err
}

// item reads the members of an item that its type uses into it.
func (r *reader) item(item object, it *wireItem) {
	it.ID = r.str(item, "id", "item.id")
	it.id = append(it.id[:0], it.ID...)
	it.Type = r.str(item, "type", "item.type")
	switch it.Type {
	case "agent_message", "reasoning":
		it.Text = r.str(item, "text", "item.text")
	case "error":
		it.Message = r.str(item, "message", "item.message")
	case "command_execution":
		it.Command = r.raw(item, "command", "item.command", '"')
		it.Status = r.str(item, "status", "item.status")
		it.AggregatedOutput = r.raw(item, "aggregated_output", "item.aggregated_output", '"')
		it.ExitCode = r.raw(item, "exit_code", "item.exit_code", '0')
		r.int(item, "exit_code", "item.exit_code") // an integer, not any number
	case "file_change":
		it.Changes = r.raw(item, "changes", "item.changes", '[')
		it.Status = r.str(item, "status", "item.status")
	case "mcp_tool_call":
		it.server = r.str(item, "server", "item.server")
		it.Server = r.raw(item, "server", "item.server", '"')
		it.Tool = r.raw(item, "tool", "item.tool", '"')
		it.Arguments = r.raw(item, "arguments", "item.arguments", 0)
		it.Status = r.str(item, "status", "item.status")
		it.Result = r.raw(item, "result", "item.result", '{')
		it.Error = r.raw(item, "error", "item.error", '{')
	case "web_search":
		it.Query = r.raw(item, "query", "item.query", '"')
		it.Action = r.raw(item, "action", "item.action", 0)
	case "collab_tool_call":
		it.Tool = r.raw(item, "tool", "item.tool", '"')
		it.ReceiverThreadIDs = r.raw(item, "receiver_thread_ids", "item.receiver_thread_ids", '[')
		it.Status = r.str(item, "status", "item.status")
		it.AgentsStates = r.raw(item, "agents_states", "item.agents_states", '{')
	}
}

// intp returns the integer member name of o, nil when absent or null (or
// not an integer: a shape error).
func (r *reader) intp(o object, name, path string) *int64 {
	if n, ok := r.int(o, name, path); ok {
		return &n
	}
	return nil
}

// span is where a value lies in a line; the zero span is an absent value.
type span struct{ start, end int }

func (s span) absent() bool { return s.end == 0 }

// badLine says why a line could not be decoded.
type badLine struct {
	notJSON bool   // the line is not a JSON object at all
	inType  bool   // the culprit is the line's "type"
	offset  int    // byte offset within the line of the culprit
	reason  string // e.g. `field "item.text" is not a string`
}

// object is a JSON object within a line: its members by name.
type object struct {
	m map[string]span
}

// reader reads the values of one line, keeping the first shape error.
type reader struct {
	b    []byte
	opts json.Options
	err  *badLine
}

// parseLine validates line and returns its top-level object.
func parseLine(line []byte, opts json.Options) (*reader, object, *badLine) {
	r := &reader{b: line, opts: opts}
	if !jsontext.Value(line).IsValid(r.opts) {
		var v jsontext.Value
		return nil, object{}, notJSON(json.Unmarshal(line, &v, r.opts))
	}
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, object{}, &badLine{notJSON: true, reason: "the line is JSON but not an object"}
	}
	start := len(line) - len(trimmed)
	end := len(bytes.TrimRight(line, " \t\r\n"))
	return r, r.members(span{start, end}), nil
}

func notJSON(err error) *badLine {
	de := &badLine{notJSON: true, reason: "not JSON"}
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
		r.err = &badLine{offset: at.start, reason: reason}
	}
}

// kind returns the kind of the value at v: 'n' for null or absent, else
// jsontext.Kind's '"', '0', 't', 'f', '{', '['.
func (r *reader) kind(v span) jsontext.Kind {
	if v.absent() {
		return 'n'
	}
	return jsontext.Value(r.b[v.start:v.end]).Kind()
}

// members lists the members of the object at v (a validated value).
func (r *reader) members(v span) object {
	o := object{m: map[string]span{}}
	dec := jsontext.NewDecoder(bytes.NewReader(r.b[v.start:v.end]), r.opts)
	_, err := dec.ReadToken() // '{'
	for err == nil && dec.PeekKind() == '"' {
		var tok jsontext.Token
		if tok, err = dec.ReadToken(); err != nil {
			break
		}
		name := tok.String()
		var val jsontext.Value
		if val, err = dec.ReadValue(); err == nil {
			end := v.start + int(dec.InputOffset())
			o.m[name] = span{end - len(val), end}
		}
	}
	if err != nil { // not reached: the value was validated
		r.fail(v, "unreadable object: "+err.Error())
	}
	return o
}

// str returns the string member name of o: "" when absent or null, a
// shape error when it is another kind of value. path names it in errors.
func (r *reader) str(o object, name, path string) string {
	v := o.m[name]
	switch r.kind(v) {
	case 'n':
		return ""
	case '"':
		var s string
		_ = json.Unmarshal(r.b[v.start:v.end], &s, r.opts)
		return s
	}
	r.fail(v, "field "+strconv.Quote(path)+" is not a string")
	return ""
}

// int returns the integer member name of o; ok is false when absent or
// null (or not an integer: a shape error).
func (r *reader) int(o object, name, path string) (n int64, ok bool) {
	v := o.m[name]
	if r.kind(v) == 'n' {
		return 0, false
	}
	if r.kind(v) != '0' || json.Unmarshal(r.b[v.start:v.end], &n, r.opts) != nil {
		r.fail(v, "field "+strconv.Quote(path)+" is not a 64-bit integer")
		return 0, false
	}
	return n, true
}

// obj returns the object member name of o; ok is false when absent or
// null (or not an object: a shape error).
func (r *reader) obj(o object, name, path string) (object, bool) {
	v := o.m[name]
	switch r.kind(v) {
	case 'n':
		return object{}, false
	case '{':
		return r.members(v), true
	}
	r.fail(v, "field "+strconv.Quote(path)+" is not an object")
	return object{}, false
}

// raw returns a copy of member name's value, nil when absent or null.
// want, when not 0, is the kind it must have (a shape error otherwise).
func (r *reader) raw(o object, name, path string, want jsontext.Kind) jsontext.Value {
	v := o.m[name]
	k := r.kind(v)
	if k == 'n' {
		return nil
	}
	if want != 0 && k != want && !(want == 't' && k == 'f') {
		r.fail(v, "field "+strconv.Quote(path)+" is not "+kindName(want))
		return nil
	}
	return bytes.Clone(r.b[v.start:v.end])
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't':
		return "a boolean"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "of kind " + k.String()
}

// member is one member of an object buildObject writes.
type member struct {
	name string         // plain ASCII, written as is between quotes
	v    jsontext.Value // a raw value; empty is written as null
}

// buildObject writes {"k1":v1,...}, a copy of the values.
func buildObject(ms ...member) jsontext.Value {
	n := 2
	for _, m := range ms {
		n += len(m.name) + 4 + max(len(m.v), len("null"))
	}
	b := make(jsontext.Value, 0, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.name...)
		b = append(b, '"', ':')
		if len(m.v) > 0 {
			b = append(b, m.v...)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}
