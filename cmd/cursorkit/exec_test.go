package main

import (
	"bytes"
	"context"
	"encoding/json/v2"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// execWait bounds every wait of the exec tests.
const execWait = 20 * time.Second

// execRoles are the behaviours the test binary takes on as a child of
// `cursorkit exec` (TestMain registers them; a test selects one with
// testkit.RoleEnv); os.Args[1:] are their parameters.
func execRoles() []testkit.Role {
	var roles []testkit.Role
	for _, name := range []string{"exit", "echo", "silent", "ready-then-silent", "chatty", "tree", "gen", "kill-self", "clobber"} {
		roles = append(roles, testkit.Role{Name: name, Run: func(args []string) int { return execChild(name, args) }})
	}
	return roles
}

// execChild implements the behaviours the exec tests start.
func execChild(mode string, args []string) int {
	switch mode {
	case "exit": // args: code, stdout text, stderr text
		code, _ := strconv.Atoi(args[0])
		fmt.Fprint(os.Stdout, args[1])
		fmt.Fprint(os.Stderr, args[2])
		return code
	case "echo":
		_, _ = io.Copy(os.Stdout, os.Stdin)
		return 0
	case "silent":
		testkit.SleepForever()
	case "ready-then-silent":
		fmt.Println("ready")
		testkit.SleepForever()
	case "chatty":
		for i := 0; ; i++ {
			fmt.Printf("{\"n\":%d}\n", i)
			time.Sleep(5 * time.Millisecond)
		}
	case "tree": // args: marker, then grandchild kinds; POSIX "setsid" escapes the group
		for _, kind := range args[1:] {
			exe, _ := os.Executable()
			cmd := exec.Command(exe, args[0])
			cmd.Env = testkit.ChildEnv("silent")
			execGrandchildAttr(cmd, kind)
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Printf("child %d\n", cmd.Process.Pid)
		}
		fmt.Println("all-ready")
		testkit.SleepForever()
	case "gen": // args: bytes of 500-byte NDJSON lines to write
		total, _ := strconv.ParseInt(args[0], 10, 64)
		line := []byte(`{"type":"assistant","text":"` + strings.Repeat("x", 500-31) + `"}` + "\n")
		block := bytes.Repeat(line, 128)
		for n := total / int64(len(line)); n > 0; {
			k := min(n, 128)
			if _, err := os.Stdout.Write(block[:k*int64(len(line))]); err != nil {
				return 1
			}
			n -= k
		}
		return 0
	case "kill-self": // dies of a signal nobody else sent
		return execKillSelf()
	case "clobber": // args: a path to replace with a directory, the exit code
		code, _ := strconv.Atoi(args[1])
		if err := os.Remove(args[0]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := os.Mkdir(args[0], 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return code
	}
	fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
	return 2
}

// watchedBuffer is a goroutine-safe buffer that signals when its content
// first contains a given text.
type watchedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func newWatchedBuffer(want string) *watchedBuffer {
	return &watchedBuffer{want: want, seen: make(chan struct{})}
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.want != "" && strings.Contains(w.buf.String(), w.want) {
		w.want = ""
		close(w.seen)
	}
	return n, err
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runExecCLI runs `cursorkit exec` in-process with the test binary in mode
// as TARGET (when target is empty) and returns its exit code and streams.
func runExecCLI(t *testing.T, ctx context.Context, mode, stdin string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv(testkit.RoleEnv, mode)
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"exec"}, args...), strings.NewReader(stdin), &out, &errOut, os.Getenv)
	}()
	select {
	case code := <-done:
		return code, out.String(), errOut.String()
	case <-time.After(execWait):
		t.Fatalf("exec did not return within %s", execWait)
	}
	return 0, "", ""
}

func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

func TestExecExitCodes(t *testing.T) {
	exe := testBinary(t)
	dir := testkit.TempDir(t)
	notRunnable := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notRunnable, []byte("not a program"), 0o644))
	tests := []struct {
		name       string
		mode       string
		stdin      string
		args       []string
		code       int
		stdout     string // exact, when not empty
		stderrHas  string
		stdoutHas  string
		notWindows bool
	}{
		{name: "own exit code zero, output intact", mode: "exit", args: []string{"--", exe, "0", "a\r\nb\n\nlast", "err\r\n"}, code: 0, stdout: "a\r\nb\n\nlast", stderrHas: "err\r\n"},
		{name: "own exit code", mode: "exit", args: []string{"--", exe, "3", "x\n", ""}, code: 3, stdout: "x\n"},
		{name: "stdin passes through", mode: "echo", stdin: "the prompt\nmore", args: []string{"--", exe}, code: 0, stdout: "the prompt\nmore"},
		{name: "first-line deadline", mode: "silent", args: []string{"--first-line-timeout", "100ms", "--grace", "5s", "--", exe}, code: 124, stderrHas: "first-line deadline"},
		{name: "inactivity deadline", mode: "ready-then-silent", args: []string{"--first-line-timeout", "20s", "--idle-timeout", "100ms", "--", exe}, code: 124, stdoutHas: "ready"},
		{name: "total deadline", mode: "chatty", args: []string{"--timeout", "3s", "--idle-timeout", "20s", "--grace", "0", "--", exe}, code: 124, stdoutHas: `{"n":0}`},
		{name: "not found", mode: "exit", args: []string{"--", filepath.Join(dir, "no-such-program")}, code: 127},
		{name: "bare name not found", mode: "exit", args: []string{"--", "cursorkit-no-such-program-anywhere"}, code: 127},
		{name: "found but cannot run", mode: "exit", args: []string{"--", notRunnable}, code: 126},
		{name: "a directory cannot run", mode: "exit", args: []string{"--", dir}, code: 126, stderrHas: "found but cannot run"},
		{name: "no target", mode: "exit", args: nil, code: 125, stderrHas: "needs a TARGET"},
		{name: "bad flag", mode: "exit", args: []string{"--nope", "--", exe}, code: 125},
		{name: "negative duration", mode: "exit", args: []string{"--timeout", "-1s", "--", exe}, code: 125},
		{name: "missing cwd", mode: "exit", args: []string{"--cwd", filepath.Join(dir, "missing"), "--", exe}, code: 125},
		{name: "help", mode: "exit", args: []string{"--help"}, code: 0, stdoutHas: "usage: cursorkit exec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runExecCLI(t, context.Background(), tt.mode, tt.stdin, tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			if tt.stdout != "" {
				assert.Equal(t, tt.stdout, stdout)
			}
			assert.Contains(t, stdout, tt.stdoutHas)
			assert.Contains(t, stderr, tt.stderrHas)
		})
	}
}

func TestExecDryRunPrintsThePlan(t *testing.T) {
	exe := testBinary(t)
	code, stdout, stderr := runExecCLI(t, context.Background(), "exit", "", "--dry-run", "--", exe, "a b", "c")
	require.Equal(t, 0, code, stderr)
	var got struct {
		Resolution struct {
			Path string `json:"path"`
		} `json:"resolution"`
		Plan struct {
			Program     string   `json:"program"`
			Args        []string `json:"args"`
			CommandLine string   `json:"commandLine"`
		} `json:"plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	assert.Equal(t, got.Resolution.Path, got.Plan.Program)
	assert.Equal(t, []string{got.Plan.Program, "a b", "c"}, got.Plan.Args)
	assert.Contains(t, got.Plan.CommandLine, "c")
}

func TestExecReport(t *testing.T) {
	exe := testBinary(t)
	report := filepath.Join(testkit.TempDir(t), "report.json")
	code, _, stderr := runExecCLI(t, context.Background(), "ready-then-silent", "", "--first-line-timeout", "20s", "--idle-timeout", "100ms", "--report", report, "--", exe)
	require.Equal(t, 124, code, stderr)
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	var r map[string]any
	require.NoError(t, json.Unmarshal(data, &r))
	for _, field := range []string{"outcome", "exitCode", "signal", "durationMs", "lines", "bytes", "warnings"} {
		assert.Contains(t, r, field)
	}
	assert.Equal(t, "idle_timeout", r["outcome"])
	assert.EqualValues(t, 1, r["lines"])
	assert.EqualValues(t, len("ready\n"), r["bytes"])
	assert.EqualValues(t, 124, r["cursorkitExitCode"])

	code, _, _ = runExecCLI(t, context.Background(), "exit", "", "--report", report, "--", filepath.Join(testkit.TempDir(t), "absent"))
	assert.Equal(t, 127, code)
	data, err = os.ReadFile(report)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &r))
	assert.Equal(t, "spawn_failed", r["outcome"])
	assert.Equal(t, "missing_cli", r["kind"])

}

// TestExecReportThatCannotBeWritten: a --report path that cannot be written
// is found before the child starts (125, nothing run); one that fails only
// when the run is over is said on stderr and the child's code stays.
func TestExecReportThatCannotBeWritten(t *testing.T) {
	exe := testBinary(t)
	dir := testkit.TempDir(t)
	for name, report := range map[string]string{
		"missing directory": filepath.Join(dir, "no", "dir", "r.json"),
		"a directory":       dir,
	} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runExecCLI(t, context.Background(), "exit", "", "--report", report, "--", exe, "3", "ran", "")
			assert.Equal(t, 125, code)
			assert.Empty(t, stdout, "the child never started")
			assert.Contains(t, stderr, "--report")
		})
	}
	t.Run("failing after the run keeps the child's code", func(t *testing.T) {
		report := filepath.Join(dir, "clobbered.json")
		code, _, stderr := runExecCLI(t, context.Background(), "clobber", "", "--report", report, "--", exe, report, "3")
		assert.Equal(t, 3, code, "stderr: %s", stderr)
		assert.Contains(t, stderr, "cannot write the report")
	})
	t.Run("an existing report file is checked, then replaced", func(t *testing.T) {
		report := filepath.Join(dir, "existing.json")
		require.NoError(t, os.WriteFile(report, []byte("old"), 0o644))
		code, _, stderr := runExecCLI(t, context.Background(), "exit", "", "--report", report, "--", exe, "0", "", "")
		require.Equal(t, 0, code, stderr)
		data, err := os.ReadFile(report)
		require.NoError(t, err)
		assert.Contains(t, string(data), `"outcome": "exited"`)
	})
}

// TestExecCancelStopsTheTree: SIGINT or SIGTERM to cursorkit cancel the
// command's context; exec stops the child's whole tree and exits 130.
func TestExecCancelStopsTheTree(t *testing.T) {
	exe := testBinary(t)
	w := testkit.NewWatch(t)
	marker := w.Marker()
	t.Setenv(testkit.RoleEnv, "tree")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newWatchedBuffer("all-ready")
	var errOut bytes.Buffer
	done := make(chan int, 1)
	args := append([]string{"exec", "--grace", "2s", "--", exe, marker}, execTreeKinds...)
	go func() { done <- run(ctx, args, strings.NewReader(""), out, &errOut, os.Getenv) }()
	select {
	case <-out.seen:
	case code := <-done:
		t.Fatalf("exec ended before the tree was ready: %d %s", code, errOut.String())
	case <-time.After(execWait):
		t.Fatal("the tree never got ready")
	}
	pids := execChildPIDs(t, out.String())
	require.Len(t, pids, len(execTreeKinds))
	w.Add(pids...)
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 130, code)
	case <-time.After(execWait):
		t.Fatal("exec did not return after the cancel")
	}
	w.RequireGone(execWait)
}

// execChildPIDs parses the "child PID" lines of the tree mode.
func execChildPIDs(t *testing.T, out string) []int {
	t.Helper()
	var pids []int
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "child "); ok {
			pid, err := strconv.Atoi(rest)
			require.NoError(t, err)
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestExecExitCodeMapping(t *testing.T) {
	if runtime.GOOS == "windows" {
		return
	}
	code, _, stderr := runExecCLI(t, context.Background(), "kill-self", "", "--", testBinary(t))
	assert.Equal(t, 128+9, code, "died of SIGKILL that cursorkit did not send: %s", stderr)
}

// BenchmarkExecThroughput is P1 end to end: `cursorkit exec -- gen` with
// stdout to the null device, against `gen | cat` (the generator's pipe
// copied to the null device), 100 MB of 500-byte NDJSON lines each, in the
// same run. Medians of seven alternating runs; the goal is exec/pipe >= 0.8.
func BenchmarkExecThroughput(b *testing.B) {
	const total = 100_000_000
	exe, err := os.Executable()
	require.NoError(b, err)
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(b, err)
	defer devNull.Close()
	b.Setenv(testkit.RoleEnv, "gen")
	size := strconv.Itoa(total)
	timed := func(f func()) time.Duration {
		t0 := time.Now()
		f()
		return time.Since(t0)
	}
	rawPipe := func() {
		cmd := exec.Command(exe, size)
		out, err := cmd.StdoutPipe()
		require.NoError(b, err)
		require.NoError(b, cmd.Start())
		_, err = io.Copy(devNull, out)
		require.NoError(b, err)
		require.NoError(b, cmd.Wait())
	}
	supervised := func() {
		code := run(context.Background(), []string{"exec", "--idle-timeout", "120s", "--", exe, size}, strings.NewReader(""), devNull, io.Discard, os.Getenv)
		require.Equal(b, 0, code)
	}
	// Alternate the two so load from other processes hits both alike.
	var pipes, execs []time.Duration
	for b.Loop() {
		for range 7 {
			pipes = append(pipes, timed(rawPipe))
			execs = append(execs, timed(supervised))
		}
	}
	slices.Sort(pipes)
	slices.Sort(execs)
	pipe, viaExec := pipes[len(pipes)/2], execs[len(execs)/2]
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(total/1e6/pipe.Seconds(), "pipe-MB/s")
	b.ReportMetric(total/1e6/viaExec.Seconds(), "exec-MB/s")
	b.ReportMetric(pipe.Seconds()/viaExec.Seconds(), "exec/pipe")
}

// TestExecPassesHugeLinesIntact: a stdout line over supervise's 16 MiB
// line maximum still passes through byte for byte.
func TestExecPassesHugeLinesIntact(t *testing.T) {
	exe := testBinary(t)
	input := "first\n" + strings.Repeat("z", 16<<20+3<<20) + "\r\nlast"
	code, stdout, stderr := runExecCLI(t, context.Background(), "echo", input, "--", exe)
	require.Equal(t, 0, code, "stderr: %s", stderr)
	assert.True(t, stdout == input, "stdout differs from the child's output (len %d vs %d)", len(stdout), len(input))
	assert.Empty(t, stderr)
}

// TestExecRunsAProgramNamedAgent: exec is a generic supervisor, so the bare
// name agent is an ordinary program found on PATH (Cursor's ambiguity rule
// for that name belongs to run, status and the other Cursor commands).
func TestExecRunsAProgramNamedAgent(t *testing.T) {
	dir := testkit.TempDir(t)
	testkit.Install(t, dir, "agent", "exit")
	t.Setenv("PATH", dir)
	code, stdout, stderr := runExecCLI(t, context.Background(), "exit", "", "--", "agent", "0", "hello from agent\n", "")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	assert.Equal(t, "hello from agent\n", stdout)
}
