package main

import (
	"bytes"
	"context"
	"encoding/json/v2"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/mcpstage"
)

// toolRole is the program of the tools these tests publish: "answer"
// prints what the word means and the input it got; "hang" writes its PID
// to the file args[1] names, then hangs.
const toolRole = "run-tools-lookup"

// toolSecret stands for a value of a tools file (a token in a command
// line) that no message may show.
const toolSecret = "tok-5ecret-3e9b"

func toolRoles() []testkit.Role {
	return []testkit.Role{{Name: toolRole, Run: runLookupTool}}
}

func runLookupTool(args []string) int {
	switch args[0] {
	case "answer":
		input, err := io.ReadAll(os.Stdin)
		if err != nil {
			return 3
		}
		fmt.Printf("ossify: to turn into bone (asked %s)", input)
	case "hang":
		pid := strconv.Itoa(os.Getpid())
		if os.WriteFile(args[1]+".tmp", []byte(pid), 0o600) != nil || os.Rename(args[1]+".tmp", args[1]) != nil {
			return 3
		}
		testkit.SleepForever()
	}
	return 0
}

// lookupTool is a tools file's tool named name, with members replaced by
// over (one mapped to "" is left out) and over's other members added.
func lookupTool(name string, over map[string]string) string {
	members := []string{"name", "description", "inputSchema", "command", "timeout"}
	values := map[string]string{
		"name":        strconv.Quote(name),
		"description": `"What a word means."`,
		"inputSchema": `{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`,
		"command":     `["lookup", "answer", "--token", "` + toolSecret + `"]`,
		"timeout":     `"20s"`,
	}
	for k, v := range over {
		if _, known := values[k]; !known {
			members = append(members, k)
		}
		values[k] = v
	}
	var parts []string
	for _, m := range members {
		if values[m] != "" {
			parts = append(parts, strconv.Quote(m)+": "+values[m])
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// TestRunToolsBadFile: a --tools file that is not one is refused as input
// (exit 2), saying what is wrong, before anything starts (not even the
// agent's --version), quoting no value of the file, staging nothing.
func TestRunToolsBadFile(t *testing.T) {
	one := func(over map[string]string) string { return `{"tools": [` + lookupTool("lookup_word", over) + `]}` }
	tests := []struct {
		name string
		path func(t *testing.T) string
		msg  string
	}{
		{"missing", func(t *testing.T) string { return filepath.Join(testkit.TempDir(t), "none.json") }, "does not exist"},
		{"a directory", func(t *testing.T) string { return testkit.TempDir(t) }, "is not a regular file"},
		{"too large", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", one(map[string]string{"description": `"` + strings.Repeat("a", mcpbridge.MaxToolsFileSize) + `"`}))
		}, "is larger than"},
		{"not JSON", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", `{"tools": [{"command": ["`+toolSecret+`"`)
		}, "not valid JSON (at byte offset"},
		{"no tools", func(t *testing.T) string { return testkit.TempFile(t, "tools.json", `{"tools": []}`) }, "it has no tools"},
		{"an unknown member", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", one(map[string]string{"env": `{"K": "` + toolSecret + `"}`}))
		}, `tool 1: unknown member "env"`},
		{"a member twice", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", `{"tools": [{"name": "a", "name": "b"}]}`)
		}, `the member "name" is given twice`},
		{"a name twice", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", `{"tools": [`+lookupTool("lookup_word", nil)+", "+lookupTool("lookup_word", nil)+`]}`)
		}, `tool 2: the name "lookup_word" is given to another tool too`},
		{"an invalid name", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", `{"tools": [`+lookupTool("Lookup-Word", nil)+`]}`)
		}, `tool 1: the name "Lookup-Word" is not`},
		{"a schema that is not an object schema", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", one(map[string]string{"inputSchema": `{"type": "array", "description": "` + toolSecret + `"}`}))
		}, `tool 1 (lookup_word): "inputSchema"'s "type" is not "object"`},
		{"an empty command", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", one(map[string]string{"command": "[]"}))
		},
			`tool 1 (lookup_word): "command" is missing or empty`},
		{"a bad timeout", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", one(map[string]string{"timeout": `"` + toolSecret + `"`}))
		}, `tool 1 (lookup_word): "timeout" is not a duration`},
		{"a negative timeout", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", one(map[string]string{"timeout": `"-1s"`}))
		},
			`tool 1 (lookup_word): "timeout" must be above zero`},
		{"a program not found", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", one(map[string]string{"command": `["` + toolSecret + `", "x"]`}))
		}, "tool 1 (lookup_word): its program cannot be found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flags, record, w := mcpEnv(t, agentsim.ScenarioMCPCall)
			dir := testkit.TempDir(t)
			path := tt.path(t)
			code, stdout, stderr := runCLI(t, map[string]string{}, "", append(flags, "run", "--json", "--cwd", dir, "--tools", path, "hi")...)
			assert.Equal(t, failure.ExitInput, code, "stderr: %s", stderr)
			e := decodeObject(t, stdout)["error"].(map[string]any)
			assert.Equal(t, "input", e["kind"])
			assert.Contains(t, e["message"], "--tools: tools file "+strconv.Quote(path))
			assert.Contains(t, e["message"], tt.msg)
			assert.NotContains(t, stdout+stderr, toolSecret, "a value of the file never shows")
			records, err := agentsim.ReadRecords(record)
			if !os.IsNotExist(err) {
				require.NoError(t, err)
			}
			assert.Empty(t, records, "no agent process ran, not even its --version")
			assert.Equal(t, snapshot{}, takeSnapshot(t, dir), "nothing was staged")
			w.RequireGone(10 * time.Second)
		})
	}
}

// TestRunToolsRefusedWithFallback: the fallback's turn would not have the
// tools, so the two are not offered together.
func TestRunToolsRefusedWithFallback(t *testing.T) {
	flags, record, _ := mcpEnv(t, agentsim.ScenarioMCPCall)
	path := testkit.TempFile(t, "tools.json", `{"tools": [`+lookupTool("lookup_word", nil)+`]}`)
	code, stdout, stderr := runCLI(t, map[string]string{}, "", append(flags, "run", "--json", "--agent", "claude",
		"--fallback", "cursor", "--tools", path, "hi")...)
	assert.Equal(t, failure.ExitInput, code, "stderr: %s", stderr)
	e := decodeObject(t, stdout)["error"].(map[string]any)
	assert.Equal(t, "input", e["kind"])
	assert.Contains(t, e["message"], "--tools cannot be combined with --fallback")
	assert.Nil(t, turnRecord(t, record))
}

// TestRunToolsHelp: run --help describes the flag.
func TestRunToolsHelp(t *testing.T) {
	code, stdout, _ := runCLI(t, map[string]string{}, "", "run", "--help")
	require.Equal(t, failure.ExitOK, code)
	assert.Contains(t, stdout, "--tools FILE")
	assert.Contains(t, stdout, `publish the tools FILE describes ({"tools": [{name, description, inputSchema, command, timeout}]})`)
	assert.Contains(t, stdout, "no shell, with the input JSON on stdin and stdout as the result")
}

// toolsRun prepares `run --tools` with the Cursor simulator making a real
// MCP call: the tools file (its program the test binary as toolRole,
// given args), the simulator's MCP log and the call's input.
func toolsRun(t *testing.T, args ...string) (flags []string, record, tools, mcpLog string, w *testkit.Watch) {
	t.Helper()
	flags, record, w = mcpEnv(t, agentsim.ScenarioMCPCall)
	bin := testkit.Install(t, testkit.TempDir(t), "lookup", toolRole)
	command, err := json.Marshal(append([]string{bin}, args...))
	require.NoError(t, err)
	tools = testkit.TempFile(t, "tools.json", `{"tools": [`+lookupTool("lookup_word", map[string]string{"command": string(command)})+`]}`)
	mcpLog = filepath.Join(testkit.TempDir(t), "mcp.ndjson")
	t.Setenv(agentsim.EnvMCPLog, mcpLog)
	t.Setenv(agentsim.EnvMCPArgs, `{"word":"ossify"}`)
	return flags, record, tools, mcpLog, w
}

// TestRunToolsWithCursor: run --agent cursor --tools, end to end through
// the simulator: the bridge staged like an --mcp-server (a lease key),
// the agent lists exactly the file's tool and calls it, the tool's program
// gets the input on stdin and its stdout is the result, the events name
// the tool by its own name; after the run the config is back to its
// baseline and the bridge's private directory is gone.
func TestRunToolsWithCursor(t *testing.T) {
	for _, shape := range mcpShapes() {
		t.Run(shape.name, func(t *testing.T) {
			flags, record, tools, mcpLog, w := toolsRun(t, "answer", "--token", toolSecret)
			dir := shape.make(t)
			before := takeSnapshot(t, dir)
			code, stdout, stderr := runCLI(t, map[string]string{}, "", append(flags, "run", "--json", "--agent", "cursor",
				"--cwd", dir, "--tools", tools, "--", "What does ossify mean?")...)
			require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr, stdout)
			events, outcome := runEvents(t, stdout)
			assert.Nil(t, outcome["kind"], "outcome: %v", outcome)
			assert.NotContains(t, stdout+stderr, toolSecret)

			const answer = `ossify: to turn into bone (asked {"word":"ossify"})`
			var completed []map[string]any
			for _, ev := range events {
				assert.NotEqual(t, "mcp", ev["tool"], "a bridged call is reported by the tool's own name")
				if ev["type"] == "tool_completed" && ev["tool"] == "lookup_word" {
					completed = append(completed, ev)
				}
			}
			require.Len(t, completed, 1, "events: %v", events)
			assert.Equal(t, map[string]any{"word": "ossify"}, completed[0]["args"])
			assert.Equal(t, answer, completed[0]["result"])
			assert.Equal(t, "success", completed[0]["status"])

			runs, err := agentsim.ReadMCPRuns(mcpLog)
			require.NoError(t, err)
			require.Len(t, runs, 1)
			run := runs[0]
			assert.Empty(t, run.Error)
			assert.True(t, strings.HasPrefix(run.Server, mcpstage.DefaultKeyPrefix), "staged under a lease key: %s", run.Server)
			assert.Equal(t, []string{mcpbridge.EnvSession}, run.EnvNames)
			assert.Equal(t, []string{mcpbridge.Prefix + "lookup_word"}, run.Tools, "exactly the file's tools")
			assert.Equal(t, answer, run.Result, "the program's stdout, its input on stdin")
			assert.False(t, run.IsError)

			rec := turnRecord(t, record)
			require.NotNil(t, rec)
			assert.Contains(t, rec.Args, "--approve-mcps")
			require.NotNil(t, rec.ProjectMCPConfig)
			staged := stagedServers(t, *rec.ProjectMCPConfig)
			require.Len(t, staged, 1, "the bridge, staged: %s", *rec.ProjectMCPConfig)
			session := staged[run.Server]["env"].(map[string]any)[mcpbridge.EnvSession].(string)
			_, err = os.Stat(filepath.Dir(session))
			assert.True(t, os.IsNotExist(err), "the bridge's private directory is gone: %v", err)

			assert.Equal(t, before, takeSnapshot(t, dir), "the config is back to its baseline, byte for byte")
			w.RequireGone(10 * time.Second)
		})
	}
}

// TestRunToolsWithMCPServer: --tools and --mcp-server together stage two
// servers, each under its own lease, approve both and release both.
func TestRunToolsWithMCPServer(t *testing.T) {
	flags, record, tools, _, w := toolsRun(t, "answer")
	dir := testkit.TempDir(t)
	server := testkit.TempFile(t, "server.json", mcpServerJSON)
	code, stdout, stderr := runCLI(t, map[string]string{}, "", append(flags, "run", "--json", "--cwd", dir,
		"--mcp-server", server, "--tools", tools, "hi")...)
	require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr, stdout)
	rec := turnRecord(t, record)
	require.NotNil(t, rec)
	require.NotNil(t, rec.ProjectMCPConfig)
	assert.Contains(t, rec.Args, "--approve-mcps")
	staged := stagedServers(t, *rec.ProjectMCPConfig)
	require.Len(t, staged, 2, "both staged: %s", *rec.ProjectMCPConfig)
	var commands []any
	for _, entry := range staged {
		commands = append(commands, entry["command"])
	}
	assert.Contains(t, commands, "node", "--mcp-server's")
	assert.NotContains(t, stdout+stderr, mcpSecret)
	assert.Equal(t, snapshot{}, takeSnapshot(t, dir), "both released")
	w.RequireGone(10 * time.Second)
}

// TestRunToolsCancelled: a run stopped while a tool's program runs exits
// 130, and the program's tree, the simulator, the bridge program and the
// staged entry are all gone.
func TestRunToolsCancelled(t *testing.T) {
	pidFile := filepath.Join(testkit.TempDir(t), "tool.pid")
	flags, _, tools, _, w := toolsRun(t, "hang", pidFile)
	dir := testkit.TempDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		var out, errOut bytes.Buffer
		done <- run(ctx, append(flags, "run", "--json", "--cwd", dir, "--tools", tools, "hi"),
			strings.NewReader(""), &out, &errOut, func(k string) string {
				if k == envProbeTimeout {
					return probeTimeoutForTests()
				}
				return ""
			})
	}()
	var pid int
	testkit.Eventually(t, "the tool's program running", 30*time.Second, func() bool {
		data, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(string(data))
		return err == nil
	})
	w.Add(pid)
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, failure.ExitCancelled, code)
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	w.RequireGone(10 * time.Second)
	assert.Equal(t, snapshot{}, takeSnapshot(t, dir), "released after a cancelled run too")
}

// TestRunToolsWithAnotherAgent: for an agent that takes its MCP servers
// for the turn on its command line, the bridge is on that line (Claude
// Code's --mcp-config, Codex's -c mcp_servers), nothing is staged in the
// worktree, and the bridge's private directory is gone after the run.
func TestRunToolsWithAnotherAgent(t *testing.T) {
	tests := []struct {
		agent, stream string
		want          []string // in the agent's line: the bridge, its tools approved
		dirAfter      func(args []string) string
	}{
		{"claude", "../../agents/claude/testdata/good-turn.jsonl", []string{"--strict-mcp-config", "__" + mcpbridge.Prefix + "lookup_word"}, func(args []string) string {
			i := slices.Index(args, "--mcp-config")
			if i < 0 || i+1 == len(args) {
				return ""
			}
			return filepath.Dir(args[i+1])
		}},
		{"codex", "../../agents/codex/testdata/success.jsonl", []string{".required=true", `.default_tools_approval_mode="approve"`}, func(args []string) string {
			for _, a := range args {
				if v, ok := strings.CutPrefix(a, "mcp_servers."); ok && strings.Contains(v, ".env=") {
					_, path, _ := strings.Cut(v, mcpbridge.EnvSession+`="`)
					path, _, _ = strings.Cut(path, `"`)
					return filepath.Dir(strings.ReplaceAll(path, `\\`, `\`))
				}
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			f := newAgentFixture(t, tt.agent, tt.stream, "0", "", true)
			bin := testkit.Install(t, testkit.TempDir(t), "lookup", toolRole)
			command, err := json.Marshal([]string{bin, "answer"})
			require.NoError(t, err)
			tools := testkit.TempFile(t, "tools.json", `{"tools": [`+lookupTool("lookup_word", map[string]string{"command": string(command)})+`]}`)
			dir := testkit.TempDir(t)
			code, stdout, stderr := runCLI(t, nil, "", "--settings", f.settings, "run", "--agent", tt.agent, "--write", "--json",
				"--cwd", dir, "--tools", tools, "list the files")
			require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr, stdout)
			turns := f.turns(t, tt.agent)
			require.Len(t, turns, 1)
			args := turns[0].Args
			for _, want := range tt.want {
				assert.Contains(t, strings.Join(args, " "), want, "the bridge is on the agent's line")
			}
			bridgeDir := tt.dirAfter(args)
			require.NotEmpty(t, bridgeDir, "the bridge's directory in %q", args)
			_, err = os.Stat(bridgeDir)
			assert.True(t, os.IsNotExist(err), "the bridge's private directory is gone: %v", err)
			assert.Equal(t, snapshot{}, takeSnapshot(t, dir), "nothing staged in the worktree")
		})
	}
}
