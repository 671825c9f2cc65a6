package shim_test

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file models, independently of the code under test, what becomes of
// the arguments after `-File script.ps1` (docs/contract.md, "Launch
// plans"), step by step as PowerShell's own sources do it:
//
//  1. the host splits its command line (crtSplit);
//  2. it turns each argument after the script into a positional value or a
//     named parameter: PowerShell 7's CommandLineParameterParser.CollectPSArgs,
//     and the loop Windows PowerShell 5.1 ran in its place (the parser as it
//     entered the PowerShell repository in 2016);
//  3. CommandParameter.ToCommandParameterInternal rebuilds a parameter
//     token from the name (trailing white space dropped, a final ':' marks
//     a value), and ScriptParameterBinderController.HandleRemainingArguments
//     puts what a script without a param block does not bind into $args:
//     a named parameter as its token text, then its value, if any;
//  4. the script hands $args to a program, which Windows PowerShell does
//     the legacy way (NativeCommandParameterBinder): empty strings are
//     dropped, a string holding white space outside "..." is wrapped in
//     quotes, nothing is escaped; the program splits that (crtSplit again).
//
// psMangled returns the index of the first argument that does not reach
// the program as it is under either host, or -1. One deliberate excess: any
// argument holding '"' counts as mangled (see psMangled).

// psDash: CharExtensions.IsDash.
func psDash(r rune) bool { return r == '-' || r == '\u2013' || r == '\u2014' || r == '\u2015' }

// ps51Named is Windows PowerShell's test for -name:value, `^.\w+\:`.
var ps51Named = regexp.MustCompile(`^[^\n][\p{L}\p{Mn}\p{Nd}\p{Pc}]+:`)

// psParam is one entry of the host's collected arguments.
type psParam struct {
	from     int    // index of the argument that produced it
	named    bool   // a parameter name (CommandParameter(name[, value]))
	name     string // the name as given, dash included
	value    string
	hasValue bool
}

// psCollect is step 2 for one host.
func psCollect(args []string, v7 bool) []psParam {
	var out []psParam
	pending := -1
	pendingName := ""
	for i, arg := range args {
		if pending >= 0 {
			out = append(out, psParam{from: pending, named: true, name: pendingName, value: arg, hasValue: true})
			pending = -1
			continue
		}
		first, _ := utf8.DecodeRuneInString(arg)
		isParam := arg != "" && psDash(first)
		if v7 {
			isParam = isParam && len(utf16.Encode([]rune(arg))) > 1
		}
		if !isParam {
			out = append(out, psParam{from: i, value: arg, hasValue: true})
			continue
		}
		split := strings.ContainsRune(arg, ':')
		if !v7 {
			split = ps51Named.MatchString(arg)
		}
		if !split {
			out = append(out, psParam{from: i, named: true, name: arg})
			continue
		}
		off := strings.IndexByte(arg, ':')
		if off == len(arg)-1 {
			pending, pendingName = i, strings.TrimRight(arg, ":")
			continue
		}
		value := arg[off+1:]
		if v7 {
			// ConvertToBoolIfPossible: the value becomes a boolean.
			v := strings.TrimPrefix(value, "$")
			if strings.EqualFold(v, "true") {
				value = "True"
			} else if strings.EqualFold(v, "false") {
				value = "False"
			}
		}
		out = append(out, psParam{from: i, named: true, name: arg[:off], value: value, hasValue: true})
	}
	// A pending name at the end is dropped.
	return out
}

// psDollarArgs is step 3: what each argument became in $args, and where
// the binder fails instead (a parameter whose name is empty).
func psDollarArgs(n int, params []psParam) (got [][]string, failed []bool) {
	got, failed = make([][]string, n), make([]bool, n)
	for _, p := range params {
		if !p.named {
			got[p.from] = append(got[p.from], p.value)
			continue
		}
		text := strings.TrimRightFunc(p.name, unicode.IsSpace)
		hasColon := strings.HasSuffix(text, ":")
		_, size := utf8.DecodeRuneInString(text)
		name := text[size:]
		if hasColon {
			name = name[:len(name)-1]
		}
		if name == "" {
			failed[p.from] = true
			continue
		}
		got[p.from] = append(got[p.from], text)
		if hasColon || p.hasValue {
			got[p.from] = append(got[p.from], p.value)
		}
	}
	return got, failed
}

// psLegacyArg is step 4 for one string: what Windows PowerShell writes on
// the program's command line, or "" for an argument it drops.
func psLegacyArg(a string) string {
	quotes, quote := 0, false
	for _, r := range a {
		if r == '"' {
			quotes++
		} else if unicode.IsSpace(r) && quotes%2 == 0 {
			quote = true
		}
	}
	if quote {
		return `"` + a + `"`
	}
	return a
}

// psMangled is steps 2 to 4 for both hosts.
func psMangled(args []string) int {
	first := -1
	note := func(i int) {
		if first < 0 || i < first {
			first = i
		}
	}
	for i, a := range args {
		if !utf8.ValidString(a) || strings.IndexByte(a, 0) >= 0 {
			note(i) // no command line carries it
		}
	}
	for _, v7 := range []bool{false, true} {
		got, failed := psDollarArgs(len(args), psCollect(args, v7))
		for i, a := range args {
			if failed[i] || !slices.Equal(got[i], []string{a}) {
				note(i)
				continue
			}
			// A '"' counts as mangled even where the unescaped hand-over
			// happens to split back (`0 "` becomes `"0 ""`): that depends
			// on the program's own parser, and cursorkit refuses '"'.
			if a == "" || strings.ContainsRune(a, '"') || !slices.Equal(crtSplitArgs(psLegacyArg(a)), []string{a}) {
				note(i)
			}
		}
	}
	return first
}
