package turn

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/failure"
)

// Mode is how much an agent may do in a turn, whatever the agent: each
// backend maps it to its CLI's own flags and to the tools its decoder lets
// the agent use (docs/contract.md, "Agents"). The zero Mode is ModePlan.
type Mode string

const (
	// ModePlan is read-only planning.
	ModePlan Mode = "plan"
	// ModeAsk is read-only questions and answers.
	ModeAsk Mode = "ask"
	// ModeWrite is coding: the tools that change files and run commands
	// are allowed.
	ModeWrite Mode = "write"
)

// ParseMode returns the Mode named s: "plan", "ask", "write" (also spelled
// "coding"), or ModePlan for "". Anything else is a failure.Input error.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "plan":
		return ModePlan, nil
	case "ask":
		return ModeAsk, nil
	case "write", "coding":
		return ModeWrite, nil
	}
	return "", failure.New(failure.Input, "unknown mode %s (want plan, ask or write)", Quote(s, 40))
}

// Resolve returns m with "" as ModePlan, or a failure.Input error for a
// Mode that is none of the three.
func (m Mode) Resolve() (Mode, error) {
	switch m {
	case "":
		return ModePlan, nil
	case ModePlan, ModeAsk, ModeWrite:
		return m, nil
	}
	return "", failure.New(failure.Input, "unknown mode %s", Quote(string(m), 40))
}

// CheckValue refuses a value that is passed to an agent CLI as an option's
// argument (a model id, a session id) but that its option parser could take
// for an option, or that no such id holds: longer than 256 bytes, starting
// with '-', or holding whitespace or control characters. what names the
// value in the failure.Input error, which quotes at most 64 bytes of it.
func CheckValue(what, v string) error {
	if v == "" {
		return failure.New(failure.Input, "%s is empty", what)
	}
	if len(v) > 256 {
		return failure.New(failure.Input, "%s is longer than 256 bytes", what)
	}
	if v[0] == '-' {
		return failure.New(failure.Input, "%s %s starts with '-'", what, Quote(v, 64))
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c == 0x7f {
			return failure.New(failure.Input, "%s %s holds %s at byte %d", what, Quote(v, 64), QuoteByte(c), i)
		}
	}
	return nil
}

// Quote quotes at most max bytes of s for a message, marking a cut with
// "…".
func Quote(s string, max int) string {
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:max]) + "…"
}

// QuoteByte quotes one byte for a message: 'a', '\n', '"\xff"'.
func QuoteByte(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	if c >= utf8.RuneSelf {
		s = `"\x` + strconv.FormatUint(uint64(c), 16) + `"`
	}
	return "'" + s[1:len(s)-1] + "'"
}

// CheckName returns a failure.Input error naming what (a tool name, an
// MCP server key) when name is empty, longer than max bytes, or holds a
// byte that is neither an ASCII letter or digit nor one of extra.
func CheckName(what, name string, max int, extra string) error {
	if name == "" || len(name) > max {
		return failure.New(failure.Input, "%s %s must be 1 to %d characters", what, Quote(name, max), max)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			allowed := "letters"
			for j := range len(extra) {
				allowed += ", " + QuoteByte(extra[j])
			}
			return failure.New(failure.Input, "%s %s holds %s at byte %d; only %s and digits are allowed",
				what, Quote(name, max), QuoteByte(c), i, allowed)
		}
	}
	return nil
}
