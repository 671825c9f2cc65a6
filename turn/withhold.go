package turn

import (
	"bytes"
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
	whole  string              // the folded prompt, when shorter than a window
	window map[string]struct{} // its windows of promptWindow runes, else
}

// newWithhold returns the withhold of prompt.
func newWithhold(prompt string) withhold {
	folded := fold([]byte(prompt))
	if len(folded) == 0 {
		return withhold{}
	}
	starts := runeStarts(folded)
	if len(starts)-1 < promptWindow {
		return withhold{whole: string(folded)}
	}
	w := withhold{window: make(map[string]struct{}, len(starts)-promptWindow)}
	for i := 0; i+promptWindow < len(starts); i++ {
		w.window[string(folded[starts[i]:starts[i+promptWindow]])] = struct{}{}
	}
	return w
}

// holds reports whether text may hold the prompt's text: as it is, or
// once, twice or three times unescaped (the prompt is the user's text,
// never unescaped: its backslashes are its own).
func (w withhold) holds(text []byte) bool {
	if w.whole == "" && w.window == nil {
		return false
	}
	for range maxUnescape + 1 {
		if w.holdsFolded(fold(text)) {
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

func (w withhold) holdsFolded(folded []byte) bool {
	if w.whole != "" {
		return bytes.Contains(folded, []byte(w.whole))
	}
	starts := runeStarts(folded)
	for i := 0; i+promptWindow < len(starts); i++ {
		if _, ok := w.window[string(folded[starts[i]:starts[i+promptWindow]])]; ok {
			return true
		}
	}
	return false
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

// fold lowers text's letters' case and drops all but letters and digits.
func fold(text []byte) []byte {
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		i += n
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = utf8.AppendRune(out, foldRune(r))
		}
	}
	return out
}

// unescape decodes the escapes JSON and Go quoting write: \uXXXX (a
// surrogate pair as one rune), \UXXXXXXXX, \xXX, \ooo and the one-letter
// ones; any other backslash stays. changed reports whether it decoded
// any.
func unescape(text []byte) (out []byte, changed bool) {
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

// runeStarts returns the byte offset of each rune of s, and len(s) last.
func runeStarts(s []byte) []int {
	starts := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		starts = append(starts, i)
		_, n := utf8.DecodeRune(s[i:])
		i += n
	}
	return append(starts, len(s))
}

// foldRune is the smallest rune of r's case-folding orbit: every case of
// a letter folds to one rune (K, k and the Kelvin sign; S, s and ſ).
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}
