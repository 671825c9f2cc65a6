package shim

import "strings"

// shellQuote renders argv as one POSIX sh command line for people to read
// or paste: arguments made only of letters, digits and @%+=:,./_- stay
// bare; others are single-quoted, an embedded single quote being closed,
// backslash-escaped and reopened. It is never executed by cursorkit.
func shellQuote(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuoteArg(a))
	}
	return b.String()
}

func shellQuoteArg(a string) string {
	if a == "" {
		return "''"
	}
	bare := true
	for i := 0; bare && i < len(a); i++ {
		c := a[i]
		bare = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("@%+=:,./_-", c) >= 0
	}
	if bare {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
