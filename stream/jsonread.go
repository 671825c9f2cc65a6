package stream

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds a small validating JSON reader. Decoding the stream with
// encoding/json into structs costs several times more than reading a pipe,
// and map[string]any costs more still; the reader below scans each line once,
// records where the fields it cares about are, validates everything else as
// it skips it, and unescapes only the strings an event needs. Its verdicts
// match encoding/json's: a line is accepted exactly when json.Valid accepts
// it (FuzzReaderMatchesEncodingJSON holds it to that), strings are unescaped
// the same way (invalid UTF-8 and lone surrogates become U+FFFD), and for a
// key that appears twice the last value wins, as with a map.

// maxDepth is encoding/json's nesting limit: 10000 open objects or arrays are
// accepted, one more is an error.
const maxDepth = 10000

// syntaxError is where and why a line is not JSON.
type syntaxError struct {
	offset int
	msg    string
}

func (e *syntaxError) Error() string { return e.msg + " at byte offset " + strconv.Itoa(e.offset) }

// reader reads one JSON text held in b.
type reader struct {
	b     []byte
	i     int
	depth int
	// trusted is set for walks over a span already validated: strings are
	// then skipped by searching for their closing quote, not scanned.
	trusted bool
}

// strSpecial reports whether c ends a run of plain string content: the
// closing quote, a backslash, or a control character JSON forbids raw.
func strSpecial(c byte) bool { return c < 0x20 || c == '"' || c == '\\' }

// Word-at-a-time scanning: strings are most of every line, so they are
// scanned eight bytes per step. A flagged word is rescanned bytewise.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// anyLess reports (nonzero) whether some byte of w is below n (n <= 0x80).
func anyLess(w uint64, n byte) uint64 { return (w - lsb*uint64(n)) &^ w & msb }

// anyByte reports (nonzero) whether some byte of w equals c.
func anyByte(w uint64, c byte) uint64 {
	x := w ^ (lsb * uint64(c))
	return (x - lsb) &^ x & msb
}

// plainPrefix returns how many leading bytes of b hold no strSpecial byte,
// rounded down to whole words; the caller finishes bytewise.
func plainPrefix(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if anyLess(w, 0x20)|anyByte(w, '"')|anyByte(w, '\\') != 0 {
			break
		}
	}
	return i
}

func (r *reader) fail(msg string) error { return &syntaxError{offset: r.i, msg: msg} }

func (r *reader) failChar(context string) error {
	if r.i >= len(r.b) {
		return r.fail("unexpected end of JSON input " + context)
	}
	return r.fail("invalid character " + quoteChar(r.b[r.i]) + " " + context)
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	if c >= utf8.RuneSelf {
		s = `"\x` + strconv.FormatUint(uint64(c), 16) + `"`
	}
	return "'" + s[1:len(s)-1] + "'"
}

func (r *reader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// end checks that only whitespace follows the value just read.
func (r *reader) end() error {
	r.ws()
	if r.i != len(r.b) {
		return r.failChar("after top-level value")
	}
	return nil
}

// span is a raw JSON value inside the line: b[start:end].
type span struct{ start, end int }

func (s span) present() bool { return s.end > s.start }

// str reads a string at r.i (which must be '"') and returns the span of its
// raw content, without the quotes, and whether that content holds an escape.
func (r *reader) str() (raw span, escaped bool, err error) { return r.strTo(nil) }

// strValue reads a string like str and returns its value too, unescaped in
// the same pass, with encoding/json's replacements.
func (r *reader) strValue() (string, error) {
	var out strings.Builder
	if _, _, err := r.strTo(&out); err != nil {
		return "", err
	}
	// Escapes only ever produce valid UTF-8, so invalid bytes here came
	// from the line itself.
	if s := out.String(); !utf8.ValidString(s) {
		return replaceInvalidUTF8(s), nil
	}
	return out.String(), nil
}

// strTo is str, writing the unescaped value to out when out is not nil.
func (r *reader) strTo(out *strings.Builder) (raw span, escaped bool, err error) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return span{}, false, r.failChar("looking for beginning of string")
	}
	r.i++
	start := r.i
	b := r.b
	if r.trusted && out == nil {
		return r.trustedStr(start)
	}
	if out == nil {
		// Most strings hold no escape: the first special byte is then
		// the closing quote. Found a word at a time (the lowest flagged
		// byte of a word is exact).
		i := start
		for ; i+8 <= len(b); i += 8 {
			w := binary.LittleEndian.Uint64(b[i : i+8])
			if m := anyLess(w, 0x20) | anyByte(w, '"') | anyByte(w, '\\'); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
		}
		for i < len(b) && !strSpecial(b[i]) {
			i++
		}
		if i < len(b) && b[i] == '"' {
			r.i = i + 1
			return span{start, i}, false, nil
		}
	}
	if out != nil {
		// Size the value once: finding the closing quote costs far less
		// than growing the buffer (and sizing by the rest of the line would
		// be quadratic for a line of many small texts).
		t := reader{b: b}
		if s, _, err := t.trustedStr(start); err == nil {
			out.Grow(s.end - s.start)
		}
	}
	run := start // start of the plain bytes not yet written to out
	for {
		i := r.i
		i += plainPrefix(b[i:])
		for i < len(b) && !strSpecial(b[i]) {
			i++
		}
		r.i = i
		if i >= len(b) {
			return span{}, false, r.fail("unexpected end of JSON input in string literal")
		}
		switch c := b[i]; {
		case c == '"':
			if out != nil {
				out.Write(b[run:i])
			}
			r.i++
			return span{start, i}, escaped, nil
		case c == '\\':
			escaped = true
			if out != nil {
				out.Write(b[run:i])
			}
			if err := r.escape(out); err != nil {
				return span{}, false, err
			}
			run = r.i
		default:
			return span{}, false, r.failChar("in string literal")
		}
	}
}

// escape reads the escape sequence at r.i (a backslash), writing its value
// to out when out is not nil. A \u escape of a UTF-16 surrogate takes the
// following \u escape with it when the two make a pair; otherwise it stands
// for U+FFFD, as in encoding/json.
func (r *reader) escape(out *strings.Builder) error {
	b := r.b
	i := r.i
	if i+1 >= len(b) {
		r.i = i + 1
		return r.fail("unexpected end of JSON input in string escape code")
	}
	c := b[i+1]
	switch c {
	case '"', '\\', '/':
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'u':
		r.i = i + 2
		if err := r.hex4(); err != nil {
			return err
		}
		rr := hex4(b[i+2 : i+6])
		if utf16.IsSurrogate(rr) {
			if r.i+6 <= len(b) && b[r.i] == '\\' && b[r.i+1] == 'u' && allHex(b[r.i+2:r.i+6]) {
				if dec := utf16.DecodeRune(rr, hex4(b[r.i+2:r.i+6])); dec != unicode.ReplacementChar {
					r.i += 6
					rr = dec
				} else {
					rr = unicode.ReplacementChar
				}
			} else {
				rr = unicode.ReplacementChar
			}
		}
		if out != nil {
			out.WriteRune(rr)
		}
		return nil
	default:
		r.i = i + 1
		return r.failChar("in string escape code")
	}
	r.i = i + 2
	if out != nil {
		out.WriteByte(c)
	}
	return nil
}

// hex4 checks the four hexadecimal digits of a \u escape at r.i.
func (r *reader) hex4() error {
	for k := 0; k < 4; k++ {
		if r.i >= len(r.b) {
			return r.fail("unexpected end of JSON input in \\u hexadecimal character escape")
		}
		if !isHex(r.b[r.i]) {
			return r.failChar("in \\u hexadecimal character escape")
		}
		r.i++
	}
	return nil
}

func allHex(h []byte) bool {
	for _, c := range h {
		if !isHex(c) {
			return false
		}
	}
	return true
}

// replaceInvalidUTF8 replaces each byte of s that does not start a valid
// UTF-8 sequence with U+FFFD, the way encoding/json decodes strings.
func replaceInvalidUTF8(s string) string {
	var out strings.Builder
	out.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			out.WriteRune(unicode.ReplacementChar)
		} else {
			out.WriteString(s[i : i+size])
		}
		i += size
	}
	return out.String()
}

// trustedStr finds the end of a string known to be valid: the first quote
// not preceded by an odd number of backslashes.
func (r *reader) trustedStr(start int) (span, bool, error) {
	b := r.b
	for i := start; ; {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return span{}, false, r.fail("unexpected end of JSON input in string literal")
		}
		q += i
		n := 0
		for k := q - 1; k >= start && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			r.i = q + 1
			// Keys are short; for long values the hint may be conservative.
			escaped := q-start > 64 || bytes.IndexByte(b[start:q], '\\') >= 0
			return span{start, q}, escaped, nil
		}
		i = q + 1
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// value skips one value of any kind at r.i, validating it, and returns its span.
func (r *reader) value() (span, error) {
	r.ws()
	start := r.i
	if r.i >= len(r.b) {
		return span{}, r.failChar("looking for beginning of value")
	}
	var err error
	switch c := r.b[r.i]; {
	case c == '"':
		_, _, err = r.str()
	case c == '{':
		err = r.object()
	case c == '[':
		err = r.array()
	case c == '-' || '0' <= c && c <= '9':
		err = r.number()
	case c == 't':
		err = r.literal("true")
	case c == 'f':
		err = r.literal("false")
	case c == 'n':
		err = r.literal("null")
	default:
		err = r.failChar("looking for beginning of value")
	}
	if err != nil {
		return span{}, err
	}
	return span{start, r.i}, nil
}

func (r *reader) literal(word string) error {
	for k := 0; k < len(word); k++ {
		if r.i >= len(r.b) {
			return r.fail("unexpected end of JSON input in literal " + word)
		}
		if r.b[r.i] != word[k] {
			return r.failChar("in literal " + word + " (expecting " + quoteChar(word[k]) + ")")
		}
		r.i++
	}
	return nil
}

func (r *reader) digits() int {
	n := 0
	for r.i < len(r.b) && '0' <= r.b[r.i] && r.b[r.i] <= '9' {
		r.i++
		n++
	}
	return n
}

func (r *reader) number() error {
	if r.b[r.i] == '-' {
		r.i++
	}
	if r.i >= len(r.b) {
		return r.fail("unexpected end of JSON input in numeric literal")
	}
	switch c := r.b[r.i]; {
	case c == '0':
		r.i++
	case '1' <= c && c <= '9':
		r.digits()
	default:
		return r.failChar("in numeric literal")
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if r.digits() == 0 {
			return r.failChar("after decimal point in numeric literal")
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if r.digits() == 0 {
			return r.failChar("in exponent of numeric literal")
		}
	}
	return nil
}

func (r *reader) push() error {
	r.depth++
	if r.depth > maxDepth {
		return r.fail("exceeded max depth")
	}
	return nil
}

// enter consumes the '{' or '[' (open) that starts an object or array.
func (r *reader) enter(open byte) error {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != open {
		if open == '{' {
			return r.failChar("looking for beginning of object")
		}
		return r.failChar("looking for beginning of array")
	}
	if err := r.push(); err != nil {
		return err
	}
	r.i++
	return nil
}

// more reports whether the object or array entered last has another
// member, consuming the comma before it or the closing byte after the last.
// first must be true before the first call; more clears it.
func (r *reader) more(close byte, first *bool) (bool, error) {
	r.ws()
	if *first {
		*first = false
		if r.i < len(r.b) && r.b[r.i] == close {
			r.i++
			r.depth--
			return false, nil
		}
		return true, nil
	}
	if r.i < len(r.b) {
		switch r.b[r.i] {
		case ',':
			r.i++
			return true, nil
		case close:
			r.i++
			r.depth--
			return false, nil
		}
	}
	if close == '}' {
		return false, r.failChar("after object key:value pair")
	}
	return false, r.failChar("after array element")
}

// key reads an object member's key and the colon after it, returning the
// span of the raw key content.
func (r *reader) key() (span, bool, error) {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return span{}, false, r.failChar("looking for beginning of object key string")
	}
	key, escaped, err := r.str()
	if err != nil {
		return span{}, false, err
	}
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != ':' {
		return span{}, false, r.failChar("after object key")
	}
	r.i++
	return key, escaped, nil
}

// object skips an object at r.i, validating it.
func (r *reader) object() error {
	return r.members(func(span, bool) error {
		_, err := r.value()
		return err
	})
}

// members reads the object at r.i, validating it, and calls member for
// each member with its key (escaped reports a key holding escapes); member
// must read the value, leaving r after it.
func (r *reader) members(member func(key span, escaped bool) error) error {
	if err := r.enter('{'); err != nil {
		return err
	}
	return r.membersFrom(true, member)
}

// membersFrom is members for an object whose '{' was read already; first
// is false when members were read before.
func (r *reader) membersFrom(first bool, member func(key span, escaped bool) error) error {
	for {
		more, err := r.more('}', &first)
		if err != nil || !more {
			return err
		}
		key, escaped, err := r.key()
		if err != nil {
			return err
		}
		if err := member(key, escaped); err != nil {
			return err
		}
	}
}

// array skips an array at r.i, validating it.
func (r *reader) array() error {
	if err := r.enter('['); err != nil {
		return err
	}
	for first := true; ; {
		more, err := r.more(']', &first)
		if err != nil || !more {
			return err
		}
		if _, err := r.value(); err != nil {
			return err
		}
	}
}

// keyIs reports whether the raw key content key of b equals name. A key
// written with escapes is unescaped first, so "\u0074ype" is the key
// "type", as it is for encoding/json.
func keyIs(b []byte, key span, escaped bool, name string) bool {
	if !escaped {
		return string(b[key.start:key.end]) == name
	}
	return unescape(b[key.start:key.end], true) == name
}

// unescape returns the string value of raw string content (validated by
// str), with escapes resolved, and invalid UTF-8 and lone surrogates
// replaced by U+FFFD exactly as encoding/json does. escaped says whether raw
// may hold a backslash.
func unescape(raw []byte, escaped bool) string {
	valid := utf8.Valid(raw)
	if !escaped && valid {
		return string(raw)
	}
	s := resolveEscapes(raw)
	if !valid {
		// Escapes produce ASCII or whole UTF-8 sequences, never a
		// continuation byte, so replacing after resolving them gives what
		// encoding/json's one pass gives.
		s = replaceInvalidUTF8(s)
	}
	return s
}

// resolveEscapes returns raw with its escape sequences resolved.
func resolveEscapes(raw []byte) string {
	var out strings.Builder
	out.Grow(len(raw))
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			out.Write(raw[i:])
			break
		}
		out.Write(raw[i : i+j])
		r := reader{b: raw, i: i + j}
		_ = r.escape(&out) // validated by str
		i = r.i
	}
	return out.String()
}

// hex4 returns the value of four hexadecimal digits.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// verbatimStr reads the string at r.i (which must be '"') when its value is
// its raw content: no escape, no control character, valid UTF-8, the common
// case for model text. It returns the raw content's span and whether it is
// all ASCII, which also means it needs no escaping on output. ok is false,
// with r.i unchanged, for any other string: the caller then reads it with
// strValue, which handles everything.
//
// This costs one vectorized search for the closing quote, one for a
// backslash, and one word-at-a-time pass over the content, instead of a
// byte-class scan and a copy.
func (r *reader) verbatimStr() (raw span, ascii, ok bool) {
	start := r.i + 1
	q := bytes.IndexByte(r.b[start:], '"')
	if q < 0 {
		return span{}, false, false
	}
	s := r.b[start : start+q]
	if bytes.IndexByte(s, '\\') >= 0 {
		return span{}, false, false
	}
	ctrl, ascii := scanText(s)
	if ctrl || !ascii && !utf8.Valid(s) {
		return span{}, false, false
	}
	r.i = start + q + 1
	return span{start, start + q}, ascii, true
}

// scanText reports whether b holds a control character (below 0x20, which
// JSON forbids raw in a string) and whether it is all ASCII. Printable
// ASCII, the common case, is confirmed four words per step with one test
// for both (a byte below 0x20 or from 0x80 up); anything else is told
// apart by the slower pass.
func scanText(b []byte) (ctrl, ascii bool) {
	var acc uint64
	for p := b; len(p) >= 32; p = p[32:] {
		w0 := binary.LittleEndian.Uint64(p[0:8])
		w1 := binary.LittleEndian.Uint64(p[8:16])
		w2 := binary.LittleEndian.Uint64(p[16:24])
		w3 := binary.LittleEndian.Uint64(p[24:32])
		acc |= (w0 - lsb*0x20) | w0 | (w1 - lsb*0x20) | w1 | (w2 - lsb*0x20) | w2 | (w3 - lsb*0x20) | w3
	}
	if acc&msb != 0 {
		return scanTextSlow(b)
	}
	tail := b[len(b)&^31:]
	for _, c := range tail {
		if c < 0x20 || c >= 0x80 {
			return scanTextSlow(tail)
		}
	}
	return false, true
}

// scanTextSlow is scanText telling control characters from other bytes.
func scanTextSlow(b []byte) (ctrl, ascii bool) {
	var lo, hi uint64 // lo: a byte below 0x20 flagged; hi: any high bit
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b[:8])
		lo |= (w - lsb*0x20) &^ w
		hi |= w
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			lo |= msb
		}
		hi |= uint64(c)
	}
	return lo&msb != 0, hi&msb == 0
}
