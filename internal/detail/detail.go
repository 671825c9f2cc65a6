// Package detail turns text a child printed, or an error, into a bounded
// one-line diagnostic that never carries secrets, PATH or escape sequences.
package detail

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// MaxRunes bounds one diagnostic.
const MaxRunes = 180

// secretAssignment matches NAME=value pairs (environment-style upper-case
// names, and Windows' Path) whose name suggests a search path or a credential; a child that prints its environment must not leak
// it through a diagnostic.
var secretAssignment = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b([A-Z0-9_]*(?:PATH|TOKEN|KEY|SECRET|PASSWORD|PASSWD|AUTH|COOKIE|CREDENTIAL)[A-Z0-9_]*|(?i:path))=\S*`)
})

// Bound turns arbitrary text (a child's stderr tail, an error) into a
// one-line diagnostic: ANSI escapes dropped, control characters and runs of
// whitespace collapsed to one space, NAME=value pairs of path- or
// secret-like names redacted, and at most MaxRunes runes, ending in
// "…" when cut.
func Bound(s string) string {
	s = StripANSI(s)
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) || r == '\uFEFF' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	out := secretAssignment().ReplaceAllString(b.String(), "$1=<redacted>")
	if utf8.RuneCountInString(out) <= MaxRunes {
		return out
	}
	runes := []rune(out)
	return strings.TrimRight(string(runes[:MaxRunes-1]), " ") + "…"
}

// Cut returns s when it is at most n bytes long, and otherwise its
// longest prefix of at most n bytes that ends on a rune boundary followed
// by "…" (the result may then be up to len("…") bytes over n). Unlike
// Bound it keeps the text as it is: for messages already clean.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// CutStart returns s when it is at most n bytes long, and otherwise "…"
// followed by its longest suffix of at most n bytes that starts on a rune
// boundary: Cut's mirror, for the end of a text (a stderr tail).
func CutStart(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - max(n, 0)
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return "…" + s[cut:]
}

// Join bounds each detail with Bound, drops empty ones and
// joins the rest with "; ".
func Join(details ...string) string {
	parts := make([]string, 0, len(details))
	for _, d := range details {
		if d = Bound(d); d != "" {
			parts = append(parts, d)
		}
	}
	return strings.Join(parts, "; ")
}

// StripANSI removes terminal escape sequences from s: CSI sequences
// (colours, cursor moves, line clears; ESC [ or the C1 byte U+009B),
// OSC sequences ended by BEL or ST, and the other ESC sequences (two-byte
// escapes, charset designations). A sequence cut off at the end of s is
// dropped.
func StripANSI(s string) string {
	if !strings.ContainsAny(s, "\x1b\u009b") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		switch {
		case s[i] == 0x1b:
			i = skipEscape(s, i+1)
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9b:
			i = skipCSI(s, i+2)
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// skipEscape returns the index after the escape sequence whose ESC ended
// just before i.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[':
		return skipCSI(s, i+1)
	case c == ']':
		for j := i + 1; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	case c >= 0x30 && c <= 0x7e:
		return i + 1
	case c >= 0x20 && c <= 0x2f:
		// Intermediate bytes, then one final byte: ESC ( B and the like.
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
			i++
		}
		return i
	}
	return i // a lone ESC: drop it, keep what follows
}

// skipCSI returns the index after a CSI sequence's parameter, intermediate
// and final bytes starting at i. A malformed sequence ends at the first
// byte that does not fit, which is kept.
func skipCSI(s string, i int) int {
	for i < len(s) && s[i] >= 0x30 && s[i] <= 0x3f {
		i++
	}
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
		i++
	}
	return i
}
