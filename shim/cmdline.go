package shim

import "strings"

// appendEscapeArg writes s quoted so that CommandLineToArgvW and the
// Microsoft C runtime read it back as exactly s: it is wrapped in '"' when
// it is empty or holds a space or tab, a '"' becomes '\"', and backslashes
// that end up before a '"' are doubled. Strings with no space, tab, '"' or
// '\' are written unchanged. (It produces the same text as
// golang.org/x/sys/windows.EscapeArg, which only builds on Windows.) It is
// for programs that parse their command line that way; cmd.exe does not
// (see batchCommandLine).
func appendEscapeArg(b *strings.Builder, s string) {
	if s == "" {
		b.WriteString(`""`)
		return
	}
	quote := strings.ContainsAny(s, " \t")
	if !quote && !strings.ContainsAny(s, "\"\\") {
		b.WriteString(s)
		return
	}
	if quote {
		b.WriteByte('"')
	}
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			slashes++
		case '"':
			// The backslashes before a quote escape each other, then one
			// more escapes the quote itself.
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(c)
	}
	if quote {
		// Backslashes before the closing quote would escape it.
		b.WriteString(strings.Repeat(`\`, slashes))
		b.WriteByte('"')
	}
}

// plainASCII reports whether every byte of s is an ASCII letter, an ASCII
// digit or one of extra.
func plainASCII(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// composeCommandLine joins argv into one Windows command line that
// CommandLineToArgvW and the C runtime split back into argv. argv[0], a
// program path, follows their program-name rule instead: it is quoted when
// it is empty or holds a space or control character and is never escaped,
// since a Windows file name cannot hold '"' (Build refuses such a path
// before it gets here).
func composeCommandLine(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	var b strings.Builder
	if p := argv[0]; p == "" || strings.IndexFunc(p, func(r rune) bool { return r <= ' ' }) >= 0 {
		b.WriteString(`"` + p + `"`)
	} else {
		b.WriteString(p)
	}
	for _, a := range argv[1:] {
		b.WriteByte(' ')
		appendEscapeArg(&b, a)
	}
	return b.String()
}
