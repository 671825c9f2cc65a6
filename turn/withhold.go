package turn

import (
	"bytes"
	"math/bits"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
)

// withheld replaces a text that may hold the prompt's.
const withheld = "(withheld: it may hold the prompt's text)"

// promptWindow is how many letters and digits of the prompt in a row,
// found in a text, mean the text may hold the prompt's: short enough to
// catch a cut or reflowed echo, long enough that ordinary words of an
// agent's message do not.
const promptWindow = 12

// maxUnescape bounds how many times a text is unescaped: a prompt may be
// escaped once per JSON text it was nested in (a tool result holding a
// line that holds the prompt).
const maxUnescape = 3

// withhold decides which texts may hold the prompt's text, however an
// agent escaped or echoed it: a text is folded (letters' case folded,
// all but letters and digits dropped), as it is and with every JSON or Go
// escape decoded up to maxUnescape times over, and holds the prompt when
// one of those holds any promptWindow letters and digits in a row of the
// folded prompt (the whole folded prompt when it is shorter). A prompt
// without letters or digits is never found. The zero withhold finds
// nothing.
//
// Run and Replay withhold with it, for every agent: an error's message
// and detail (a bad line's excerpt, the stderr tail, the agent's own
// error text), a warning's message, the ids and model of an init or
// result event, an unknown event's raw line, an error result's text. The
// model's words, its thinking and its tool calls are the turn itself and
// are passed on as they are.
type withhold struct {
	size    int                 // runes in a window: promptWindow, or the folded prompt's when fewer
	empty   window              // a window of size runes that has read none
	windows map[string]struct{} // the folded prompt's windows
	// filter has the bit of each window's hash (window.bit): a text's
	// window is looked up only when its bit is set, so a text is read
	// once, without building its windows.
	filter    []uint64
	filterLog int // the filter has 1<<filterLog bits
}

// The filter has filterBits bits for each of the prompt's windows, few
// enough set that a text's windows are rarely looked up (one in 64 or
// fewer: a lookup builds the window's text, which costs more than the
// rest of reading its rune), from one word (a short prompt costs a turn
// 64 bytes, not kilobytes) to 8 KiB (a prompt of thousands of words).
const (
	filterBits   = 64
	minFilterLog = 9
	maxFilterLog = 16
)

// newWithhold returns the withhold of prompt.
func newWithhold(prompt string) withhold {
	runes := 0
	for _, r := range prompt {
		if _, ok := fold(r); ok {
			runes++
		}
	}
	if runes == 0 {
		return withhold{}
	}
	size := min(runes, promptWindow)
	log := min(max(bits.Len(uint(runes-size+1)*filterBits-1), minFilterLog), maxFilterLog)
	w := withhold{size: size, empty: newWindow(size), windows: map[string]struct{}{}, filter: make([]uint64, (1<<log)/64), filterLog: log}
	win := w.empty
	for _, r := range prompt {
		if win.push(r) {
			w.windows[string(win.text(nil))] = struct{}{}
			b := win.bit(w.filterLog)
			w.filter[b/64] |= 1 << (b % 64)
		}
	}
	return w
}

// holds reports whether text may hold the prompt's text: as it is, or
// once, twice or three times unescaped (the prompt is the user's text,
// never unescaped: its backslashes are its own).
func (w withhold) holds(text []byte) bool {
	if w.size == 0 {
		return false
	}
	for range maxUnescape + 1 {
		if w.found(text) {
			return true
		}
		decoded, changed := unescape(text)
		if !changed {
			return false
		}
		text = decoded
	}
	return false
}

// found reports whether text, folded, holds a window of the prompt's.
func (w withhold) found(text []byte) bool {
	win := w.empty
	var buf [promptWindow * utf8.UTFMax]byte
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		i += n
		if !win.push(r) {
			continue
		}
		if b := win.bit(w.filterLog); w.filter[b/64]&(1<<(b%64)) == 0 {
			continue
		}
		if _, ok := w.windows[string(win.text(buf[:0]))]; ok {
			return true
		}
	}
	return false
}

// window is the last size runes of a folded text, read a rune at a time,
// and their rolling hash: the runes as the digits of a number in base
// hashBase, modulo 2⁶⁴.
type window struct {
	size, oldest int // runes in a full window; the slot of the oldest
	runes        int // runes read, up to size
	ring         [promptWindow]rune
	hash         uint64
	lead         uint64 // hashBase^size: the oldest rune's weight, once shifted out
}

// hashBase is window's base: odd, so no rune's weight is ever 0.
const hashBase = 0x100000001b3

func newWindow(size int) window {
	w := window{size: size, lead: 1}
	for range size {
		w.lead *= hashBase
	}
	return w
}

// push reads r, which folding keeps or drops, and reports whether the
// window is full (holds size runes) with r its newest.
func (w *window) push(r rune) bool {
	r, ok := fold(r)
	if !ok {
		return false
	}
	w.hash = w.hash*hashBase + uint64(r) - w.lead*uint64(w.ring[w.oldest])
	w.ring[w.oldest] = r
	if w.oldest++; w.oldest == w.size {
		w.oldest = 0
	}
	w.runes = min(w.runes+1, w.size)
	return w.runes == w.size
}

// bit is the window's bit in a withhold's filter of 1<<log bits, from its hash.
func (w *window) bit(log int) uint64 { return (w.hash * 0x9e3779b97f4a7c15) >> (64 - log) }

// text appends the window's runes, oldest first, to buf.
func (w *window) text(buf []byte) []byte {
	for i := range w.size {
		buf = utf8.AppendRune(buf, w.ring[(w.oldest+i)%w.size])
	}
	return buf
}

// holdsString is holds of a string.
func (w withhold) holdsString(text string) bool { return w.holds([]byte(text)) }

// error returns err with what may hold the prompt's text replaced: its
// message and its detail, each withheld alone. Its kind stays.
func (w withhold) error(err error) error {
	fe, ok := err.(*failure.Error)
	if !ok {
		if err == nil || !w.holdsString(err.Error()) {
			return err
		}
		return &failure.Error{Kind: failure.KindOf(err), Message: "the agent's error " + withheld}
	}
	held := func(s string) bool { return w.holdsString(s) }
	if !held(fe.Message) && !held(fe.Detail) {
		return err
	}
	out := *fe
	if held(fe.Message) {
		out.Message = "the agent's error " + withheld
	}
	if held(fe.Detail) {
		out.Detail = withheld
	}
	return &out
}

// event returns e with what may hold the prompt's text withheld: a
// warning's message, an error result's text, a result's and an init
// event's ids and model, an unknown event's raw line (the event then says only its type, and only
// when that type holds nothing of the prompt).
func (w withhold) event(e event.Event) event.Event {
	switch {
	case e.Warning != nil && w.holdsString(e.Warning.Message):
		wc := *e.Warning
		wc.Message = withheld
		e.Warning = &wc
	case e.Unknown != nil && w.holds(e.Unknown.Raw):
		u := event.Unknown{Raw: []byte(`{}`)}
		if !w.holdsString(e.Unknown.Type) && !w.holdsString(e.Unknown.Subtype) {
			u.Type, u.Subtype = e.Unknown.Type, e.Unknown.Subtype
		}
		e.Unknown = &u
	case e.Result != nil:
		r := *e.Result
		for _, f := range []*string{&r.SessionID, &r.Model, &r.RequestID} {
			if w.holdsString(*f) {
				*f = withheld
			}
		}
		if r.IsError && w.holdsString(r.Text) {
			r.Text = withheld
		}
		e.Result = &r
	case e.Init != nil:
		in := *e.Init
		for _, f := range []*string{&in.SessionID, &in.Model, &in.CWD, &in.PermissionMode, &in.APIKeySource} {
			if w.holdsString(*f) {
				*f = withheld
			}
		}
		e.Init = &in
	}
	return e
}

// unescape decodes the escapes JSON and Go quoting write: \uXXXX (a
// surrogate pair as one rune), \UXXXXXXXX, \xXX, \ooo and the one-letter
// ones; any other backslash stays. changed reports whether it decoded
// any.
func unescape(text []byte) (out []byte, changed bool) {
	if bytes.IndexByte(text, '\\') < 0 {
		return text, false
	}
	out = make([]byte, 0, len(text))
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '\\' || i+1 == len(text) {
			out = append(out, c)
			continue
		}
		r, n := escapeAt(text[i+1:])
		if n == 0 {
			out = append(out, c)
			continue
		}
		if s := text[i+1]; s == 'x' || (s >= '0' && s <= '3') {
			out = append(out, byte(r)) // a byte, maybe of a UTF-8 sequence
		} else {
			out = utf8.AppendRune(out, r)
		}
		i += n
		changed = true
	}
	return out, changed
}

// escapeAt reads the escape after a backslash at the start of s: the rune
// and how many bytes of s it took, 0 for none.
func escapeAt(s []byte) (rune, int) {
	switch s[0] {
	case 'u':
		r, ok := hexRune(s[1:], 4)
		if !ok {
			return 0, 0
		}
		if utf16.IsSurrogate(r) && len(s) >= 11 && s[5] == '\\' && s[6] == 'u' {
			if r2, ok := hexRune(s[7:], 4); ok {
				if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					return pair, 11
				}
			}
		}
		return r, 5
	case 'U':
		if r, ok := hexRune(s[1:], 8); ok {
			return r, 9
		}
	case 'x':
		if r, ok := hexRune(s[1:], 2); ok {
			return r, 3
		}
	case 'n', 'r', 't', 'b', 'f', 'v', 'a':
		return ' ', 1
	case '"', '\\', '/', '\'':
		return rune(s[0]), 1
	case '0', '1', '2', '3':
		if len(s) >= 3 {
			if v, err := strconv.ParseUint(string(s[:3]), 8, 8); err == nil {
				return rune(v), 3
			}
		}
	}
	return 0, 0
}

// hexRune reads n hex digits at the start of s.
func hexRune(s []byte, n int) (rune, bool) {
	if len(s) < n {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s[:n]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(v), true
}

// fold is r folded: the smallest rune of its case-folding orbit joined
// with the orbits of its upper and lower case (every case of a letter
// folds to one rune: K, k and the Kelvin sign; S, s and ſ; I, i, ı and
// İ); ok is false for a rune that is neither a letter nor a digit, which
// folding drops. An ASCII rune's fold is worked out here: texts are
// mostly ASCII, and foldRune's Unicode tables cost a text's read more than
// the rest of it (the orbit of an ASCII letter starts with its upper case).
func fold(r rune) (folded rune, ok bool) {
	switch {
	case 'a' <= r && r <= 'z':
		return r - ('a' - 'A'), true
	case 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return r, true
	case r >= 0 && r < utf8.RuneSelf:
		return r, false
	}
	return foldRune(r)
}

// foldRune is fold of any rune. A letter alone in its case-folding orbit
// has its upper and lower case's orbits joined to it, because two letters
// change case outside their orbit (the dotless ı upper-cases to I, the
// dotted İ lower-cases to i) and a prompt echoed in upper or lower case
// must still be found; every other letter's cases are in its orbit
// (TestFoldIsOneRunePerLetter checks every rune against the tables). A
// case mapping of more than one rune (ß upper-cased to SS by JavaScript)
// is not followed: the rest of a long prompt's windows still find it.
func foldRune(r rune) (folded rune, ok bool) {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return r, false
	}
	least, alone := orbitLeast(r)
	if alone {
		upper, _ := orbitLeast(unicode.ToUpper(r))
		lower, _ := orbitLeast(unicode.ToLower(r))
		least = min(least, upper, lower)
	}
	return least, true
}

// orbitLeast is the smallest rune of r's case-folding orbit; alone is
// true when r is the orbit's only rune.
func orbitLeast(r rune) (least rune, alone bool) {
	least, alone = r, true
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least, alone = min(least, f), false
	}
	return least, alone
}
