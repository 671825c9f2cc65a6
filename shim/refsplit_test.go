package shim_test

import (
	"errors"
	"strings"
)

// This file models, independently of the code under test, how a Windows
// command line reaches a program: the C runtime's (and CommandLineToArgvW's)
// splitting, and cmd.exe's handling of /s /c and of a batch file's %*, %1
// and "%~1". The tests use it to parse plans back into argument vectors.

// crtSplit splits a full command line the way the Microsoft C runtime
// (2008 and later) and CommandLineToArgvW do, argv[0] included.
func crtSplit(line string) []string {
	i := 0
	var argv0 strings.Builder
	if strings.HasPrefix(line, `"`) {
		i = 1
		for i < len(line) && line[i] != '"' {
			argv0.WriteByte(line[i])
			i++
		}
		if i < len(line) {
			i++
		}
	} else {
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			argv0.WriteByte(line[i])
			i++
		}
	}
	return append([]string{argv0.String()}, crtSplitArgs(line[i:])...)
}

// crtSplitArgs splits the part of a command line after argv[0].
func crtSplitArgs(s string) []string {
	var args []string
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return args
		}
		var b strings.Builder
		inQuote := false
		for i < len(s) {
			c := s[i]
			if !inQuote && (c == ' ' || c == '\t') {
				break
			}
			if c == '\\' {
				n := 0
				for i < len(s) && s[i] == '\\' {
					n++
					i++
				}
				if i < len(s) && s[i] == '"' {
					b.WriteString(strings.Repeat(`\`, n/2))
					if n%2 == 1 {
						b.WriteByte('"')
						i++
					}
					continue
				}
				b.WriteString(strings.Repeat(`\`, n))
				continue
			}
			if c == '"' {
				if inQuote && i+1 < len(s) && s[i+1] == '"' {
					b.WriteByte('"')
					i += 2
					continue
				}
				inQuote = !inQuote
				i++
				continue
			}
			b.WriteByte(c)
			i++
		}
		args = append(args, b.String())
	}
}

// Batch styles of Rust's tests/ui/std/windows-bat-args{1,2,3}.bat: the
// script hands its arguments to an echo program as %*, as %1 .. %9, or as
// "%~1" .. "%~9".
const (
	styleStar = iota
	styleNumbered
	styleTilde
)

var errCmdWouldInterpret = errors.New("cmd.exe would interpret part of the line")

// cmdCheck refuses lines in which cmd.exe would expand or interpret
// anything: % and ! anywhere (expanded before quotes count), ^ and control
// characters anywhere, and & | < > ( ) outside quotes.
func cmdCheck(line string) error {
	inQuote := false
	for _, r := range line {
		switch {
		case r == '"':
			inQuote = !inQuote
		case strings.ContainsRune("%!^", r), r < 0x20, r == 0x7f:
			return errCmdWouldInterpret
		case !inQuote && strings.ContainsRune("&|<>()", r):
			return errCmdWouldInterpret
		}
	}
	return nil
}

// batchTokens splits a batch file's argument string into %1, %2, ...:
// space, tab, comma, semicolon and equals separate them outside quotes.
func batchTokens(s string) []string {
	var toks []string
	isDelim := func(c byte) bool { return strings.IndexByte(" \t,;=", c) >= 0 }
	i := 0
	for {
		for i < len(s) && isDelim(s[i]) {
			i++
		}
		if i >= len(s) {
			return toks
		}
		start, inQuote := i, false
		for i < len(s) && (inQuote || !isDelim(s[i])) {
			if s[i] == '"' {
				inQuote = !inQuote
			}
			i++
		}
		toks = append(toks, s[start:i])
	}
}

// cmdRun models `cmd.exe ... /s /c "<payload>"` running a batch file whose
// one line starts an echo program with the script's arguments in the given
// style. It returns the script path and the echo program's argv[1:], or an
// error when the model does not apply because cmd.exe would interpret
// something.
func cmdRun(line string, style int) (script string, argv []string, err error) {
	_, rest, ok := strings.Cut(line, " /s /c ")
	if !ok {
		return "", nil, errors.New("no /s /c")
	}
	// /s: the first and the last quote go, nothing else.
	first, last := strings.IndexByte(rest, '"'), strings.LastIndexByte(rest, '"')
	if first != 0 || last != len(rest)-1 || last == 0 {
		return "", nil, errors.New("the /c command is not wrapped in quotes")
	}
	payload := rest[1:last]
	if err := cmdCheck(payload); err != nil {
		return "", nil, err
	}
	if !strings.HasPrefix(payload, `"`) {
		return "", nil, errors.New("the script path is not quoted")
	}
	end := strings.IndexByte(payload[1:], '"')
	if end < 0 {
		return "", nil, errors.New("unterminated script path")
	}
	script = payload[1 : 1+end]
	argString := strings.TrimLeft(payload[2+end:], " \t,;=")
	toks := batchTokens(argString)
	var echoArgs string
	switch style {
	case styleStar:
		echoArgs = argString
	case styleNumbered, styleTilde:
		parts := make([]string, 9)
		for n := range parts {
			tok := ""
			if n < len(toks) {
				tok = toks[n]
			}
			if style == styleTilde {
				tok = strings.TrimPrefix(tok, `"`)
				tok = strings.TrimSuffix(tok, `"`)
				tok = `"` + tok + `"`
			}
			parts[n] = tok
		}
		echoArgs = strings.Join(parts, " ")
	}
	if err := cmdCheck(echoArgs); err != nil {
		return "", nil, err
	}
	argv = crtSplitArgs(echoArgs)
	if style == styleTilde {
		argv = trimTrailingEmpty(argv)
	}
	return script, argv, nil
}

func trimTrailingEmpty(args []string) []string {
	for len(args) > 0 && args[len(args)-1] == "" {
		args = args[:len(args)-1]
	}
	return args
}

// orNil makes empty and nil argument lists compare equal.
func orNil(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	return args
}
