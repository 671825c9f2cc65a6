package shim_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

// fuzzArgs splits a fuzz input into arguments on U+001F, a control
// character no accepted argument can hold anyway.
func fuzzArgs(raw string) []string { return strings.Split(raw, "\x1f") }

func seedVectors(f *testing.F) {
	for _, v := range append(append([][]string{}, rustBatVectors...), extraBatVectors...) {
		f.Add(strings.Join(v, "\x1f"))
	}
}

// FuzzValidateBatchArgs: the validator accepts exactly the arguments
// without a refused character, and names the first one it finds.
func FuzzValidateBatchArgs(f *testing.F) {
	seedVectors(f)
	f.Fuzz(func(t *testing.T, raw string) {
		args := fuzzArgs(raw)
		err := shim.ValidateBatchArgs(args)
		firstBad := -1
		var badChar rune
		for i, a := range args {
			for j, r := range a {
				_, size := utf8.DecodeRuneInString(a[j:])
				if r == utf8.RuneError && size == 1 || strings.ContainsRune(`"%!^&|<>()`, r) || unicode.IsControl(r) {
					firstBad, badChar = i, r
					break
				}
			}
			if firstBad >= 0 {
				break
			}
		}
		if firstBad < 0 {
			require.NoError(t, err)
			return
		}
		require.Error(t, err)
		assert.Equal(t, failure.Input, failure.KindOf(err))
		var ae *shim.ArgError
		require.True(t, errors.As(err, &ae))
		assert.Equal(t, firstBad, ae.Index)
		assert.Equal(t, badChar, ae.Char)
	})
}

// FuzzBatchCommandLine: a batch plan is refused, or the reference model of
// cmd.exe and the C runtime gives back exactly the arguments, whatever the
// style the script uses.
func FuzzBatchCommandLine(f *testing.F) {
	seedVectors(f)
	const script = `C:\Program Files (x86)\npm\cursor-agent.cmd`
	res := discovery.Resolution{Path: script, Kind: discovery.CmdShim}
	opts := winOpts()
	f.Fuzz(func(t *testing.T, raw string) {
		args := fuzzArgs(raw)
		plan, err := shim.Build(res, args, opts)
		if err != nil {
			kind := failure.KindOf(err)
			require.Equal(t, failure.Input, kind)
			return
		}
		styles := []int{styleStar}
		if len(args) <= 9 {
			styles = append(styles, styleNumbered, styleTilde)
		}
		for _, style := range styles {
			gotScript, got, err := cmdRun(plan.CommandLine, style)
			require.NoError(t, err, plan.CommandLine)
			require.Equal(t, script, gotScript)
			want := args
			if style == styleTilde {
				want = trimTrailingEmpty(args)
			}
			require.Equal(t, orNil(want), orNil(got), "style %d: %s", style, plan.CommandLine)
		}
	})
}

// FuzzComposeCommandLine: a native plan's command line splits back into
// exactly its argv under the C runtime's rules.
func FuzzComposeCommandLine(f *testing.F) {
	seedVectors(f)
	res := discovery.Resolution{Path: `C:\Program Files\Cursor\agent.exe`, Kind: discovery.Native}
	opts := winOpts()
	f.Fuzz(func(t *testing.T, raw string) {
		args := fuzzArgs(raw)
		plan, err := shim.Build(res, args, opts)
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		require.Equal(t, plan.Args, crtSplit(plan.CommandLine), plan.CommandLine)
	})
}

// FuzzValidatePowerShellArgs: a .ps1 plan is refused exactly when the
// model of PowerShell (psmodel_test.go) says an argument would not reach
// the program behind the script as it is, naming the first such argument;
// an accepted plan's command line splits back into its argv.
func FuzzValidatePowerShellArgs(f *testing.F) {
	seedVectors(f)
	for _, seed := range [][]string{
		{"--print", "--output-format", "stream-json", "--mode", "ask", "--trust", "--model", "gpt-5", "--resume", "a-1"},
		{"-", "--", "-1", "-a:b", "-a:", "x", "-a ", "- ", "\u2013", "\u2013p", "-$args:x", "-a.b:c", "-:"},
		{"a b\\", "a\u00a0b\\", `a"b`, "", "$HOME", "`t", "-x\u00a0", "\u2015a:true"},
	} {
		f.Add(strings.Join(seed, "\x1f"))
	}
	res := discovery.Resolution{Path: `C:\Users\A User\npm\cursor-agent.ps1`, Kind: discovery.PowerShell}
	opts := winOpts()
	f.Fuzz(func(t *testing.T, raw string) {
		args := fuzzArgs(raw)
		plan, err := shim.Build(res, args, opts)
		firstBad := psMangled(args)
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			var ae *shim.ArgError
			if errors.As(err, &ae) {
				require.Equal(t, firstBad, ae.Index, "%v", err)
				return
			}
			require.Contains(t, err.Error(), "command line would be")
			return
		}
		require.Equal(t, -1, firstBad, "accepted, but the model of PowerShell changes argument %d", firstBad)
		require.Equal(t, plan.Args, crtSplit(plan.CommandLine), plan.CommandLine)
	})
}
