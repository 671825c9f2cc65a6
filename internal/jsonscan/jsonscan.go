// Package jsonscan reads one JSON text held in memory in one pass,
// without allocating: the members of its objects as raw names, its values
// as views of the text. It is the first way the agents' decoders read a
// line of their streams (one line per event, hundreds of thousands a
// turn); encoding/json/jsontext stays the second way, for every line this
// one declines.
//
// A Scanner accepts exactly the texts a jsontext.Decoder accepts with
// jsontext.AllowInvalidUTF8 and jsontext.AllowDuplicateNames (what Node's
// JSON.parse and serde_json read), but for the ones it declines: a member
// name with an escape, and nesting deeper than jsontext allows. A text it
// accepts, it reads as that decoder would; a text it does not, it never
// half-accepts: once anything is wrong the Scanner is failed, every later
// read returns nothing, and End reports false, so the caller throws away
// what it read and takes the second way. FuzzScanner holds it to
// jsontext.
//
// Why not jsontext.Decoder itself: its state machine, per-token kinds and
// name bookkeeping cost more per member than the agents' whole decoding
// of a line may (docs/contract.md "Agents", the decoders' figures), and
// its values cannot be read in place without it.
package jsonscan

import (
	"bytes"
	"encoding/json/jsontext"
	"unicode/utf8"
)

// maxDepth is jsontext's limit on nesting: deeper texts are declined.
const maxDepth = 10000

// Scanner reads one JSON text. The zero Scanner holds an empty text; Reset
// gives it another. A Scanner is not safe for concurrent use.
type Scanner struct {
	b      []byte
	i      int
	failed bool
	// spaced reports whitespace skipped since the last Reset.
	spaced bool
	// read reports the text's value begun.
	read bool
	// base is the depth the text's value is taken to be at (Compact).
	base int
	// open is a stack of the containers being read ('{' or '[').
	open []frame
	// skip is the stack of containers being skipped by a value read.
	skip []byte
	// text holds the last string Str decoded.
	text []byte
}

// frame is a container being read: whether a member or element was begun
// in it (more), and whether its value is to be read next (want).
type frame struct {
	kind       byte
	more, want bool
}

// Reset makes s read b from its start. s keeps b until the next Reset:
// the names and values it returns are views of b.
func (s *Scanner) Reset(b []byte) {
	s.b, s.i, s.failed, s.spaced, s.read, s.base = b, 0, false, false, false, 0
	s.open = s.open[:0]
}

// take reports whether a value may be read now, and marks it read: the
// text's one value, the value after a Member, or the element after an
// Element.
func (s *Scanner) take() bool {
	if len(s.open) == 0 {
		if s.read {
			return false
		}
		s.read = true
		return true
	}
	f := &s.open[len(s.open)-1]
	if !f.want {
		return false
	}
	f.want = false
	return true
}

// Failed reports whether s has met something it does not accept.
func (s *Scanner) Failed() bool { return s.failed }

// fail fails s and returns false.
func (s *Scanner) fail() bool {
	s.failed = true
	return false
}

// space skips JSON whitespace.
func (s *Scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
			s.spaced = true
		default:
			return
		}
	}
}

// Peek returns the kind of the next value as jsontext.Kind names it ('n',
// 'f', 't', '"', '0', '{', '['), or 0 when there is none: the end of the
// text, the end of the container being read, something that begins no
// value, or a failed Scanner.
func (s *Scanner) Peek() jsontext.Kind {
	if s.failed {
		return 0
	}
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	switch c := s.b[s.i]; c {
	case 'n', 'f', 't', '"', '{', '[':
		return jsontext.Kind(c)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return '0'
	}
	return 0
}

// Object reads the '{' that begins an object; Member then reads its
// members. False (failing s) when the next value is no object.
func (s *Scanner) Object() bool { return s.begin('{') }

// Array reads the '[' that begins an array; Element then reads its
// elements. False (failing s) when the next value is no array.
func (s *Scanner) Array() bool { return s.begin('[') }

func (s *Scanner) begin(kind byte) bool {
	if s.Peek() != jsontext.Kind(kind) || s.base+len(s.open) >= maxDepth || !s.take() {
		return s.fail()
	}
	s.i++
	s.open = append(s.open, frame{kind: kind})
	return true
}

// next reads what comes before the next member or element of the
// container on top, kind: its closing byte (false, the container ended)
// or, after its first, a comma. It fails s on anything else, and when the
// value of the member or element before was not read.
func (s *Scanner) next(kind byte) bool {
	if s.failed || len(s.open) == 0 || s.open[len(s.open)-1].kind != kind || s.open[len(s.open)-1].want {
		return s.fail()
	}
	f := &s.open[len(s.open)-1]
	s.space()
	if s.i < len(s.b) && s.b[s.i] == kind+2 { // '}' is '{'+2, ']' is '['+2
		s.i++
		s.open = s.open[:len(s.open)-1]
		return false
	}
	if f.more {
		if s.i >= len(s.b) || s.b[s.i] != ',' {
			return s.fail()
		}
		s.i++
		s.space()
	}
	f.more, f.want = true, true
	return true
}

// Member reads the name of the next member of the object Object began
// (without its quotes), leaving its value to be read next: one value must
// be read (or skipped) before the next Member. At the object's end it
// reads the '}' and returns false, as it does when s fails (a name with
// an escape included).
func (s *Scanner) Member() ([]byte, bool) {
	if !s.next('{') {
		return nil, false
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, s.fail()
	}
	start := s.i + 1
	if escaped, ok := s.str(); !ok || escaped {
		return nil, s.fail()
	}
	name := s.b[start : s.i-1 : s.i-1]
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return nil, s.fail()
	}
	s.i++
	return name, true
}

// Element reports whether the array Array began has another element, to
// be read next; at its end it reads the ']' and returns false, as it does
// when s fails.
func (s *Scanner) Element() bool { return s.next('[') }

// Value reads the next value whole and returns it (a view of the text,
// without surrounding whitespace). Nil (failing s) when it is not a valid
// value.
func (s *Scanner) Value() jsontext.Value {
	if s.Peek() == 0 || !s.take() {
		s.fail()
		return nil
	}
	start := s.i
	if !s.value() {
		s.fail()
		return nil
	}
	return s.b[start:s.i:s.i]
}

// Compact reports whether v is one valid JSON value (as Scanner accepts
// it) without whitespace outside its strings: what a jsontext.Encoder
// without indentation writes for it, as far as whitespace goes, when it
// is written depth containers deep (the limit on nesting counts them). It
// resets s.
func (s *Scanner) Compact(v []byte, depth int) bool {
	s.Reset(v)
	s.base = depth
	return s.Value() != nil && s.End() && !s.spaced
}

// Str reads the next value, a string or null, and returns its text as
// Text reads it: a view of the text or of a buffer s reuses, valid until
// the next read; nil for null. False, failing s, for another kind.
func (s *Scanner) Str() ([]byte, bool) {
	switch s.Peek() {
	case 'n':
		return nil, s.Skip()
	case '"':
		if v := s.Value(); v != nil {
			return Text(v, &s.text), true
		}
		return nil, false
	}
	return nil, s.fail()
}

// String reads the next value, a string or null (""), into *dst: a new
// string, or with words the one of them it equals, without allocating.
// False, failing s, for another kind.
func (s *Scanner) String(dst *string, words ...string) bool {
	t, ok := s.Str()
	*dst = word(t, words)
	return ok
}

// Bool reads the next value, a boolean or null (false), into *dst. False,
// failing s, for another kind.
func (s *Scanner) Bool(dst *bool) bool {
	switch s.Peek() {
	case 'n', 'f':
		*dst = false
		return s.Skip()
	case 't':
		*dst = true
		return s.Skip()
	}
	return s.fail()
}

// Int reads the next value, a number or null (present false), as
// json.Unmarshal reads an int64 (ParseInt64). False, failing s, for
// another kind or a number that is no int64.
func (s *Scanner) Int() (n int64, present, ok bool) {
	switch s.Peek() {
	case 'n':
		return 0, false, s.Skip()
	case '0':
		if n, ok := ParseInt64(s.Value()); ok {
			return n, true, true
		}
	}
	return 0, false, s.fail()
}

// Skip reads the next value, reporting whether it is valid.
func (s *Scanner) Skip() bool { return s.Value() != nil }

// End reports whether the whole text was read and accepted: s did not
// fail, its value was read, every container it began has ended, and only
// whitespace follows.
func (s *Scanner) End() bool {
	if s.failed || !s.read || len(s.open) > 0 {
		return false
	}
	s.space()
	return s.i == len(s.b)
}

// value reads the value at s.i (not whitespace), checking every value in
// it.
func (s *Scanner) value() bool {
	stack := s.skip[:0]
	defer func() { s.skip = stack[:0] }()
	for {
		if s.i >= len(s.b) {
			return false
		}
		switch c := s.b[s.i]; c {
		case '{', '[':
			s.i++
			if s.base+len(s.open)+len(stack) >= maxDepth {
				return false
			}
			stack = append(stack, c)
			s.space()
			if s.i < len(s.b) && s.b[s.i] == c+2 {
				s.i++
				stack = stack[:len(stack)-1]
				break // an empty container: a value ended
			}
			if c == '{' && !s.name() {
				return false
			}
			continue // at its first value
		case '"':
			if _, ok := s.str(); !ok {
				return false
			}
		case 't':
			if !s.literal("true") {
				return false
			}
		case 'f':
			if !s.literal("false") {
				return false
			}
		case 'n':
			if !s.literal("null") {
				return false
			}
		default:
			if !s.number() {
				return false
			}
		}
		// A value ended: close the containers it ends, then go on at the
		// next value after a comma.
		for {
			if len(stack) == 0 {
				return true
			}
			s.space()
			if s.i >= len(s.b) {
				return false
			}
			top := stack[len(stack)-1]
			if s.b[s.i] == ',' {
				s.i++
				s.space()
				if top == '{' && !s.name() {
					return false
				}
				break
			}
			if s.b[s.i] != top+2 {
				return false
			}
			s.i++
			stack = stack[:len(stack)-1]
		}
	}
}

// name reads a member name inside a value read whole (any escapes), its
// colon, and the whitespace to its value.
func (s *Scanner) name() bool {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	if _, ok := s.str(); !ok {
		return false
	}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return false
	}
	s.i++
	s.space()
	return true
}

// literal reads the literal lit.
func (s *Scanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

// plain marks the bytes a string holds as they are: printable ASCII but
// '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads a string (s.b[s.i] is its '"'); escaped reports a backslash in
// it. Bytes of invalid UTF-8 are accepted (AllowInvalidUTF8), as are
// escapes of lone surrogates.
func (s *Scanner) str() (escaped, ok bool) {
	b := s.b
	i := s.i + 1
	for i < len(b) {
		c := b[i]
		if plain[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			s.i = i + 1
			return escaped, true
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return escaped, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !hex4(b[i+2:i+6]) {
					return escaped, false
				}
				i += 6
			default:
				return escaped, false
			}
		case c < 0x20:
			return escaped, false
		default: // a byte of a multi-byte sequence, or invalid UTF-8
			i++
		}
	}
	return escaped, false
}

func hex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	s.i = i
	return true
}

// digits returns the index after the digits from i.
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// Text returns what the JSON string v (a string value as Value returns it,
// quotes included) holds, as jsontext reads it with AllowInvalidUTF8:
// escapes decoded, bytes of invalid UTF-8 and escaped lone surrogates read
// as U+FFFD. It is a view of v when v holds no escape and is valid UTF-8,
// else the decoding appended to (*buf)[:0] (buf keeps its capacity for the
// next call).
func Text(v jsontext.Value, buf *[]byte) []byte {
	if len(v) < 2 {
		return nil
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	// The error reports invalid UTF-8, already replaced.
	*buf, _ = jsontext.AppendUnquote((*buf)[:0], v)
	return *buf
}

// ParseInt64 parses the JSON number v as json.Unmarshal into an int64
// does: an integer in range, -0 read as 0; false for any other (a
// fraction, an exponent, out of range).
func ParseInt64(v []byte) (int64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 19 || v[0] == '0' && len(v) > 1 {
		return 0, false
	}
	var n uint64 // 19 digits do not overflow it
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = 10*n + uint64(c-'0')
	}
	switch {
	case neg && n > 1<<63, !neg && n > 1<<63-1:
		return 0, false
	case neg:
		return int64(-n), true
	}
	return int64(n), true
}

// Seen is the set of an object's members a reader has read, each by its
// number (below 64). The agents' readers leave an object with a member
// given twice to their walk, which keeps its last value.
type Seen uint64

// First records member n and reports whether it is its first time.
func (s *Seen) First(n uint) bool {
	if *s&(1<<n) != 0 {
		return false
	}
	*s |= 1 << n
	return true
}

// word returns the string text holds: the one of words it equals, without
// allocating (a stream says its event and block types a hundred thousand
// times), else a new string.
func word(text []byte, words []string) string {
	for _, w := range words {
		if string(text) == w {
			return w
		}
	}
	return string(text)
}
