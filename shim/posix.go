package shim

import "strings"

// shellQuote renders argv as one POSIX sh command line for people to read
// or paste: arguments made only of letters, digits and @%+=:,./_- stay
// bare; others are single-quoted, an embedded single quote being closed,
// backslash-escaped and reopened. It is never executed by cursorkit.
func shellQuote(argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case a == "":
			quoted[i] = "''"
		case plainASCII(a, "@%+=:,./_-"):
			quoted[i] = a
		default:
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}
