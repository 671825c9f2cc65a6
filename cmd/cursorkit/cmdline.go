package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// flagScan is what scanFlags found on a command line.
type flagScan struct {
	// end is the index of the first positional argument when flags stop
	// there (interspersed false), the index after a "--", or len(args).
	end int
	// json is the value of the last --json, when jsonSeen.
	json, jsonSeen bool
}

// scanFlags walks args by pflag's rules for fs (which flags take a value,
// where "--" ends the flags, whether flags may follow a positional
// argument) without setting anything and without stopping at a bad flag:
// a line whose flags do not parse still has a command, and still asks for
// JSON or not (docs/contract.md, "The command line"). An unknown flag is
// taken to have no value. Where fs.Parse succeeds, scanFlags agrees with it
// (FuzzScanFlags).
func scanFlags(fs *pflag.FlagSet, args []string, interspersed bool) flagScan {
	scan := flagScan{end: len(args)}
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--":
			scan.end = i + 1
			return scan
		case len(s) < 2 || s[0] != '-':
			if !interspersed {
				scan.end = i
				return scan
			}
		case s[1] == '-':
			name, value, inline := strings.Cut(s[2:], "=")
			f := fs.Lookup(name)
			if f == nil || name == "" || name[0] == '-' {
				continue // unknown or bad syntax: pflag stops here
			}
			if name == "json" {
				scan.json, scan.jsonSeen = jsonValue(value, inline), true
			}
			if !inline && f.NoOptDefVal == "" {
				i++ // the next argument is the value
			}
		default:
			if shortTakesNext(fs, s[1:]) {
				i++
			}
		}
	}
	return scan
}

// jsonValue is what --json or --json=VALUE asks for: false only for a value
// that pflag reads as false. Any other value asks for JSON, so the error
// about --json=maybe is itself JSON.
func jsonValue(value string, inline bool) bool {
	if !inline {
		return true
	}
	b, err := strconv.ParseBool(value)
	return err != nil || b
}

// shortTakesNext reports whether the shorthand group shorts (an argument
// "-abc" without its dash) takes the next argument as its value, as
// pflag's parseSingleShortArg reads it.
func shortTakesNext(fs *pflag.FlagSet, shorts string) bool {
	for len(shorts) > 0 {
		if strings.HasPrefix(shorts, "test.") {
			return false // pflag leaves go test's own flags alone
		}
		f := fs.ShorthandLookup(shorts[:1])
		switch {
		case f == nil:
			return false // unknown (or -h): pflag stops here
		case len(shorts) > 2 && shorts[1] == '=':
			return false // -f=VALUE
		case f.NoOptDefVal != "":
			shorts = shorts[1:]
			continue
		}
		return len(shorts) == 1 // -fVALUE, or -f VALUE
	}
	return false
}

// flagError is err, a bad flag, without the argument text pflag quotes: an
// argument that starts with "-" but is no flag is often a PROMPT missing
// its "--", and prompt text is never echoed (docs/contract.md, "Security").
// A name that looks like a flag's is kept.
func flagError(err error) error {
	const hint = "an argument that starts with - goes after --"
	var notExist *pflag.NotExistError
	var syntax *pflag.InvalidSyntaxError
	switch {
	case errors.As(err, &notExist) && notExist.GetSpecifiedShortnames() != "":
		if name := notExist.GetSpecifiedName(); flagLike(name) {
			return fmt.Errorf("unknown shorthand flag: -%s (%s)", name, hint)
		}
		return fmt.Errorf("unknown shorthand flag (%s)", hint)
	case errors.As(err, &notExist):
		if name := notExist.GetSpecifiedName(); flagLike(name) {
			return err
		}
		return fmt.Errorf("unknown flag (%s)", hint)
	case errors.As(err, &syntax):
		return fmt.Errorf("bad flag syntax (%s)", hint)
	}
	return err
}

// flagLike reports whether name could be a flag's name: at most 40 ASCII
// letters, digits and dashes.
func flagLike(name string) bool {
	if name == "" || len(name) > 40 {
		return false
	}
	for _, r := range name {
		if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
