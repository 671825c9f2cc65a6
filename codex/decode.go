package codex

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"strconv"
)

// This file reads one line of `codex exec --json` into its members with
// encoding/json/v2: the line is validated as one JSON value with invalid
// UTF-8 and repeated member names allowed (what Node's JSON.parse and
// serde_json's lenient readers accept), its members are listed with a
// jsontext.Decoder (of a name given twice the last value counts), and only
// the members an event type uses are read, each checked for the kind
// Codex sends (exec/src/exec_events.rs), null counting as absent.

// readOpts are the options every value is read with: invalid UTF-8 and
// lone surrogate escapes read as U+FFFD, repeated names allowed.
func readOpts() json.Options {
	return json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}

// span is where a value lies in a line; the zero span is an absent value.
type span struct{ start, end int }

func (s span) absent() bool { return s.end == 0 }

// badLine says why a line could not be decoded.
type badLine struct {
	notJSON bool   // the line is not a JSON object at all
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
func parseLine(line []byte) (*reader, object, *badLine) {
	r := &reader{b: line, opts: readOpts()}
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

// buildObject writes {"k1":v1,...} from names and raw values, a nil
// value written as null.
func buildObject(kv ...any) jsontext.Value {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(kv[i].(string)))
		b.WriteByte(':')
		if v, _ := kv[i+1].(jsontext.Value); len(v) > 0 {
			b.Write(v)
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}
