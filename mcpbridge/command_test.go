package mcpbridge

import (
	"context"
	"encoding/json/jsontext"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// helperEnv makes the test binary the command tools' program
// (TestHelperCommand), with the mode and arguments after "--".
const helperEnv = "CURSORKIT_MCPBRIDGE_TEST_HELPER"

// TestHelperCommand is not a test: it is the program of the command tools
// these tests run (the test binary itself, so that it runs on every OS),
// and returns at once unless helperEnv is set.
func TestHelperCommand(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	os.Exit(helperMain(flag.Args()))
}

// helperMain plays one mode of the tools' program.
func helperMain(args []string) int {
	switch args[0] {
	case "echo": // the input, as the result
		_, _ = io.Copy(os.Stdout, os.Stdin)
	case "exit": // args: code; prints on both streams first
		fmt.Print("partial " + fileSecret)
		fmt.Fprint(os.Stderr, "stderr "+fileSecret)
		code, _ := strconv.Atoi(args[1])
		return code
	case "cwd":
		dir, _ := os.Getwd()
		fmt.Print(dir)
	case "bytes": // args: how many bytes, then (with a third) hang
		n, _ := strconv.Atoi(args[1])
		line := strings.Repeat("a", 1023) + "\n"
		for ; n >= len(line); n -= len(line) {
			fmt.Print(line)
		}
		fmt.Print(line[:n])
		if len(args) > 2 {
			testkit.SleepForever()
		}
	case "invalid-utf8":
		fmt.Print("ok \xff")
	case "tree": // args: a file for the PIDs; starts a leaf and hangs
		leaf := exec.Command(os.Args[0], append([]string{os.Args[1], "--", "leaf"}, args[2:]...)...)
		if err := leaf.Start(); err != nil {
			return 3
		}
		pids := fmt.Sprintf("%d %d\n", os.Getpid(), leaf.Process.Pid)
		if os.WriteFile(args[1]+".tmp", []byte(pids), 0o600) != nil || os.Rename(args[1]+".tmp", args[1]) != nil {
			return 3
		}
		testkit.SleepForever()
	case "leaf":
		testkit.SleepForever()
	}
	return 0
}

// helperSpec is a tool whose program is this test binary in mode.
func helperSpec(t *testing.T, name string, timeout time.Duration, mode ...string) CommandSpec {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return CommandSpec{
		Name: name, InputSchema: jsontext.Value(`{"type":"object"}`), Timeout: timeout,
		Command: append([]string{exe, "-test.run=^TestHelperCommand$", "--"}, mode...),
	}
}

// helperOptions runs the helper in its mode, race detector or not, with
// no wait at its exit.
func helperOptions() CommandOptions {
	return CommandOptions{Env: append(os.Environ(), helperEnv+"=1", "GORACE=atexit_sleep_ms=0")}
}

func newHelperSet(t *testing.T, opts CommandOptions, specs ...CommandSpec) *CommandSet {
	t.Helper()
	s, err := NewCommandSet(context.Background(), specs, opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// TestACommandToolAnswersWithItsStdout: the call's input is the program's
// stdin, its stdout the result; it runs in Dir.
func TestACommandToolAnswersWithItsStdout(t *testing.T) {
	dir := testkit.TempDir(t)
	opts := helperOptions()
	opts.Dir = dir
	s := newHelperSet(t, opts,
		helperSpec(t, "echo", 0, "echo"), helperSpec(t, "cwd", 0, "cwd"), helperSpec(t, "bad_text", 0, "invalid-utf8"),
		helperSpec(t, "most", 0, "bytes", strconv.Itoa(MaxCommandOutput)))
	tools := s.Tools()
	require.Len(t, tools, 4)
	assert.Equal(t, "echo", tools[0].Name)
	assert.Equal(t, DefaultCallTimeout, cmpDuration(tools[0].Timeout, DefaultCallTimeout))

	text, failed := tools[0].call(context.Background(), jsontext.Value(`{"word":"héllo"}`))
	assert.False(t, failed, text)
	assert.Equal(t, `{"word":"héllo"}`, text)

	text, failed = tools[1].call(context.Background(), jsontext.Value(`{}`))
	assert.False(t, failed, text)
	want, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	got, err := filepath.EvalSymlinks(text)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	text, failed = tools[2].call(context.Background(), jsontext.Value(`{}`))
	assert.False(t, failed, text)
	assert.Equal(t, "ok \uFFFD", text)

	text, failed = tools[3].call(context.Background(), jsontext.Value(`{}`))
	assert.False(t, failed)
	assert.Len(t, text, MaxCommandOutput, "exactly the bound is an answer")
}

// TestACommandToolThatFailsIsAToolError: a non-zero exit, an output over
// the bound and a timeout are tool errors, short, naming the tool and what
// happened, never quoting the output; the program's tree is gone after
// each.
func TestACommandToolThatFailsIsAToolError(t *testing.T) {
	tests := []struct {
		name string
		spec func(t *testing.T) CommandSpec
		msg  string
		kind failure.Kind
	}{
		{"a non-zero exit", func(t *testing.T) CommandSpec { return helperSpec(t, "failing", 0, "exit", "3") },
			"tool failing failed: exit code 3", failure.Process},
		{"an output over the bound", func(t *testing.T) CommandSpec {
			return helperSpec(t, "chatty", 0, "bytes", strconv.Itoa(2*MaxCommandOutput), "hang")
		}, "tool chatty printed more than 1048576 bytes; it was stopped", failure.Process},
		{"a timeout", func(t *testing.T) CommandSpec { return helperSpec(t, "slow", 200*time.Millisecond, "leaf") },
			"tool slow did not answer within 200ms; it was stopped", failure.Timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec(t)
			s := newHelperSet(t, helperOptions(), spec)
			// Handle alone keeps to the tool's timeout: no deadline here.
			start := time.Now()
			_, err := s.Tools()[0].Handle(context.Background(), jsontext.Value(`{}`))
			require.Error(t, err)
			assert.Equal(t, tt.kind, failure.KindOf(err))
			assert.Equal(t, tt.msg, err.Error())
			assert.Less(t, time.Since(start), 30*time.Second)

			// Through the bridge's call, the same message is the tool error.
			text, failed := s.Tools()[0].call(context.Background(), jsontext.Value(`{}`))
			assert.True(t, failed)
			assert.NotContains(t, text, fileSecret)
			assert.Less(t, len(text), 120, "a short message: %q", text)
		})
	}
}

// TestACommandToolsTreeIsKilledAtItsDeadline: the program and what it
// started are killed when the call's timeout passes, not at Close.
func TestACommandToolsTreeIsKilledAtItsDeadline(t *testing.T) {
	pidFile := filepath.Join(testkit.TempDir(t), "pids")
	w := testkit.NewWatch(t)
	s := newHelperSet(t, helperOptions(), helperSpec(t, "tree", 5*time.Second, "tree", pidFile, w.Marker()))
	done := make(chan string, 1)
	go func() {
		text, _ := s.Tools()[0].call(context.Background(), jsontext.Value(`{}`))
		done <- text
	}()
	w.Add(treePIDs(t, pidFile)...)
	select {
	case text := <-done:
		assert.Contains(t, text, "tool tree did not answer within 5s")
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end at its deadline")
	}
	w.RequireGone(10 * time.Second)
}

// TestCloseEndsEveryCall: Close kills a call's tree and waits for it; a
// call after Close fails at once, running nothing.
func TestCloseEndsEveryCall(t *testing.T) {
	pidFile := filepath.Join(testkit.TempDir(t), "pids")
	w := testkit.NewWatch(t)
	s, err := NewCommandSet(context.Background(), []CommandSpec{helperSpec(t, "tree", 0, "tree", pidFile, w.Marker())}, helperOptions())
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := s.Tools()[0].Handle(context.Background(), jsontext.Value(`{}`))
		done <- err
	}()
	w.Add(treePIDs(t, pidFile)...)
	require.NoError(t, s.Close())
	w.RequireGone(10 * time.Second)
	select {
	case err := <-done:
		assert.Equal(t, failure.Cancelled, failure.KindOf(err))
		assert.Equal(t, "tool tree was cancelled", err.Error())
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end at Close")
	}

	_, err = s.Tools()[0].Handle(context.Background(), jsontext.Value(`{}`))
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
	require.NoError(t, s.Close(), "a second Close does nothing")
}

// TestARelativeProgramIsFoundFromTheToolsFile: ReadToolsFile finds
// "./prog" next to the file, whatever the working directory, and runs it
// in Dir.
func TestARelativeProgramIsFoundFromTheToolsFile(t *testing.T) {
	dir := testkit.TempDir(t)
	prog := filepath.Base(testkit.Install(t, filepath.Join(dir, "bin"), "lookup", "unused"))
	path := filepath.Join(dir, "tools.json")
	body := toolsJSON(toolJSON(map[string]string{
		"command": `["./bin/` + prog + `", "-test.run=^TestHelperCommand$", "--", "echo"]`,
	}))
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	s, err := ReadToolsFile(context.Background(), path, helperOptions())
	require.NoError(t, err)
	defer s.Close()
	text, failed := s.Tools()[0].call(context.Background(), jsontext.Value(`{"word":"w"}`))
	assert.False(t, failed, text)
	assert.Equal(t, `{"word":"w"}`, text)
}

// TestACommandToolOfABatchFile: on Windows a .cmd tool runs through
// cmd.exe with its input on stdin, like every program cursorkit starts.
func TestACommandToolOfABatchFile(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("batch files are Windows'")
	}
	dir := testkit.TempDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "answer.cmd"), []byte("@echo off\r\necho answered %1\r\n"), 0o700))
	s := newHelperSet(t, CommandOptions{ProgramDir: dir},
		CommandSpec{Name: "answer", InputSchema: jsontext.Value(`{"type":"object"}`), Command: []string{`.\answer.cmd`, "yes"}})
	text, failed := s.Tools()[0].call(context.Background(), jsontext.Value(`{}`))
	assert.False(t, failed, text)
	assert.Equal(t, "answered yes", strings.TrimSpace(text))
}

// treePIDs waits for the "tree" helper's pid file and returns the PIDs in
// it, the program's and its child's. The file is read until a read
// succeeds: on Windows the helper's rename may still hold it for a moment
// (a sharing violation).
func treePIDs(t *testing.T, pidFile string) []int {
	t.Helper()
	var pids []int
	testkit.Eventually(t, "the program and its child running", 20*time.Second, func() bool {
		data, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pids = pids[:0]
		for _, f := range strings.Fields(string(data)) {
			pid, _ := strconv.Atoi(f)
			pids = append(pids, pid)
		}
		return len(pids) == 2
	})
	return pids
}
