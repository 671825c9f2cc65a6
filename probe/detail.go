package probe

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDetailRunes bounds one candidate's failure detail.
const MaxDetailRunes = 180

// secretAssignment matches NAME=value pairs (environment-style upper-case
// names, and Windows' Path) whose name suggests a search path or a credential; a child that prints its environment must not leak
// it through a diagnostic.
var secretAssignment = regexp.MustCompile(`\b([A-Z0-9_]*(?:PATH|TOKEN|KEY|SECRET|PASSWORD|PASSWD|AUTH|COOKIE|CREDENTIAL)[A-Z0-9_]*|(?i:path))=\S*`)

// BoundDetail turns arbitrary text (a child's stderr tail, an error) into a
// one-line diagnostic: ANSI escapes dropped, control characters and runs of
// whitespace collapsed to one space, NAME=value pairs of path- or
// secret-like names redacted, and at most MaxDetailRunes runes, ending in
// "…" when cut.
func BoundDetail(s string) string {
	s = stripANSI(s)
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
	out := secretAssignment.ReplaceAllString(b.String(), "$1=<redacted>")
	if utf8.RuneCountInString(out) <= MaxDetailRunes {
		return out
	}
	runes := []rune(out)
	return strings.TrimRight(string(runes[:MaxDetailRunes-1]), " ") + "…"
}

// JoinDetails bounds each detail with BoundDetail, drops empty ones and
// joins the rest with "; ".
func JoinDetails(details ...string) string {
	parts := make([]string, 0, len(details))
	for _, d := range details {
		if d = BoundDetail(d); d != "" {
			parts = append(parts, d)
		}
	}
	return strings.Join(parts, "; ")
}

// ansiEscape matches CSI sequences (colours, cursor moves, line clears), OSC
// sequences ended by BEL or ST, and the remaining two-byte escapes.
var ansiEscape = regexp.MustCompile("\x1b(?:\\[[0-9:;<=>?]*[ -/]*[@-~]|\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|[@-Z\\\\-_])|\u009b[0-9:;<=>?]*[ -/]*[@-~]")

// stripANSI removes terminal escape sequences from s.
func stripANSI(s string) string {
	if !strings.ContainsAny(s, "\x1b\u009b") {
		return s
	}
	return ansiEscape.ReplaceAllString(s, "")
}

func itoa(n int) string { return strconv.Itoa(n) }
