package claude

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"math"
	"strconv"
)

// This file reads one stdout line of Claude Code's stream-json with
// encoding/json/v2, as Node's JSON.parse reads it (Claude Code is a
// JavaScript program): invalid UTF-8 and lone surrogate escapes in a
// string read as U+FFFD, and of a member name given twice the last value
// counts. An object is read as the list of its members, each value kept
// as raw JSON with its byte offset in the line; a member is decoded only
// when the event uses it, and must then have the kind Claude Code sends
// (null counting as absent), or the line is a protocol violation naming
// the member's offset.

// readOptions are the options every value is read with.
func readOptions() json.Options {
	return json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}

// member is one member of an object: its value (a view of the line) and
// where the value starts in the line.
type member struct {
	name string
	v    jsontext.Value
	off  int
}

// object is an object's members in order. get returns the last member of
// a name: JSON.parse keeps the last value.
type object []member

func (o object) get(name string) (member, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].name == name {
			return o[i], true
		}
	}
	return member{}, false
}

// lineError says why a line could not be read.
type lineError struct {
	// notJSON is true when the line is not a JSON object at all (a banner
	// before the first event); when false the line is an object whose
	// members do not have the kinds its event requires.
	notJSON bool
	offset  int
	reason  string
}

// reader reads the values of one line, keeping the first error.
type reader struct {
	line []byte
	opts json.Options
	err  *lineError
}

func newReader(line []byte) *reader { return &reader{line: line, opts: readOptions()} }

// top reads the line as an object; a line that is not one is a notJSON
// error.
func (r *reader) top() (object, *lineError) {
	if !jsontext.Value(r.line).IsValid(r.opts) {
		var v jsontext.Value
		return nil, notJSON(json.Unmarshal(r.line, &v, r.opts))
	}
	v := trimSpace(r.line)
	if len(v) == 0 || v[0] != '{' {
		return nil, &lineError{notJSON: true, reason: "the line is JSON but not an object"}
	}
	start := len(r.line) - len(bytes.TrimLeft(r.line, " \t\r\n"))
	return r.members(member{v: v, off: start}), nil
}

func notJSON(err error) *lineError {
	de := &lineError{notJSON: true, reason: "not JSON"}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		de.offset = int(se.ByteOffset)
		if se.Err != nil {
			de.reason = "not JSON: " + se.Err.Error()
		}
	}
	return de
}

func (r *reader) fail(m member, reason string) {
	if r.err == nil {
		r.err = &lineError{offset: m.off, reason: reason}
	}
}

// members lists the members of the object m (a valid value).
func (r *reader) members(m member) object {
	var o object
	dec := jsontext.NewDecoder(bytes.NewReader(m.v), r.opts)
	if _, err := dec.ReadToken(); err != nil { // '{'
		r.fail(m, "not an object")
		return nil
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		name := tok.String()
		val, err := dec.ReadValue()
		if err != nil {
			break
		}
		end := int(dec.InputOffset())
		start := end - len(val)
		o = append(o, member{name: name, v: m.v[start:end:end], off: m.off + start})
	}
	return o
}

// elements lists the elements of the array m (a valid value).
func (r *reader) elements(m member) []member {
	var els []member
	dec := jsontext.NewDecoder(bytes.NewReader(m.v), r.opts)
	if _, err := dec.ReadToken(); err != nil { // '['
		r.fail(m, "not an array")
		return nil
	}
	for dec.PeekKind() != ']' && dec.PeekKind() != 0 {
		val, err := dec.ReadValue()
		if err != nil {
			break
		}
		end := int(dec.InputOffset())
		start := end - len(val)
		els = append(els, member{v: m.v[start:end:end], off: m.off + start})
	}
	return els
}

// kind is the kind of the member's value: 'n' for null or absent.
func kind(m member, ok bool) jsontext.Kind {
	if !ok || len(m.v) == 0 {
		return 'n'
	}
	return m.v.Kind()
}

// str returns the string member name of o: "" when absent or null.
func (r *reader) str(o object, name string) string {
	m, ok := o.get(name)
	return r.strOf(m, ok, name)
}

// strOf returns the string m (present when ok), "" when absent or null.
func (r *reader) strOf(m member, ok bool, name string) string {
	switch kind(m, ok) {
	case 'n':
		return ""
	case '"':
		var s string
		if json.Unmarshal(m.v, &s, r.opts) == nil {
			return s
		}
	}
	r.fail(m, "field "+strconv.Quote(name)+" is not a string")
	return ""
}

// boolean returns the boolean member name of o: false when absent or null.
func (r *reader) boolean(o object, name string) bool {
	m, ok := o.get(name)
	switch kind(m, ok) {
	case 'n', 'f':
		return false
	case 't':
		return true
	}
	r.fail(m, "field "+strconv.Quote(name)+" is not a boolean")
	return false
}

// number returns the number member name of o; ok is false when absent or
// null. Claude Code's numbers are JavaScript numbers: a delay may have a
// fraction.
func (r *reader) number(o object, name string) (n float64, ok bool) {
	m, present := o.get(name)
	switch kind(m, present) {
	case 'n':
		return 0, false
	case '0':
		if json.Unmarshal(m.v, &n, r.opts) == nil && !math.IsInf(n, 0) {
			return n, true
		}
	}
	r.fail(m, "field "+strconv.Quote(name)+" is not a number")
	return 0, false
}

// integer returns the number member name of o as an int64, truncated and
// clamped; ok is false when absent or null.
func (r *reader) integer(o object, name string) (int64, bool) {
	f, ok := r.number(o, name)
	if !ok {
		return 0, false
	}
	return clampInt(f), true
}

// clampInt is f truncated to an int64, clamped to its range.
func clampInt(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// obj returns the object member name of o; ok is false when absent or
// null.
func (r *reader) obj(o object, name string) (object, bool) {
	m, ok := o.get(name)
	switch kind(m, ok) {
	case 'n':
		return nil, false
	case '{':
		return r.members(m), true
	}
	r.fail(m, "field "+strconv.Quote(name)+" is not an object")
	return nil, false
}

// raw returns a copy of the member name of o, nil when absent or null.
func raw(o object, name string) jsontext.Value {
	m, ok := o.get(name)
	if kind(m, ok) == 'n' {
		return nil
	}
	return bytes.Clone(m.v)
}

// trimSpace trims JSON's whitespace (which is not unicode.IsSpace).
func trimSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r"))
}
