package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// globalFlagsForTest is run's global flag set.
func globalFlagsForTest() *pflag.FlagSet {
	a := &app{}
	fs := newFlags("")
	fs.SetInterspersed(false)
	a.addGlobalFlags(fs)
	fs.BoolVar(&a.json, "json", false, "")
	fs.BoolP("help", "h", false, "")
	return fs
}

// commandFlagsForTest is a command's flag set with every kind of flag the
// scanner must tell apart: a --json, booleans, values, shorthands.
func commandFlagsForTest() *pflag.FlagSet {
	a := &app{}
	fs := newFlags("test")
	fs.Bool("json", false, "")
	fs.BoolP("write", "w", false, "")
	fs.StringP("model", "m", "", "")
	fs.Duration("timeout", 0, "")
	a.addGlobalFlags(fs)
	return fs
}

func TestScanFlags(t *testing.T) {
	tests := []struct {
		name         string
		args         string // split at spaces
		interspersed bool
		end          int
		json, seen   bool
	}{
		{name: "command first", args: "probe --json", end: 0},
		{name: "global flags then command", args: "--binary x --settings=y probe", end: 3},
		{name: "value that looks like a command", args: "--binary probe status", end: 2},
		{name: "value that looks like a flag", args: "--binary --json probe", end: 2},
		{name: "json before the command", args: "--json probe", end: 1, json: true, seen: true},
		{name: "json=false", args: "--json=false probe", end: 1, seen: true},
		{name: "json=maybe asks for JSON", args: "--json=maybe probe", end: 1, json: true, seen: true},
		{name: "last json wins", args: "--json --json=0 probe", end: 2, seen: true},
		{name: "bad flag before json", args: "--bogus --json probe", end: 2, json: true, seen: true},
		{name: "double dash ends flags", args: "--json -- probe --binary", end: 2, json: true, seen: true},
		{name: "help shorthand", args: "-h probe", end: 1},
		{name: "no command", args: "--binary", end: 1},
		{name: "stdin dash is an argument", args: "- probe", end: 0},
		{name: "interspersed json after a positional", args: "prompt --json", interspersed: true, end: 2, json: true, seen: true},
		{name: "json after -- is an argument", args: "--bogus -- --json", interspersed: true, end: 2},
		{name: "json as a value", args: "--binary --json", interspersed: true, end: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := globalFlagsForTest()
			scan := scanFlags(fs, strings.Fields(tt.args), tt.interspersed)
			assert.Equal(t, flagScan{end: tt.end, json: tt.json, jsonSeen: tt.seen}, scan)
		})
	}
}

func TestScanFlagsShorthands(t *testing.T) {
	tests := []struct {
		args string
		json bool
	}{
		{"-m --json", false},     // -m takes the next argument
		{"-m=x --json", true},    // the value is inline
		{"-mx --json", true},     // so is this one
		{"-wm --json", false},    // a boolean, then -m taking the next argument
		{"-ww --json", true},     // booleans only
		{"-z --json", true},      // unknown: no value
		{"-test.v --json", true}, // go test's flags are left alone
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			scan := scanFlags(commandFlagsForTest(), strings.Fields(tt.args), true)
			assert.Equal(t, tt.json, scan.json)
		})
	}
}

// FuzzScanFlags checks scanFlags against pflag itself: wherever Parse
// succeeds, the scanner finds the same end of the flags (the command) and
// the same --json.
func FuzzScanFlags(f *testing.F) {
	for _, seed := range []string{
		"--binary x probe --json",
		"--json --bogus probe",
		"--settings= -- run --json",
		"-h",
		"--json=false probe",
		"--binary --json probe",
		"-mx -wm y --json=1 prompt -- --json",
		"--timeout 5s --json=t -w -m",
		"-test.v --json x",
		"",
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, line string, command bool) {
		args := strings.Split(line, " ")
		fs, interspersed := globalFlagsForTest(), false
		if command {
			fs, interspersed = commandFlagsForTest(), true
		}
		fs.SetInterspersed(interspersed)
		scan := scanFlags(fs, args, interspersed)
		require.GreaterOrEqual(t, scan.end, 0)
		require.LessOrEqual(t, scan.end, len(args))
		if fs.Parse(args) != nil {
			return
		}
		json, err := fs.GetBool("json")
		require.NoError(t, err)
		assert.Equal(t, fs.Changed("json"), scan.jsonSeen, "args %q", args)
		assert.Equal(t, json, scan.json, "args %q", args)
		if !interspersed {
			assert.Equal(t, fs.Args(), args[scan.end:], "args %q", args)
		}
	})
}

// TestFlagErrorsDoNotEchoArguments: a PROMPT given without its "--" is a
// bad flag whose error never quotes it; a real flag's name is kept.
func TestFlagErrorsDoNotEchoArguments(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--json", "-explain the secret plan"}, "unknown shorthand flag: -e ("},
		{[]string{"run", "--json", "--explain the secret plan"}, "unknown flag ("},
		{[]string{"run", "--json", "--- the secret plan ---"}, "bad flag syntax ("},
		{[]string{"run", "--json", "-ü secret"}, "unknown shorthand flag ("},
		{[]string{"--json", "--the-secret-plan=tomorrow", "run"}, "unknown flag: --the-secret-plan"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, "", tt.args...)
			assert.Equal(t, 2, code)
			requireOneJSONError(t, stdout, stderr, "input")
			assert.Contains(t, stdout, tt.want)
			assert.NotContains(t, stdout+stderr, "plan ")
			assert.NotContains(t, stdout+stderr, "secret ")
			assert.NotContains(t, stdout+stderr, "tomorrow")
		})
	}
}
