package shim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

// winOpts describes a typical Windows machine without PowerShell 7.
func winOpts() shim.Options {
	return shim.Options{
		GOOS:         "windows",
		ComSpec:      `C:\WINDOWS\system32\cmd.exe`,
		SystemRoot:   `C:\WINDOWS`,
		ProgramFiles: `C:\Program Files`,
		Exists:       func(string) bool { return false },
	}
}

func winRes(path string, kind discovery.Kind) discovery.Resolution {
	i := strings.LastIndexByte(path, '\\')
	return discovery.Resolution{Path: path, Name: path[i+1:], Kind: kind, Source: discovery.SourcePath}
}

func TestBuildGoldenPlans(t *testing.T) {
	withPwsh := winOpts()
	withPwsh.Exists = func(p string) bool { return p == `C:\Program Files\PowerShell\7\pwsh.exe` }
	configuredHost := winOpts()
	configuredHost.PowerShellHost = `D:\Tools\PowerShell 7.5\pwsh.exe`
	relComSpec := winOpts()
	relComSpec.ComSpec = `cmd.exe`
	otherComSpec := winOpts()
	otherComSpec.ComSpec = `C:\Tools\tcc.exe`
	quotedComSpec := winOpts()
	quotedComSpec.ComSpec = `"C:\WINDOWS\system32\cmd.exe"`
	noComSpec := winOpts()
	noComSpec.ComSpec = ""
	upperComSpec := winOpts()
	upperComSpec.ComSpec = `C:\Windows\System32\CMD.EXE`

	npmCmd := `C:\Users\A User\AppData\Roaming\npm\cursor-agent.cmd`
	x86Cmd := `C:\Program Files (x86)\cursor\agent.bat`
	model := "claude-opus-4-8[context=1m,effort=high]"

	tests := []struct {
		name string
		res  discovery.Resolution
		args []string
		opts shim.Options
		want shim.Command
	}{
		{
			name: "posix direct",
			res:  discovery.Resolution{Path: "/home/a/.local/bin/cursor-agent", Kind: discovery.POSIX},
			args: []string{"-p", "--model", model, "it's"},
			opts: shim.Options{GOOS: "linux"},
			want: shim.Command{
				Program:     "/home/a/.local/bin/cursor-agent",
				Args:        []string{"/home/a/.local/bin/cursor-agent", "-p", "--model", model, "it's"},
				CommandLine: `/home/a/.local/bin/cursor-agent -p --model 'claude-opus-4-8[context=1m,effort=high]' 'it'\''s'`,
				Kind:        discovery.POSIX, Target: "/home/a/.local/bin/cursor-agent",
			},
		},
		{
			name: "posix on darwin, no args",
			res:  discovery.Resolution{Path: "/opt/cursor agent/bin/cursor-agent"},
			opts: shim.Options{GOOS: "darwin"},
			want: shim.Command{
				Program: "/opt/cursor agent/bin/cursor-agent", Args: []string{"/opt/cursor agent/bin/cursor-agent"},
				CommandLine: `'/opt/cursor agent/bin/cursor-agent'`, Kind: discovery.POSIX, Target: "/opt/cursor agent/bin/cursor-agent",
			},
		},
		{
			name: "native exe with spaces and quotes",
			res:  winRes(`C:\Program Files\Cursor\cursor-agent.exe`, discovery.Native),
			args: []string{"-p", "say \"hi\"", `C:\dir with space\`, "", `a\\"b`},
			opts: winOpts(),
			want: shim.Command{
				Program:     `C:\Program Files\Cursor\cursor-agent.exe`,
				Args:        []string{`C:\Program Files\Cursor\cursor-agent.exe`, "-p", "say \"hi\"", `C:\dir with space\`, "", `a\\"b`},
				CommandLine: `"C:\Program Files\Cursor\cursor-agent.exe" -p "say \"hi\"" "C:\dir with space\\" "" a\\\\\"b`,
				Kind:        discovery.Native, Target: `C:\Program Files\Cursor\cursor-agent.exe`,
			},
		},
		{
			name: "native com, upper case, no args",
			res:  winRes(`C:\Tools\AGENT.COM`, ""),
			opts: winOpts(),
			want: shim.Command{
				Program: `C:\Tools\AGENT.COM`, Args: []string{`C:\Tools\AGENT.COM`}, CommandLine: `C:\Tools\AGENT.COM`,
				Kind: discovery.Native, Target: `C:\Tools\AGENT.COM`,
			},
		},
		{
			name: "npm cmd shim with a model id",
			res:  winRes(npmCmd, discovery.CmdShim),
			args: []string{"-p", "--model", model, "--output-format", "stream-json", `C:\repo\`},
			opts: winOpts(),
			want: shim.Command{
				Program: `C:\WINDOWS\system32\cmd.exe`,
				Args: []string{"cmd.exe", "/d", "/v:off", "/s", "/c",
					`"` + npmCmd + `" -p --model "claude-opus-4-8[context=1m,effort=high]" --output-format stream-json "C:\repo\\"`},
				CommandLine: `cmd.exe /d /v:off /s /c ""` + npmCmd + `" -p --model "claude-opus-4-8[context=1m,effort=high]" --output-format stream-json "C:\repo\\""`,
				Kind:        discovery.CmdShim, Target: npmCmd,
			},
		},
		{
			name: "bat under Program Files (x86), empty and unicode args",
			res:  winRes(x86Cmd, discovery.CmdShim),
			args: []string{"", "naïve", "a=b", "x;y"},
			opts: upperComSpec,
			want: shim.Command{
				Program:     `C:\Windows\System32\CMD.EXE`,
				Args:        []string{"cmd.exe", "/d", "/v:off", "/s", "/c", `"` + x86Cmd + `" "" "naïve" "a=b" "x;y"`},
				CommandLine: `cmd.exe /d /v:off /s /c ""` + x86Cmd + `" "" "naïve" "a=b" "x;y""`,
				Kind:        discovery.CmdShim, Target: x86Cmd,
			},
		},
		{
			name: "trailing dots and spaces still make a batch file",
			res:  winRes(`C:\x\run.BAT. . .`, discovery.Native),
			args: []string{"a"},
			opts: winOpts(),
			want: shim.Command{
				Program:     `C:\WINDOWS\system32\cmd.exe`,
				Args:        []string{"cmd.exe", "/d", "/v:off", "/s", "/c", `"C:\x\run.BAT" a`},
				CommandLine: `cmd.exe /d /v:off /s /c ""C:\x\run.BAT" a"`,
				Kind:        discovery.CmdShim, Target: `C:\x\run.BAT`,
				Warnings: []string{
					"trailing dots and spaces were dropped from the target's file name, as Windows does when it opens it",
					"the resolver classified the target as native; its file name makes it cmd-shim, which is what runs",
				},
			},
		},
		{
			name: "relative ComSpec ignored",
			res:  winRes(`C:\x\a.cmd`, discovery.CmdShim),
			opts: relComSpec,
			want: batchPlan(`C:\x\a.cmd`, "ComSpec is not an absolute path; using the system cmd.exe instead"),
		},
		{
			name: "ComSpec naming another shell ignored",
			res:  winRes(`C:\x\a.cmd`, discovery.CmdShim),
			opts: otherComSpec,
			want: batchPlan(`C:\x\a.cmd`, "ComSpec does not name cmd.exe; using the system cmd.exe instead"),
		},
		{
			name: "quoted ComSpec ignored",
			res:  winRes(`C:\x\a.cmd`, discovery.CmdShim),
			opts: quotedComSpec,
			want: batchPlan(`C:\x\a.cmd`, `ComSpec holds '"'; using the system cmd.exe instead`),
		},
		{
			name: "missing ComSpec",
			res:  winRes(`C:\x\a.cmd`, discovery.CmdShim),
			opts: noComSpec,
			want: batchPlan(`C:\x\a.cmd`, "ComSpec is not set; using the system cmd.exe instead"),
		},
		{
			name: "ps1 with Windows PowerShell",
			res:  winRes(`C:\Users\A User\AppData\Roaming\npm\cursor-agent.ps1`, discovery.PowerShell),
			args: []string{"two words", "x"},
			opts: winOpts(),
			want: shim.Command{
				Program: `C:\WINDOWS\System32\WindowsPowerShell\v1.0\powershell.exe`,
				Args: []string{`C:\WINDOWS\System32\WindowsPowerShell\v1.0\powershell.exe`, "-NoLogo", "-NoProfile", "-NonInteractive",
					"-ExecutionPolicy", "Bypass", "-File", `C:\Users\A User\AppData\Roaming\npm\cursor-agent.ps1`, "two words", "x"},
				CommandLine: `C:\WINDOWS\System32\WindowsPowerShell\v1.0\powershell.exe -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -File "C:\Users\A User\AppData\Roaming\npm\cursor-agent.ps1" "two words" x`,
				Kind:        discovery.PowerShell, Target: `C:\Users\A User\AppData\Roaming\npm\cursor-agent.ps1`,
			},
		},
		{
			name: "ps1 with PowerShell 7",
			res:  winRes(`C:\s\a.PS1`, discovery.PowerShell),
			opts: withPwsh,
			want: shim.Command{
				Program: `C:\Program Files\PowerShell\7\pwsh.exe`,
				Args: []string{`C:\Program Files\PowerShell\7\pwsh.exe`, "-NoLogo", "-NoProfile", "-NonInteractive",
					"-ExecutionPolicy", "Bypass", "-File", `C:\s\a.PS1`},
				CommandLine: `"C:\Program Files\PowerShell\7\pwsh.exe" -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -File C:\s\a.PS1`,
				Kind:        discovery.PowerShell, Target: `C:\s\a.PS1`,
			},
		},
		{
			// What a Cursor turn passes: every argument starts with a
			// dash or follows one, and all of them reach the script.
			name: "ps1 with the Cursor turn's arguments",
			res:  winRes(`C:\Users\A User\AppData\Local\cursor-agent\cursor-agent.ps1`, discovery.PowerShell),
			args: []string{"--print", "--output-format", "stream-json", "--stream-partial-output", "--mode", "plan", "--trust",
				"--model", "claude-4.5[thinking=true]", "--resume", "4f1c-9e"},
			opts: winOpts(),
			want: shim.Command{
				Program: `C:\WINDOWS\System32\WindowsPowerShell\v1.0\powershell.exe`,
				Args: []string{`C:\WINDOWS\System32\WindowsPowerShell\v1.0\powershell.exe`, "-NoLogo", "-NoProfile", "-NonInteractive",
					"-ExecutionPolicy", "Bypass", "-File", `C:\Users\A User\AppData\Local\cursor-agent\cursor-agent.ps1`,
					"--print", "--output-format", "stream-json", "--stream-partial-output", "--mode", "plan", "--trust",
					"--model", "claude-4.5[thinking=true]", "--resume", "4f1c-9e"},
				CommandLine: `C:\WINDOWS\System32\WindowsPowerShell\v1.0\powershell.exe -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -File "C:\Users\A User\AppData\Local\cursor-agent\cursor-agent.ps1" --print --output-format stream-json --stream-partial-output --mode plan --trust --model claude-4.5[thinking=true] --resume 4f1c-9e`,
				Kind:        discovery.PowerShell, Target: `C:\Users\A User\AppData\Local\cursor-agent\cursor-agent.ps1`,
			},
		},
		{
			name: "ps1 with a configured host and dash arguments",
			res:  winRes(`C:\s\a.ps1`, discovery.PowerShell),
			args: []string{"-p", "--force"},
			opts: configuredHost,
			want: shim.Command{
				Program: `D:\Tools\PowerShell 7.5\pwsh.exe`,
				Args: []string{`D:\Tools\PowerShell 7.5\pwsh.exe`, "-NoLogo", "-NoProfile", "-NonInteractive",
					"-ExecutionPolicy", "Bypass", "-File", `C:\s\a.ps1`, "-p", "--force"},
				CommandLine: `"D:\Tools\PowerShell 7.5\pwsh.exe" -NoLogo -NoProfile -NonInteractive -ExecutionPolicy Bypass -File C:\s\a.ps1 -p --force`,
				Kind:        discovery.PowerShell, Target: `C:\s\a.ps1`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := shim.Build(tt.res, tt.args, tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func batchPlan(script, warning string) shim.Command {
	return shim.Command{
		Program:     `C:\WINDOWS\System32\cmd.exe`,
		Args:        []string{"cmd.exe", "/d", "/v:off", "/s", "/c", `"` + script + `"`},
		CommandLine: `cmd.exe /d /v:off /s /c ""` + script + `""`,
		Kind:        discovery.CmdShim, Target: script,
		Warnings: []string{warning},
	}
}

// TestBuildRefusals checks every refusal: its failure kind and, for an
// argument, the index and character, and that the message never repeats
// the argument.
func TestBuildRefusals(t *testing.T) {
	const secret = "sk-SECRET-token-value"
	cmdRes := winRes(`C:\x\agent.cmd`, discovery.CmdShim)
	ps1Res := winRes(`C:\x\agent.ps1`, discovery.PowerShell)
	exeRes := winRes(`C:\x\agent.exe`, discovery.Native)
	noRoot := winOpts()
	noRoot.ComSpec, noRoot.SystemRoot = "", ""
	badHost := winOpts()
	badHost.PowerShellHost = `pwsh.exe`

	tests := []struct {
		name  string
		res   discovery.Resolution
		args  []string
		opts  shim.Options
		kind  failure.Kind
		index int  // -1: not an argument refusal
		char  rune // for argument refusals
		text  string
	}{
		{"batch quote", cmdRes, []string{"ok", secret + `"`}, winOpts(), failure.Input, 1, '"', "cmd.exe would interpret"},
		{"batch percent", cmdRes, []string{secret + "%PATH%"}, winOpts(), failure.Input, 0, '%', ""},
		{"batch bang", cmdRes, []string{"a", "b", "!TMP!"}, winOpts(), failure.Input, 2, '!', ""},
		{"batch caret", cmdRes, []string{"^"}, winOpts(), failure.Input, 0, '^', ""},
		{"batch ampersand", cmdRes, []string{secret + "&whoami"}, winOpts(), failure.Input, 0, '&', ""},
		{"batch pipe", cmdRes, []string{"|"}, winOpts(), failure.Input, 0, '|', ""},
		{"batch less", cmdRes, []string{"<"}, winOpts(), failure.Input, 0, '<', ""},
		{"batch greater", cmdRes, []string{">file.txt"}, winOpts(), failure.Input, 0, '>', ""},
		{"batch open paren", cmdRes, []string{"("}, winOpts(), failure.Input, 0, '(', ""},
		{"batch close paren", cmdRes, []string{"x)"}, winOpts(), failure.Input, 0, ')', ""},
		{"batch CR", cmdRes, []string{"a\r"}, winOpts(), failure.Input, 0, '\r', "control characters"},
		{"batch LF", cmdRes, []string{"\n"}, winOpts(), failure.Input, 0, '\n', "U+000A"},
		{"batch NUL", cmdRes, []string{"a", "\x00"}, winOpts(), failure.Input, 1, 0, "NUL"},
		{"batch tab", cmdRes, []string{"a\tb"}, winOpts(), failure.Input, 0, '\t', ""},
		{"batch C1 control", cmdRes, []string{"a\u0085"}, winOpts(), failure.Input, 0, '\u0085', ""},
		{"batch DEL", cmdRes, []string{"\x7f"}, winOpts(), failure.Input, 0, 0x7f, ""},
		{"batch invalid UTF-8", cmdRes, []string{"a\xff"}, winOpts(), failure.Input, 0, 0xfffd, "UTF-8"},
		{"batch too long", cmdRes, []string{strings.Repeat("a", 7990)}, winOpts(), failure.Input, -1, 0, "cmd.exe allows at most 8000"},
		{"batch script with percent", winRes(`C:\100%\a.cmd`, ""), nil, winOpts(), failure.Setup, -1, 0, "U+0025 '%'"},
		{"batch script with bang", winRes(`C:\hey!\a.bat`, ""), nil, winOpts(), failure.Setup, -1, 0, "'!'"},
		{"batch script with quote", winRes(`C:\a"b\a.bat`, ""), nil, winOpts(), failure.Setup, -1, 0, `'"'`},
		{"exe path with quote", winRes(`C:\a"b\a.exe`, ""), nil, winOpts(), failure.Setup, -1, 0, `'"'`},
		{"batch script with control", winRes("C:\\a\x01b\\a.bat", ""), nil, winOpts(), failure.Setup, -1, 0, "U+0001"},
		{"batch without SystemRoot", cmdRes, nil, noRoot, failure.Setup, -1, 0, "SystemRoot"},
		{"ps1 without SystemRoot", ps1Res, nil, noRoot, failure.Setup, -1, 0, "SystemRoot"},
		{"ps1 relative host", ps1Res, nil, badHost, failure.Setup, -1, 0, "absolute"},
		{"ps1 name:value", ps1Res, []string{"--print", "-" + secret + ":1"}, winOpts(), failure.Input, 1, ':', "-name:value"},
		{"ps1 name: takes the next", ps1Res, []string{"--model:", secret}, winOpts(), failure.Input, 0, ':', "splits it at the colon"},
		{"ps1 colon after a dash anywhere", ps1Res, []string{"--x.y=" + secret + ":z"}, winOpts(), failure.Input, 0, ':', ""},
		{"ps1 en dash name:value", ps1Res, []string{"\u2013a:" + secret}, winOpts(), failure.Input, 0, ':', ""},
		{"ps1 lone dash", ps1Res, []string{"-p", "-"}, winOpts(), failure.Input, 1, '-', "lone dash"},
		{"ps1 lone em dash", ps1Res, []string{"\u2014"}, winOpts(), failure.Input, 0, '\u2014', "lone dash"},
		{"ps1 dash with a trailing space", ps1Res, []string{"--" + secret + " "}, winOpts(), failure.Input, 0, ' ', "drops the white space"},
		{"ps1 dash and a space", ps1Res, []string{"- "}, winOpts(), failure.Input, 0, ' ', ""},
		{"ps1 dash with a trailing no-break space", ps1Res, []string{"-x\u00a0"}, winOpts(), failure.Input, 0, '\u00a0', ""},
		{"ps1 empty", ps1Res, []string{"-p", ""}, winOpts(), failure.Input, 1, shim.NoChar, "empty"},
		{"ps1 quote", ps1Res, []string{secret + `"`}, winOpts(), failure.Input, 0, '"', ""},
		{"ps1 dash with a quote", ps1Res, []string{`--say="` + secret}, winOpts(), failure.Input, 0, '"', ""},
		{"ps1 trailing backslash with space", ps1Res, []string{`C:\A User\`}, winOpts(), failure.Input, 0, '\\', "trailing backslashes"},
		{"ps1 trailing backslash with no-break space", ps1Res, []string{"C:\\A\u00a0User\\"}, winOpts(), failure.Input, 0, '\\', "trailing backslashes"},
		{"ps1 NUL", ps1Res, []string{"\x00"}, winOpts(), failure.Input, 0, 0, ""},
		{"exe NUL", exeRes, []string{"a", "b\x00" + secret}, winOpts(), failure.Input, 1, 0, ""},
		{"exe too long", exeRes, []string{strings.Repeat("€", 32767-len(`C:\x\agent.exe `)+1)}, winOpts(), failure.Input, -1, 0, "32766"},
		{"posix NUL", discovery.Resolution{Path: "/bin/x"}, []string{secret + "\x00"}, shim.Options{GOOS: "linux"}, failure.Input, 0, 0, ""},
		{"posix relative", discovery.Resolution{Path: "bin/x"}, nil, shim.Options{GOOS: "linux"}, failure.Setup, -1, 0, "absolute"},
		{"empty resolution", discovery.Resolution{}, nil, winOpts(), failure.Setup, -1, 0, "no path"},
		{"windows relative", winRes(`x\agent.exe`, ""), nil, winOpts(), failure.Setup, -1, 0, "absolute"},
		{"drive relative", winRes(`C:agent.exe`, ""), nil, winOpts(), failure.Setup, -1, 0, "absolute"},
		{"js", winRes(`C:\x\cli.JS`, ""), nil, winOpts(), failure.Setup, -1, 0, ".js cannot be launched"},
		{"vbs", winRes(`C:\x\cli.vbs`, ""), nil, winOpts(), failure.Setup, -1, 0, ".vbs"},
		{"extensionless sh shim", winRes(`C:\npm\cursor-agent`, ""), nil, winOpts(), failure.Setup, -1, 0, "no extension"},
		{"only dots", winRes(`C:\npm\. .`, ""), nil, winOpts(), failure.Setup, -1, 0, "no file name"},
		{"alternate data stream", winRes(`C:\x\a.bat::$DATA`, ""), nil, winOpts(), failure.Setup, -1, 0, "alternate data stream"},
		{"invalid UTF-8 path", winRes("C:\\x\\\xfe.exe", ""), nil, winOpts(), failure.Setup, -1, 0, "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := shim.Build(tt.res, tt.args, tt.opts)
			require.Error(t, err, "plan: %+v", plan)
			assert.Equal(t, tt.kind, failure.KindOf(err))
			assert.NotContains(t, err.Error(), secret)
			if tt.text != "" {
				assert.Contains(t, err.Error(), tt.text)
			}
			var ae *shim.ArgError
			if tt.index < 0 {
				assert.False(t, errors.As(err, &ae), "unexpected argument error %v", err)
				return
			}
			require.True(t, errors.As(err, &ae), "want an *ArgError in %v", err)
			assert.Equal(t, tt.index, ae.Index)
			assert.Equal(t, tt.char, ae.Char)
			assert.Contains(t, err.Error(), "argument "+string(rune('0'+tt.index)))
		})
	}
}

// TestPowerShellPassesWhatArrives: arguments -File hands to the script as
// they are, however they look, are not refused (docs/contract.md, "Launch
// plans").
func TestPowerShellPassesWhatArrives(t *testing.T) {
	res := winRes(`C:\x\cursor-agent.ps1`, discovery.PowerShell)
	tests := []struct {
		name string
		args []string
	}{
		{"a turn", []string{"--print", "--output-format", "stream-json", "--mode", "ask", "--trust", "--model", "gpt-5", "--resume", "a-1"}},
		{"a version probe", []string{"--version"}},
		{"double dash", []string{"--", "-p"}},
		{"negative number", []string{"-1"}},
		{"the host's own switches", []string{"-NoExit", "-Command", "-File", "-EncodedCommand", "-ExecutionPolicy"}},
		{"en dash parameter", []string{"\u2013p"}},
		{"dash with inner space", []string{"-a b"}},
		{"dash with a leading space after it", []string{"- x"}},
		{"no expansion", []string{"$HOME", "`t", "$(whoami)", "@args", "%PATH%"}},
		{"backslashes", []string{`a\b`, `C:\dir\`, `\\server\share`}},
		{"space without a final backslash", []string{"two words", `C:\A User\x`}},
		{"a colon without a dash", []string{"a:b", "C:\\x", "http://x"}},
		{"true and false", []string{"true", "$false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := shim.Build(res, tt.args, winOpts())
			require.NoError(t, err)
			assert.Equal(t, tt.args, plan.Args[len(plan.Args)-len(tt.args):])
		})
	}
}

func TestBatchLengthBoundary(t *testing.T) {
	res := winRes(`C:\x\agent.cmd`, discovery.CmdShim)
	overhead := len(`cmd.exe /d /v:off /s /c ""C:\x\agent.cmd" "`)
	fits := strings.Repeat("a", shim.MaxBatchCommandLine-overhead)
	plan, err := shim.Build(res, []string{fits}, winOpts())
	require.NoError(t, err)
	assert.Len(t, plan.CommandLine, shim.MaxBatchCommandLine)
	_, err = shim.Build(res, []string{fits + "a"}, winOpts())
	assert.Equal(t, failure.Input, failure.KindOf(err))
}

func TestNativeLengthCountsUTF16(t *testing.T) {
	res := winRes(`C:\x\agent.exe`, discovery.Native)
	overhead := len(`C:\x\agent.exe `)
	// U+1F600 is two UTF-16 units.
	fits := strings.Repeat("\U0001F600", (shim.MaxCommandLine-overhead)/2) + strings.Repeat("a", (shim.MaxCommandLine-overhead)%2)
	_, err := shim.Build(res, []string{fits}, winOpts())
	require.NoError(t, err)
	_, err = shim.Build(res, []string{fits + "a"}, winOpts())
	assert.Equal(t, failure.Input, failure.KindOf(err))
}

// TestRustVectorsThroughBatch runs Rust's 33 vectors and cursorkit's own
// through the batch plan and the reference model of cmd.exe and the C
// runtime, in all three batch styles: each is refused, or arrives exactly.
func TestRustVectorsThroughBatch(t *testing.T) {
	const script = `C:\Program Files (x86)\my tools\args.cmd`
	res := winRes(script, discovery.CmdShim)
	refused := 0
	for i, args := range append(append([][]string{}, rustBatVectors...), extraBatVectors...) {
		plan, err := shim.Build(res, args, winOpts())
		if err != nil {
			refused++
			require.Equal(t, failure.Input, failure.KindOf(err), "vector %d", i)
			var ae *shim.ArgError
			require.True(t, errors.As(err, &ae))
			assert.True(t, strings.ContainsRune(`"%!^&|<>()`, ae.Char) || ae.Char < 0x20, "vector %d refused for %q", i, ae.Char)
			assert.Contains(t, args[ae.Index], string(ae.Char), "vector %d: the refused character is in the named argument", i)
			continue
		}
		require.Less(t, i, len(rustBatVectors)+len(extraBatVectors))
		for _, style := range []int{styleStar, styleNumbered, styleTilde} {
			gotScript, got, err := cmdRun(plan.CommandLine, style)
			require.NoError(t, err, "vector %d style %d: %s", i, style, plan.CommandLine)
			assert.Equal(t, script, gotScript)
			want := args
			if style == styleTilde {
				want = trimTrailingEmpty(args)
			}
			assert.Equal(t, orNil(want), orNil(got), "vector %d style %d: %s", i, style, plan.CommandLine)
		}
	}
	// Which vectors survive is part of the contract: the 8 of Rust's 33
	// with none of " % ! ^ & | < > ( ) CR LF, and all of cursorkit's own.
	assert.Equal(t, 25, refused, "refused vectors")
}

func TestNativeRoundTripThroughCRT(t *testing.T) {
	res := winRes(`C:\Program Files\x\a.exe`, discovery.Native)
	for i, args := range append(append([][]string{}, rustBatVectors...), extraBatVectors...) {
		plan, err := shim.Build(res, args, winOpts())
		require.NoError(t, err, "vector %d", i)
		assert.Equal(t, plan.Args, crtSplit(plan.CommandLine), "vector %d: %s", i, plan.CommandLine)
	}
}

func TestEscapeArg(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"a", "a"},
		{`a\b`, `a\b`},
		{`a\`, `a\`},
		{"a b", `"a b"`},
		{`a b\`, `"a b\\"`},
		{`"`, `\"`},
		{`\"`, `\\\"`},
		{`a "b" \`, `"a \"b\" \\"`},
		{"tab\there", "\"tab\there\""},
		{"&|<>", "&|<>"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, shim.EscapeArg(tt.in), "EscapeArg(%q)", tt.in)
		assert.Equal(t, []string{"x", tt.in}, crtSplit("x "+shim.EscapeArg(tt.in)))
	}
}

func TestQuoteBatchArg(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"abc-XYZ_0.9", "abc-XYZ_0.9"},
		{`#$*+-./:?@\_`, `#$*+-./:?@\_`},
		{`C:\dir\`, `"C:\dir\\"`},
		{`C:\dir\\`, `"C:\dir\\\\"`},
		{"a b", `"a b"`},
		{"a=b", `"a=b"`},
		{"a,b", `"a,b"`},
		{"a;b", `"a;b"`},
		{"[x]", `"[x]"`},
		{"é", `"é"`},
		{"~", `"~"`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, shim.QuoteBatchArg(tt.in), "QuoteBatchArg(%q)", tt.in)
	}
}

func TestExplain(t *testing.T) {
	res := winRes(`C:\x\agent.cmd`, discovery.CmdShim)
	res.Warnings = []string{"where.exe disagrees"}
	opts := winOpts()
	opts.ComSpec = ""

	ex := shim.Explain(res, []string{"ok"}, opts)
	require.NotNil(t, ex.Command)
	assert.Nil(t, ex.Refusal)
	assert.Equal(t, res, ex.Resolution)
	assert.Equal(t, []string{"where.exe disagrees", "ComSpec is not set; using the system cmd.exe instead"}, ex.Warnings)

	ex = shim.Explain(res, []string{"ok", "a&b"}, opts)
	assert.Nil(t, ex.Command)
	require.NotNil(t, ex.Refusal)
	assert.Equal(t, failure.Input, ex.Refusal.Kind)
	require.NotNil(t, ex.Refusal.Index)
	assert.Equal(t, 1, *ex.Refusal.Index)
	assert.Equal(t, "U+0026 '&'", ex.Refusal.Char)
	assert.Equal(t, []string{"where.exe disagrees"}, ex.Warnings)

	ex = shim.Explain(winRes(`C:\x\cli.js`, ""), nil, opts)
	require.NotNil(t, ex.Refusal)
	assert.Equal(t, failure.Setup, ex.Refusal.Kind)
	assert.Nil(t, ex.Refusal.Index)
	assert.Equal(t, []string{}, ex.Warnings)
}

func TestOptionsFromOS(t *testing.T) {
	opts := shim.OptionsFromOS()
	require.NotEmpty(t, opts.GOOS)
	require.NotNil(t, opts.Exists)
	if opts.GOOS == "windows" {
		assert.NotEmpty(t, opts.SystemRoot)
		assert.True(t, opts.Exists(opts.SystemRoot+`\System32\cmd.exe`))
	}
	exe, err := osExecutable()
	require.NoError(t, err)
	assert.True(t, opts.Exists(exe))
	assert.False(t, opts.Exists(exe+".missing"))
}
