package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// runEvents splits `run --json` output into its events and checks that the
// last one is the outcome.
func runEvents(t *testing.T, stdout string) (events []map[string]any, outcome map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "every stdout line is one JSON event")
		events = append(events, ev)
	}
	require.NotEmpty(t, events)
	outcome = events[len(events)-1]
	require.Equal(t, "outcome", outcome["type"])
	return events[:len(events)-1], outcome
}

func textOf(events []map[string]any) string {
	var b strings.Builder
	for _, ev := range events {
		if ev["type"] == "text" {
			b.WriteString(ev["text"].(string))
		}
	}
	return b.String()
}

func warningCodes(outcome map[string]any) []string {
	var codes []string
	for _, w := range outcome["warnings"].([]any) {
		codes = append(codes, w.(map[string]any)["code"].(string))
	}
	return codes
}

func TestRunScenarios(t *testing.T) {
	tests := []struct {
		name     string
		scenario string
		flags    []string
		code     int
		kind     string // the outcome's kind; "" for done
		check    func(t *testing.T, events []map[string]any, outcome map[string]any)
	}{
		{name: "full turn", scenario: agentsim.ScenarioNormal, code: 0, check: func(t *testing.T, events []map[string]any, outcome map[string]any) {
			assert.Equal(t, agentsim.TextBeforeTool+agentsim.TextAfterTool, textOf(events))
			assert.Equal(t, "done", outcome["status"])
			assert.NotEmpty(t, outcome["sessionId"])
			types := map[string]int{}
			for _, ev := range events {
				types[ev["type"].(string)]++
			}
			assert.Equal(t, 1, types["init"])
			assert.Equal(t, 1, types["result"])
			assert.Positive(t, types["thinking"])
			assert.Equal(t, 3, types["tool_started"])
			assert.Equal(t, 3, types["tool_completed"])
			var callIDs []string
			for _, ev := range events {
				if ev["type"] == "tool_started" {
					callIDs = append(callIDs, ev["callId"].(string))
				}
			}
			assert.Contains(t, callIDs, agentsim.CallIDRead, "opaque multi-line call id kept")
			usage := outcome["usage"].(map[string]any)
			assert.Equal(t, true, usage["reported"])
		}},
		{name: "duplicates emitted once", scenario: agentsim.ScenarioDuplicateAssistant, code: 0, check: func(t *testing.T, events []map[string]any, _ map[string]any) {
			assert.Equal(t, agentsim.TextBeforeTool+agentsim.TextAfterTool, textOf(events))
		}},
		{name: "partial output deltas and final copy emitted once", scenario: agentsim.ScenarioNormal, flags: []string{"--partial"}, code: 0,
			check: func(t *testing.T, events []map[string]any, _ map[string]any) {
				assert.Equal(t, agentsim.TextBeforeTool+agentsim.TextAfterTool, textOf(events))
			}},
		{name: "banner is a warning", scenario: agentsim.ScenarioBanner, code: 0, check: func(t *testing.T, _ []map[string]any, outcome map[string]any) {
			assert.Contains(t, warningCodes(outcome), "banner")
		}},
		{name: "CRLF", scenario: agentsim.ScenarioCRLF, code: 0},
		{name: "last line without newline", scenario: agentsim.ScenarioNoFinalNewline, code: 0},
		{name: "10 MiB line", scenario: agentsim.ScenarioBigLine, code: 0, check: func(t *testing.T, events []map[string]any, _ map[string]any) {
			assert.GreaterOrEqual(t, len(textOf(events)), agentsim.DefaultLineBytes-1024)
		}},
		{name: "unknown event passes through", scenario: agentsim.ScenarioUnknownEvent, code: 0, check: func(t *testing.T, events []map[string]any, _ map[string]any) {
			found := false
			for _, ev := range events {
				found = found || ev["type"] == "unknown"
			}
			assert.True(t, found)
		}},
		{name: "linger after result is a late close", scenario: agentsim.ScenarioLinger, flags: []string{"--exit-grace", "300ms"}, code: 0,
			check: func(t *testing.T, _ []map[string]any, outcome map[string]any) {
				assert.Equal(t, "done", outcome["status"])
				assert.Contains(t, warningCodes(outcome), "late_close")
			}},
		{name: "hang before first line", scenario: agentsim.ScenarioHangBeforeOutput, flags: []string{"--first-line-timeout", "500ms"}, code: 10, kind: "timeout"},
		{name: "hang mid-stream", scenario: agentsim.ScenarioHangMidStream, flags: []string{"--idle-timeout", "500ms"}, code: 10, kind: "timeout"},
		{name: "exit without result", scenario: agentsim.ScenarioNoResult, code: 9, kind: "protocol"},
		{name: "malformed line", scenario: agentsim.ScenarioMalformedLine, code: 9, kind: "protocol"},
		{name: "missing init", scenario: "missing-init", code: 9, kind: "protocol"},
		{name: "error result", scenario: agentsim.ScenarioErrorResult, code: 1, kind: "error"},
		{name: "usage limit", scenario: agentsim.ScenarioUsageLimit, code: 6, kind: "quota"},
		{name: "usage limit on stderr only", scenario: agentsim.ScenarioUsageLimitStderr, code: 6, kind: "quota"},
		{name: "rate limited", scenario: agentsim.ScenarioRateLimited, code: 6, kind: "rate_limited"},
		{name: "auth error", scenario: agentsim.ScenarioAuthError, code: 5, kind: "auth"},
		{name: "crash", scenario: agentsim.ScenarioCrash, code: 11, kind: "process"},
		{name: "disallowed tool stops the tree", scenario: agentsim.ScenarioDisallowedTool, code: 8, kind: "policy"},
		{name: "setsid escapee after result", scenario: agentsim.ScenarioSetsidEscape, flags: []string{"--exit-grace", "300ms"}, code: 0},
		{name: "double fork after result", scenario: agentsim.ScenarioDoubleFork, flags: []string{"--exit-grace", "300ms"}, code: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			settings := cursorEnv(t, "", tt.scenario)
			bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
			w := testkit.NewWatch(t)
			t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
			args := append([]string{"--settings", settings, "--binary", bin, "run", "--json"}, tt.flags...)
			args = append(args, "--", "Summarise README.md")
			code, stdout, stderr := runCLI(t, map[string]string{}, "", args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			events, outcome := runEvents(t, stdout)
			if tt.kind == "" {
				assert.Nil(t, outcome["kind"], "outcome: %v", outcome)
			} else {
				assert.Equal(t, tt.kind, outcome["kind"], "outcome: %v", outcome)
			}
			if tt.check != nil {
				tt.check(t, events, outcome)
			}
			w.RequireGone(10 * time.Second)
		})
	}
}

func TestRunPromptOnlyOnStdinAndResume(t *testing.T) {
	settings := cursorEnv(t, "", agentsim.ScenarioNormal)
	record := filepath.Join(testkit.TempDir(t), "record.ndjson")
	t.Setenv(agentsim.EnvRecord, record)
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	const prompt = "secret-prompt-7f3a: explain the build"

	code, stdout, stderr := runCLI(t, map[string]string{}, prompt, "--settings", settings, "--binary", bin, "run", "--json", "--resume", "sess-42", "-")
	require.Equal(t, 0, code, stderr)
	_, outcome := runEvents(t, stdout)
	assert.Equal(t, "sess-42", outcome["sessionId"])

	records, err := agentsim.ReadRecords(record)
	require.NoError(t, err)
	var req *agentsim.Record
	for i := range records {
		if strings.Contains(strings.Join(records[i].Args, " "), "--print") {
			req = &records[i]
		}
	}
	require.NotNil(t, req, "the turn was recorded")
	assert.Equal(t, prompt, req.Stdin)
	assert.NotContains(t, strings.Join(req.Args, "\x00"), "secret-prompt")
	assert.NotContains(t, strings.Join(req.Env, "\x00"), "secret-prompt")
	assert.Contains(t, req.Args, "--resume")
	assert.Contains(t, req.Args, "--trust")
	assert.NotContains(t, req.Args, "--force", "read-only by default")
}

func TestRunModesAndModel(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		code    int
		want    []string
		notWant []string
	}{
		{"default is plan", nil, 0, []string{"--mode", "plan", "--trust"}, []string{"--force"}},
		{"ask", []string{"--mode", "ask"}, 0, []string{"--mode", "ask"}, []string{"--force"}},
		{"write", []string{"--write"}, 0, []string{"--force", "--trust"}, []string{"--mode"}},
		{"model resolved from the catalog", []string{"--model", agentsim.DefaultModelID}, 0, []string{"--model", agentsim.DefaultModelID}, nil},
		{"bracketed model passes through", []string{"--model", "claude-opus-4-8[context=1m,effort=high]"}, 0, []string{"claude-opus-4-8[context=1m,effort=high]"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			settings := cursorEnv(t, "", agentsim.ScenarioNormal)
			record := filepath.Join(testkit.TempDir(t), "record.ndjson")
			t.Setenv(agentsim.EnvRecord, record)
			bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
			args := append([]string{"--settings", settings, "--binary", bin, "run", "--json"}, tt.flags...)
			code, _, stderr := runCLI(t, map[string]string{}, "", append(args, "hi")...)
			require.Equal(t, tt.code, code, stderr)
			records, err := agentsim.ReadRecords(record)
			require.NoError(t, err)
			last := records[len(records)-1]
			for _, w := range tt.want {
				assert.Contains(t, last.Args, w)
			}
			for _, nw := range tt.notWant {
				assert.NotContains(t, last.Args, nw)
			}
		})
	}
}

func TestRunRefusals(t *testing.T) {
	settings := cursorEnv(t, "", agentsim.ScenarioNormal)
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		msg   string
	}{
		{"empty prompt", []string{"run", "--json"}, "  \n", 2, "prompt is empty"},
		{"two prompts", []string{"run", "--json", "a", "b"}, "", 2, "one PROMPT"},
		{"auto model", []string{"run", "--json", "--model", "auto", "x"}, "", 2, ""},
		{"unknown model lists variants", []string{"run", "--json", "--model", "no-such-model", "x"}, "", 2, ""},
		{"write and mode", []string{"run", "--json", "--write", "--mode", "ask", "x"}, "", 2, "exclude"},
		{"bad mode", []string{"run", "--json", "--mode", "yolo", "x"}, "", 2, ""},
		{"missing cwd", []string{"run", "--json", "--cwd", filepath.Join(testkit.TempDir(t), "nope"), "x"}, "", 2, "not a usable directory"},
		{"negative timeout", []string{"run", "--json", "--timeout", "-1s", "x"}, "", 2, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, _ := runCLI(t, map[string]string{}, tt.stdin, append([]string{"--settings", settings, "--binary", bin}, tt.args...)...)
			assert.Equal(t, tt.code, code)
			obj := decodeObject(t, stdout)
			require.Contains(t, obj, "error")
			assert.Equal(t, "input", obj["error"].(map[string]any)["kind"])
			assert.Contains(t, obj["error"].(map[string]any)["message"], tt.msg)
		})
	}
}

func TestRunCancelStopsTheTree(t *testing.T) {
	settings := cursorEnv(t, "", agentsim.ScenarioHangMidStream)
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	w := testkit.NewWatch(t)
	t.Setenv(agentsim.EnvPIDDir, w.PIDDir())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := newLineWatcher()
	done := make(chan int, 1)
	go func() {
		var errOut bytes.Buffer
		done <- run(ctx, []string{"--settings", settings, "--binary", bin, "run", "--json", "hi"}, strings.NewReader(""), pw, &errOut, func(string) string { return "" })
	}()
	select {
	case <-pr: // the first event arrived: the agent runs
	case <-time.After(20 * time.Second):
		t.Fatal("no event from the agent")
	}
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 130, code)
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	w.RequireGone(10 * time.Second)
}

// lineWatcher is a writer that signals once when the first line is written.
type lineWatcher struct {
	first chan struct{}
	once  bool
}

func newLineWatcher() (<-chan struct{}, *lineWatcher) {
	w := &lineWatcher{first: make(chan struct{})}
	return w.first, w
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	if !w.once && bytes.IndexByte(p, '\n') >= 0 {
		w.once = true
		close(w.first)
	}
	return len(p), nil
}

// TestRunThroughAShim runs a turn through a wrapper, as npm installs the
// agent: a .cmd shim started through cmd.exe on Windows (the bracketed model
// id must survive cmd's parsing), a shell script on POSIX.
func TestRunThroughAShim(t *testing.T) {
	settings := cursorEnv(t, "", agentsim.ScenarioNormal)
	record := filepath.Join(testkit.TempDir(t), "record.ndjson")
	t.Setenv(agentsim.EnvRecord, record)
	dir := filepath.Join(testkit.TempDir(t), "Program Files (x86)", "npm")
	bin := testkit.Install(t, dir, "cursor-agent-real", testkit.Simulator)
	w := testkit.NewWatch(t)
	t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
	var shimPath, body string
	if runtime.GOOS == "windows" {
		shimPath = filepath.Join(dir, "cursor-agent.cmd")
		body = "@ECHO off\r\nSETLOCAL\r\n\"" + bin + "\" %*\r\n"
	} else {
		shimPath = filepath.Join(dir, "cursor-agent")
		body = "#!/bin/sh\nexec '" + bin + "' \"$@\"\n"
	}
	require.NoError(t, os.WriteFile(shimPath, []byte(body), 0o755))

	const model = "claude-opus-4-8[context=1m,effort=high]"
	code, stdout, stderr := runCLI(t, map[string]string{}, "", "--settings", settings, "--binary", shimPath,
		"run", "--json", "--model", model, "--", "what is 100% & (x|y)?")
	require.Equal(t, 0, code, stderr)
	events, outcome := runEvents(t, stdout)
	assert.Equal(t, "done", outcome["status"])
	assert.Equal(t, agentsim.TextBeforeTool+agentsim.TextAfterTool, textOf(events))

	records, err := agentsim.ReadRecords(record)
	require.NoError(t, err)
	last := records[len(records)-1]
	assert.Contains(t, last.Args, model, "the bracketed id arrives intact through the shim")
	assert.Equal(t, "what is 100% & (x|y)?", last.Stdin, "metacharacters in the prompt are safe: it travels on stdin")
	w.RequireGone(10 * time.Second)
}
