package shim_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/shim"
)

// These tests run real files through real cmd.exe (on Windows, or Wine's in
// the Windows lane). The echo program is this test binary itself: TestMain
// turns it into one in the echo role.

// runDeadline bounds one child run; it is a safety net, not a wait.
const runDeadline = 60 * time.Second

// runsAtOnce is how many plans runPlans runs at a time: a run mostly waits
// for its processes (cmd.exe, the echo program) to start.
const runsAtOnce = 4

// runPlans starts each plan exactly as launch does (Program as the
// application, CommandLine verbatim) in dir, runsAtOnce at a time, and
// returns the echo program's arguments of each, in the plans' order. A run
// that fails or writes what is not NUL-terminated arguments fails t.
func runPlans(t *testing.T, dir string, plans ...shim.Command) [][]string {
	t.Helper()
	got := make([][]string, len(plans))
	errs := make([]error, len(plans))
	slots := make(chan struct{}, runsAtOnce)
	var wg sync.WaitGroup
	for i, plan := range plans {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			got[i], errs[i] = runPlan(plan, dir)
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "%s", plans[i].CommandLine)
	}
	return got
}

// runPlan is one run of runPlans.
func runPlan(plan shim.Command, dir string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, plan.Program)
	cmd.Args = plan.Args
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: plan.CommandLine}
	cmd.Dir = dir
	cmd.Env = testkit.ChildEnv(echoRole.Name)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w\nstderr: %s", err, stderr.String())
	}
	s := string(out)
	if s == "" {
		return nil, nil
	}
	if !strings.HasSuffix(s, "\x00") {
		return nil, fmt.Errorf("output %q is not NUL-terminated arguments", s)
	}
	return strings.Split(strings.TrimSuffix(s, "\x00"), "\x00"), nil
}

func echoProgram(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

// copyEcho copies the echo program to dir\name, for scripts that find
// their program beside themselves.
func copyEcho(t *testing.T, dir, name string) {
	t.Helper()
	data, err := os.ReadFile(echoProgram(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o755))
}

// awkwardDir makes a directory whose path holds spaces and parentheses.
func awkwardDir(t *testing.T, leaf string) string {
	t.Helper()
	dir := filepath.Join(testkit.TempDir(t), "Program Files (x86)", leaf)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

func assertNoFileTxt(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		_, err := os.Stat(filepath.Join(d, "file.txt"))
		assert.True(t, os.IsNotExist(err), "file.txt was created in %s", d)
	}
}

func allVectors() [][]string {
	return append(append([][]string{}, rustBatVectors...), extraBatVectors...)
}

func TestWindowsEscapingMatchesXSys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune{'a', ' ', '\t', '"', '\\', '&', '%', 'é', '日', '\'', '^'}
	inputs := []string{"", `C:\Program Files\x.exe`, `a\\b\`}
	for _, v := range allVectors() {
		inputs = append(inputs, v...)
	}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	for _, in := range inputs {
		require.Equal(t, windows.EscapeArg(in), shim.EscapeArg(in), "EscapeArg(%q)", in)
		if strings.ContainsRune(in, 0) {
			continue
		}
		argv := []string{`C:\Program Files\x.exe`, in, "tail"}
		line := shim.ComposeCommandLine(argv)
		require.Equal(t, windows.ComposeCommandLine(argv), line)
		got, err := windows.DecomposeCommandLine(line)
		require.NoError(t, err)
		require.Equal(t, argv, got, "CommandLineToArgvW(%s)", line)
	}
}

func TestNativePlanArrivesExactly(t *testing.T) {
	dir := awkwardDir(t, "native")
	copyEcho(t, dir, "echo args.exe")
	res := discovery.Resolution{Path: filepath.Join(dir, "echo args.exe"), Kind: discovery.Native}
	var plans []shim.Command
	for i, args := range allVectors() {
		plan, err := shim.Build(res, args, shim.OptionsFromOS())
		require.NoError(t, err, "vector %d", i)
		plans = append(plans, plan)
	}
	for i, got := range runPlans(t, dir, plans...) {
		assert.Equal(t, orNil(allVectors()[i]), got, "vector %d: %s", i, plans[i].CommandLine)
	}
}

// batchStyles are Rust's three test scripts, calling the echo program.
var batchStyles = []struct {
	name string
	line func(echo string) string
}{
	{"args1.bat", func(e string) string { return `@"` + e + `" %*` }},
	{"args2.bat", func(e string) string { return `@"` + e + `" %1 %2 %3 %4 %5 %6 %7 %8 %9` }},
	{"args3.cmd", func(e string) string {
		return `@"` + e + `" "%~1" "%~2" "%~3" "%~4" "%~5" "%~6" "%~7" "%~8" "%~9"`
	}},
}

// TestBatchVectorsThroughCmd: every vector, in every style, from a script
// under "Program Files (x86)", is refused before anything runs or arrives
// byte-exact, and nothing ever writes file.txt.
func TestBatchVectorsThroughCmd(t *testing.T) {
	dir := awkwardDir(t, "my tools")
	work := testkit.TempDir(t)
	echo := echoProgram(t)
	for _, style := range batchStyles {
		script := filepath.Join(dir, style.name)
		require.NoError(t, os.WriteFile(script, []byte(style.line(echo)+"\r\n"), 0o644))
		t.Run(style.name, func(t *testing.T) {
			var plans []shim.Command
			var vectors []int
			for i, args := range allVectors() {
				plan, err := shim.Build(discovery.Resolution{Path: script, Kind: discovery.CmdShim}, args, shim.OptionsFromOS())
				if err != nil {
					require.Equal(t, failure.Input, failure.KindOf(err), "vector %d", i)
					continue
				}
				require.True(t, strings.EqualFold(filepath.Base(plan.Program), "cmd.exe"))
				plans, vectors = append(plans, plan), append(vectors, i)
			}
			for j, got := range runPlans(t, work, plans...) {
				i := vectors[j]
				want := allVectors()[i]
				if style.name == "args3.cmd" {
					want, got = trimTrailingEmpty(want), trimTrailingEmpty(got)
				}
				assert.Equal(t, orNil(want), orNil(got), "vector %d: %s", i, plans[j].CommandLine)
			}
			assert.Equal(t, 8+len(extraBatVectors), len(plans))
			assertNoFileTxt(t, work, dir)
		})
	}
}

// TestTrailingDotsStillGoThroughCmd: a batch file named with trailing dots
// and spaces (which Windows ignores when opening it) is still run by
// cmd.exe with validated arguments, never started directly.
func TestTrailingDotsStillGoThroughCmd(t *testing.T) {
	dir := awkwardDir(t, "dots")
	work := testkit.TempDir(t)
	script := filepath.Join(dir, "args1.bat")
	require.NoError(t, os.WriteFile(script, []byte(batchStyles[0].line(echoProgram(t))+"\r\n"), 0o644))
	suffixes := []string{".", " ", ". .", " .. ", "...", "  "}
	var plans []shim.Command
	for _, suffix := range suffixes {
		res := discovery.Resolution{Path: script + suffix, Kind: discovery.Native}
		plan, err := shim.Build(res, []string{"a", "b c"}, shim.OptionsFromOS())
		require.NoError(t, err, "suffix %q", suffix)
		assert.Equal(t, discovery.CmdShim, plan.Kind)
		assert.True(t, strings.EqualFold(filepath.Base(plan.Program), "cmd.exe"), "suffix %q ran %s", suffix, plan.Program)
		plans = append(plans, plan)

		_, err = shim.Build(res, []string{"&echo pwned>file.txt"}, shim.OptionsFromOS())
		assert.Equal(t, failure.Input, failure.KindOf(err))
	}
	for i, got := range runPlans(t, work, plans...) {
		assert.Equal(t, []string{"a", "b c"}, got, "suffix %q", suffixes[i])
	}
	assertNoFileTxt(t, work, dir)
}

// cmdShimVersions are npm cmd-shim releases whose .cmd templates differ:
// 9.0.2 sets PATHEXT on the final line, 6.0.3 inside the ELSE block.
var cmdShimVersions = []string{"9.0.2", "6.0.3"}

// wineGuard is the part of cmd-shim's final .cmd line that Wine's cmd.exe
// cannot run: it ends the whole batch file at a goto to an undefined label,
// where Windows runs the || branch. The guard only keeps Ctrl+C from asking
// "Terminate batch job (Y/N)?" (npm/cli#969).
const wineGuard = "goto #_undefined_# 2>NUL || "

// TestNpmCmdShims runs .cmd files written by npm's own cmd-shim (see
// scripts/npm-cmd-shim-fixtures) from a directory with spaces and
// parentheses, with the echo program standing in for node.exe and for the
// shimmed .exe. The shebang shim runs verbatim on Windows; under Wine it
// runs with wineGuard removed and otherwise unchanged.
func TestNpmCmdShims(t *testing.T) {
	for _, version := range cmdShimVersions {
		t.Run(version, func(t *testing.T) {
			fixtures := filepath.Join("..", ".cache", "cmd-shim", version, "shims")
			if _, err := os.Stat(filepath.Join(fixtures, "envnode.cmd")); err != nil {
				msg := fmt.Sprintf("npm cmd-shim %s fixtures are missing from %s; run scripts/npm-cmd-shim-fixtures first", version, fixtures)
				if os.Getenv("CI") != "" {
					t.Fatal(msg)
				}
				t.Skip(msg)
			}
			dir := awkwardDir(t, "npm "+version)
			work := testkit.TempDir(t)
			read := func(name string) string {
				data, err := os.ReadFile(filepath.Join(fixtures, name))
				require.NoError(t, err)
				return string(data)
			}
			envnode, noshebang := read("envnode.cmd"), read("noshebang.cmd")
			// The two releases' templates differ where the research says.
			lines := strings.Split(strings.TrimRight(envnode, "\r\n"), "\r\n")
			require.Contains(t, lines[len(lines)-1], wineGuard)
			assert.Equal(t, version == "9.0.2", strings.Contains(lines[len(lines)-1], "set PATHEXT=%PATHEXT:;.JS;=;%"), "final line: %s", lines[len(lines)-1])
			files := map[string]string{
				"envnode.cmd":         envnode,
				"envnode-noguard.cmd": strings.Replace(envnode, wineGuard, "", 1),
				"noshebang.cmd":       noshebang,
			}
			for name, text := range files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
			}
			copyEcho(t, dir, "node.exe")
			copyEcho(t, dir, "echoargs.exe")
			for _, name := range []string{"noshebang.cmd", "envnode.cmd", "envnode-noguard.cmd"} {
				t.Run(name, func(t *testing.T) {
					if name == "envnode.cmd" {
						testkit.SkipIfWine(t, "cmd.exe ends a batch file at a goto to an undefined label, so cmd-shim's final line never runs (envnode-noguard.cmd covers the rest)")
					}
					var plans []shim.Command
					var vectors []int
					for i, args := range allVectors() {
						res := discovery.Resolution{Path: filepath.Join(dir, name), Kind: discovery.CmdShim}
						plan, err := shim.Build(res, args, shim.OptionsFromOS())
						if err != nil {
							require.Equal(t, failure.Input, failure.KindOf(err), "vector %d", i)
							continue
						}
						plans, vectors = append(plans, plan), append(vectors, i)
					}
					for j, got := range runPlans(t, work, plans...) {
						i := vectors[j]
						if name != "noshebang.cmd" {
							// node.exe gets the script first: "%dp0%\echo.js".
							require.NotEmpty(t, got, "vector %d: %s", i, plans[j].CommandLine)
							assert.True(t, strings.HasPrefix(got[0], dir) && strings.HasSuffix(got[0], `\echo.js`), "script argument %q", got[0])
							got = got[1:]
						}
						assert.Equal(t, orNil(allVectors()[i]), orNil(got), "vector %d: %s", i, plans[j].CommandLine)
					}
					assert.Equal(t, 8+len(extraBatVectors), len(plans))
					assertNoFileTxt(t, work, dir)
				})
			}
		})
	}
}

// TestFileTxtCheckSeesInjection is the control for assertNoFileTxt: Go's
// default os/exec handling of a batch file (no validation, C runtime
// quoting) lets the Rust vector ">file.txt"-style argument through cmd.exe,
// and the check notices.
func TestFileTxtCheckSeesInjection(t *testing.T) {
	dir := awkwardDir(t, "control")
	work := testkit.TempDir(t)
	script := filepath.Join(dir, "args1.bat")
	require.NoError(t, os.WriteFile(script, []byte(batchStyles[0].line(echoProgram(t))+"\r\n"), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, "x", "&echo", "injected>file.txt")
	cmd.Dir = work
	cmd.Env = testkit.ChildEnv(echoRole.Name)
	_ = cmd.Run() // the injected command's own status does not matter
	_, err := os.Stat(filepath.Join(work, "file.txt"))
	require.NoError(t, err, "the unvalidated launch should have created file.txt")
}

// TestPowerShellPlanArrivesExactly runs a .ps1 through its plan's host;
// the script writes its $args NUL-separated. ASCII vectors only: the host
// writes through the console code page.
func TestPowerShellPlanArrivesExactly(t *testing.T) {
	testkit.SkipIfWine(t, "powershell.exe is a stub")
	dir := awkwardDir(t, "ps1")
	script := filepath.Join(dir, "echo args.ps1")
	body := "foreach ($a in $args) { [Console]::Out.Write([string]$a + [char]0) }\r\n"
	require.NoError(t, os.WriteFile(script, []byte(body), 0o644))
	// A turn's arguments, and the dash shapes -File passes on as they are.
	dashVectors := [][]string{
		{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust", "--model", "gpt-5", "--resume", "a-1"},
		{"--", "-1", "-p", "--force", "-NoExit", "-Command", "-File", "x", "-a b", "$HOME", "`t"},
	}
	var plans []shim.Command
	var sent [][]string
	for i, args := range append(allVectors(), dashVectors...) {
		if strings.IndexFunc(strings.Join(args, ""), func(r rune) bool { return r > 0x7e }) >= 0 {
			continue
		}
		plan, err := shim.Build(discovery.Resolution{Path: script, Kind: discovery.PowerShell}, args, shim.OptionsFromOS())
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err), "vector %d", i)
			continue
		}
		plans, sent = append(plans, plan), append(sent, args)
	}
	require.NotEmpty(t, plans)
	for j, got := range runPlans(t, dir, plans...) {
		assert.Equal(t, orNil(sent[j]), got, "%s", plans[j].CommandLine)
	}
}
