package turn

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
)

// Stream is the turn protocol every agent's stdout follows, whatever its
// format, kept once for all decoders: a decoder embeds a Stream, maps each
// line's wire type to events and asks the Stream for the rest.
//
//   - Lines are counted from 1, blank ones included, and named by their
//     number in every message; blank lines yield nothing.
//   - Before the first event (Begin), a line that is not a JSON object is
//     a banner: an event.WarnBanner warning, skipped.
//   - A second init event is an event.WarnDuplicateInit warning and is
//     passed on whole as an unknown event.
//   - A tool call is checked against the turn's policy when it starts,
//     and remembered by its call id until it completes.
//   - Exactly one final event (Finish), and no output after it.
//   - A failure is sticky: Feed is not called again after one.
//
// Errors and warnings quote at most excerptWidth bytes of a line and
// never hold the prompt's text: Run withholds what may (Withhold).
// The zero Stream is not ready: set Agent, Format, First, Final and
// Classify.
type Stream struct {
	// Agent names the agent in messages ("claude"), Format its stream
	// ("stream-json", "JSONL").
	Agent, Format string
	// First and Final name the stream's first and final events with their
	// article ("a system/init event", "a result event").
	First, Final string
	// Classify is the agent's ClassifyMessage: the failure kind a message
	// of the agent indicates, failure.Unclassified when it finds none.
	Classify func(string) failure.Kind

	opts      json.Options
	reader    bytes.Reader
	head      *jsontext.Decoder
	unquoted  []byte            // Head's type or subtype, unquoted
	interned  map[string]string // Head's types and subtypes (intern)
	line      int
	started   bool
	init      bool
	result    *event.Result
	resultErr error
	err       error
	tools     map[string]*event.Tool
}

// Next counts raw, the next stdout line, and returns it trimmed of its
// terminator and surrounding space; ok is false for a blank line, which
// yields nothing. After a failure it returns that failure again; after the
// final event, a protocol error.
func (s *Stream) Next(raw []byte) (line []byte, ok bool, err error) {
	if s.err != nil {
		return nil, false, s.err
	}
	s.line++
	line = bytes.TrimSpace(raw)
	if len(line) == 0 {
		return nil, false, nil
	}
	if s.result != nil {
		return nil, false, s.Protocol(0, line, "output after "+s.Final)
	}
	return line, true, nil
}

// options are UnmarshalOptions, made once per Stream.
func (s *Stream) options() json.Options {
	if s.opts == nil {
		s.opts = UnmarshalOptions()
	}
	return s.opts
}

// Line is the number of the line Next counted last.
func (s *Stream) Line() int { return s.line }

// UnmarshalOptions are the options Stream.Unmarshal reads a line with,
// for a decoder that reads a member's value on its own (a custom
// UnmarshalJSON): as Node's JSON.parse reads, a member may be given twice
// and invalid UTF-8 is replaced.
func UnmarshalOptions() json.Options {
	return json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
}

// Unmarshal decodes line, one JSON object, into v with encoding/json/v2,
// reading as Node's JSON.parse does: a member given twice is read twice
// (each value must fit the member's type; the last one stays, and two
// objects merge), invalid UTF-8 is replaced. A line that is not a JSON object is a banner
// before the first event: banner holds its warning and err is nil. Any
// other failure is a protocol error naming the byte offset and the JSON
// pointer json/v2 reports, its reason prefixed with what (the event's
// type, "" for none).
func (s *Stream) Unmarshal(line []byte, v any, what string) (banner []event.Event, err error) {
	var uerr error
	if line[0] == '{' {
		// Only an object: json/v2 reads null into a struct as nothing.
		if uerr = json.Unmarshal(line, v, s.options()); uerr == nil {
			return nil, nil
		}
	}
	var syn *jsontext.SyntacticError
	notObject := line[0] != '{' || errors.As(uerr, &syn)
	if notObject && !s.started {
		return []event.Event{{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnBanner,
			Message: fmt.Sprintf("ignored line %d before the first event (not a JSON object): %s", s.line, excerpt(line, 0))}}}, nil
	}
	if line[0] != '{' {
		return nil, s.Protocol(0, line, "not a JSON object")
	}
	return nil, s.Invalid(line, what, uerr)
}

// Invalid returns the protocol error of line, an event of type what ("" for
// none), for the first in the line of errs, the errors json/v2 gave for
// its members (Field.Err); nil when every one is nil. It names the byte
// offset and the JSON pointer, and quotes none of the line's values.
func (s *Stream) Invalid(line []byte, what string, errs ...error) error {
	var first error
	firstAt := -1
	for _, err := range errs {
		if err == nil {
			continue
		}
		if at, _ := jsonReason(err); first == nil || at < firstAt {
			first, firstAt = err, at
		}
	}
	if first == nil {
		return nil
	}
	offset, reason := jsonReason(first)
	if what != "" {
		if _, syntax := errors.AsType[*jsontext.SyntacticError](first); !syntax {
			reason = Quote(what, 40) + " event: " + reason
		}
	}
	return s.Protocol(offset, line, reason)
}

// Head reads the type and subtype of line, a line Next returned; a type
// or subtype that is not a string is "" (a type no decoder knows). It
// reads only the line's first members when they are its type and
// subtype, as every agent prints them: the rest is read by Unmarshal
// into the struct of the type, or by Pass for a type the decoder does
// not know. A line that is not a JSON object is a banner before the
// first event (banner holds its warning), else a protocol error.
func (s *Stream) Head(line []byte) (typ, subtype string, banner []event.Event, err error) {
	// Before the first event the whole line is read: one that is not
	// JSON is a banner, whatever it starts with.
	if s.started {
		if typ, subtype, ok := s.leadingHead(line); ok {
			return typ, subtype, nil, nil
		}
	}
	var h struct {
		Type    any `json:"type"`
		Subtype any `json:"subtype"`
	}
	if banner, err = s.Unmarshal(line, &h, ""); banner != nil || err != nil {
		return "", "", banner, err
	}
	typ, _ = h.Type.(string)
	subtype, _ = h.Subtype.(string)
	return typ, subtype, nil, nil
}

// leadingHead reads the type and subtype of line from its first members;
// ok is false when the line does not start with a string type.
func (s *Stream) leadingHead(line []byte) (typ, subtype string, ok bool) {
	s.reader.Reset(line)
	if s.head == nil {
		s.head = jsontext.NewDecoder(&s.reader, s.options())
	} else {
		s.head.Reset(&s.reader, s.options())
	}
	// A name is compared where it is read, which copies none.
	name := func(want string) bool {
		tok, err := s.head.ReadToken()
		return err == nil && tok.Kind() == '"' && tok.String() == want
	}
	value := func() (string, bool) {
		v, err := s.head.ReadValue()
		if err != nil || v.Kind() != '"' {
			return "", false
		}
		// As Token.String unquotes: invalid UTF-8 replaced.
		s.unquoted, _ = jsontext.AppendUnquote(s.unquoted[:0], v)
		return s.intern(s.unquoted), true
	}
	if tok, err := s.head.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", "", false
	}
	if !name("type") {
		return "", "", false
	}
	if typ, ok = value(); !ok {
		return "", "", false
	}
	if s.head.PeekKind() != '"' {
		return typ, "", true // a second member, or the end, which Unmarshal or Pass reads
	}
	if name("subtype") && s.head.PeekKind() == '"' {
		subtype, _ = value()
	}
	return typ, subtype, true
}

// maxInterned bounds the distinct types and subtypes a Stream keeps.
const maxInterned = 64

// intern returns b as a string, the same string for each of the first
// maxInterned distinct values: a stream has few types and subtypes, and a
// line's then allocates none.
func (s *Stream) intern(b []byte) string {
	if v, ok := s.interned[string(b)]; ok {
		return v
	}
	v := string(b)
	if len(s.interned) < maxInterned {
		if s.interned == nil {
			s.interned = map[string]string{}
		}
		s.interned[v] = v
	}
	return v
}

// Pass is the event of a line of a type the decoder does not know,
// passed on whole: the line must be one JSON object (a banner before
// the first event, else a protocol error).
func (s *Stream) Pass(typ, subtype string, line []byte) ([]event.Event, error) {
	if banner, err := s.Unmarshal(line, &struct{}{}, ""); banner != nil || err != nil {
		return banner, err
	}
	return []event.Event{Unknown(typ, subtype, line)}, nil
}

// jsonReason is where and why json/v2 refused a line, in words that quote
// none of the line's values.
func jsonReason(err error) (offset int, reason string) {
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return int(syn.ByteOffset), "not valid JSON"
	}
	var sem *json.SemanticError
	if errors.As(err, &sem) {
		reason = "field " + strconv.Quote(string(sem.JSONPointer)) + " is " + kindName(sem.JSONKind)
		if errors.Is(sem.Err, strconv.ErrRange) {
			return int(sem.ByteOffset), reason + " out of range"
		}
		if sem.GoType != nil {
			reason += ", not " + goKindName(sem.GoType)
		}
		return int(sem.ByteOffset), reason
	}
	return 0, "not a well-formed event"
}

// kindName names a JSON kind with its article.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "a value out of range"
}

// goKindName names the JSON kind a Go value of type t reads.
func goKindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[jsontext.Value]() {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// Started reports whether the first event arrived.
func (s *Stream) Started() bool { return s.started }

// NotFirst is the protocol failure of a well-formed event of type typ that
// may not come first.
func (s *Stream) NotFirst(typ string) error {
	what := "of type " + Quote(typ, 40)
	if typ == "" {
		what = "an event without a type"
	}
	return s.Fail(s.Protocol(-1, nil, "the first event is "+what+", not "+s.First))
}

// Init is the events of an init event of type typ (and subtype, "" for
// none): the init event the first time, after that a duplicate-init
// warning and the line passed on whole.
func (s *Stream) Init(in *event.Init, typ, subtype string, line []byte) []event.Event {
	s.started = true
	if s.init {
		name := typ
		if subtype != "" {
			name += "/" + subtype
		}
		return []event.Event{
			{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnDuplicateInit,
				Message: fmt.Sprintf("line %d: a second %s event (session %s)", s.line, name, Quote(in.SessionID, 64))}},
			Unknown(typ, subtype, line),
		}
	}
	s.init = true
	return []event.Event{{Type: event.TypeInit, Init: in}}
}

// Initialized reports whether the init event arrived.
func (s *Stream) Initialized() bool { return s.init }

// StartTool remembers the call t, which the policy allowed (allowed is
// the policy's verdict: nil, or a failure.Policy error that fails the
// turn, its detail naming the line and the call id).
func (s *Stream) StartTool(t *event.Tool, refused *failure.Error) error {
	if refused != nil {
		return s.Fail(refused.WithDetail(fmt.Sprintf("line %d, call id %s", s.line, Quote(t.CallID, 64))))
	}
	if s.tools == nil {
		s.tools = map[string]*event.Tool{}
	}
	s.tools[t.CallID] = t
	return nil
}

// Tool is the started call id, nil when none is remembered.
func (s *Stream) Tool(id string) *event.Tool { return s.tools[id] }

// CompleteTool forgets the started call id and returns it (nil when none
// was remembered): its name and args complete the call's completed event.
func (s *Stream) CompleteTool(id string) *event.Tool {
	t := s.tools[id]
	delete(s.tools, id)
	return t
}

// Finish records the final event res and failed, the failure it reports
// (nil for a turn that succeeded), which is End's verdict.
func (s *Stream) Finish(res *event.Result, failed error) {
	s.started = true
	s.result, s.resultErr = res, failed
}

// Result is the final event, nil before it.
func (s *Stream) Result() *event.Result { return s.result }

// Done reports that the final event arrived.
func (s *Stream) Done() bool { return s.result != nil }

// Fail records err, a failure of the turn, and returns it: it is sticky.
func (s *Stream) Fail(err error) error {
	if s.err == nil {
		s.err = err
	}
	return s.err
}

// Err is the failure recorded, nil when none.
func (s *Stream) Err() error { return s.err }

// End is the turn's verdict once the agent exited by itself with
// exitCode: the stream's failure; after the final event, the failure it
// reported (nil when none), whatever the exit code; else the unfinished
// verdict. An agent with exit codes of its own checks them first.
func (s *Stream) End(exitCode int, stderrTail string) error {
	switch {
	case s.err != nil:
		return s.err
	case s.result != nil:
		return s.resultErr
	}
	return unfinished{Agent: s.Agent, First: s.First, Final: s.Final, SawFirst: s.init,
		Lines: s.line, ExitCode: exitCode, StderrTail: stderrTail, Classify: s.Classify}.verdict()
}

// Protocol records and returns a failure.Protocol error for the current
// line: with a line, the message names the byte offset and the detail
// quotes an excerpt around it; offset < 0 names no offset.
func (s *Stream) Protocol(offset int, line []byte, reason string) error {
	msg := s.Format + " protocol violation at line " + strconv.Itoa(s.line)
	if line != nil && offset >= 0 {
		msg += ", byte offset " + strconv.Itoa(offset)
	}
	e := &failure.Error{Kind: failure.Protocol, Message: msg + ": " + reason}
	if line != nil {
		e.Detail = "excerpt: " + excerpt(line, max(offset, 0))
	}
	return s.Fail(e)
}

// Unknown is the event of a line passed on whole: a type no decoder
// knows, or a duplicate.
func Unknown(typ, subtype string, line []byte) event.Event {
	return event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: typ, Subtype: subtype, Raw: bytes.Clone(line)}}
}

// excerptWidth bounds the excerpt of a bad line.
const excerptWidth = 80

// excerpt quotes at most excerptWidth bytes of line around offset.
func excerpt(line []byte, offset int) string {
	start := max(0, min(offset, len(line))-excerptWidth/2)
	end := min(len(line), start+excerptWidth)
	s := strconv.Quote(strings.ToValidUTF8(string(line[start:end]), "\uFFFD"))
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}
