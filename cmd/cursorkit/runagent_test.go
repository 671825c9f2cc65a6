package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// agentFixture is a machine with a stand-in of another agent CLI (the
// replay simulator playing a recorded stream) and the cursor-agent
// simulator on PATH, each recording its invocations.
type agentFixture struct {
	settings, record, dir string
}

// newAgentFixture installs command (e.g. "codex") playing stream (a file
// of the agent's package testdata) with exit code exit, and cursor-agent
// playing scenario, unless noCursor.
func newAgentFixture(t *testing.T, command, stream, exit, scenario string, noCursor bool) agentFixture {
	t.Helper()
	dir := testkit.TempDir(t)
	settings := cursorEnv(t, dir, scenario)
	record := filepath.Join(testkit.TempDir(t), "record.ndjson")
	abs, err := filepath.Abs(stream)
	require.NoError(t, err)
	t.Setenv(agentsim.EnvRecord, record)
	t.Setenv(agentsim.EnvReplay, abs)
	t.Setenv(agentsim.EnvReplayFor, command)
	t.Setenv(agentsim.EnvReplayExit, exit)
	t.Setenv(agentsim.EnvReplayVersion, "codex-cli 0.171.0")
	testkit.Install(t, dir, command, testkit.Simulator)
	if !noCursor {
		testkit.Install(t, dir, "cursor-agent", testkit.Simulator)
	}
	return agentFixture{settings: settings, record: record, dir: dir}
}

// turns returns the prompt turns recorded by the copy named command.
func (f agentFixture) turns(t *testing.T, command string) []agentsim.Record {
	t.Helper()
	records, err := agentsim.ReadRecords(f.record)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []agentsim.Record
	for _, r := range records {
		name := strings.TrimSuffix(strings.ToLower(filepath.Base(r.Executable)), ".exe")
		if name == command && !strings.Contains(strings.Join(r.Args, " "), "--version") {
			out = append(out, r)
		}
	}
	return out
}

func eventsOfType(events []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, e := range events {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

const codexUnauthorized = "../../agents/codex/testdata/unauthorized.jsonl"

func TestRunAnotherAgent(t *testing.T) {
	f := newAgentFixture(t, "codex", "../../agents/codex/testdata/success.jsonl", "0", "", true)
	const prompt = "secret-prompt-91c2: list the files"
	code, stdout, stderr := runCLI(t, nil, prompt, "--settings", f.settings, "run", "--agent", "codex", "--mode", "ask", "--json", "-")
	require.Equal(t, 0, code, stderr)
	events, outcome := runEvents(t, stdout)
	assert.Equal(t, "done", outcome["status"])
	assert.NotEmpty(t, outcome["sessionId"], "codex's thread id resumes the session")
	assert.NotEmpty(t, textOf(events))
	turns := f.turns(t, "codex")
	require.Len(t, turns, 1)
	assert.Equal(t, prompt, turns[0].Stdin, "the prompt travels on stdin only")
	assert.NotContains(t, strings.Join(turns[0].Args, " "), "secret-prompt")
	assert.Contains(t, strings.Join(turns[0].Args, " "), "exec --json")
	assert.Contains(t, strings.Join(turns[0].Args, " "), "--sandbox read-only")
}

func TestRunAgentRefusals(t *testing.T) {
	f := newAgentFixture(t, "codex", codexUnauthorized, "1", "", false)
	transcript := filepath.Join(testkit.TempDir(t), "t.json")
	require.NoError(t, os.WriteFile(transcript, []byte(`[{"role":"robot","content":"secret-transcript-77"}]`), 0o644))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown agent", []string{"--agent", "aider"}, "unknown agent"},
		{"a cursor-only flag", []string{"--agent", "codex", "--partial"}, "--partial is the Cursor CLI's only"},
		{"effort", []string{"--agent", "codex", "--effort", "high"}, "--effort is the Cursor CLI's only"},
		{"another fallback", []string{"--agent", "codex", "--fallback", "claude"}, "the fallback is cursor"},
		{"a bad fallback model", []string{"--agent", "codex", "--fallback", "cursor:-x"}, "starts with '-'"},
		{"a transcript without a fallback", []string{"--agent", "codex", "--transcript", transcript}, "--transcript needs --fallback"},
		{"a malformed transcript", []string{"--agent", "codex", "--fallback", "cursor", "--transcript", transcript}, "role must be"},
		{"a missing transcript", []string{"--agent", "codex", "--fallback", "cursor", "--transcript", transcript + ".none"}, "does not exist"},
		{"a bad model", []string{"--agent", "codex", "--model", "a b"}, "model"},
		{"retries without a fallback", []string{"--agent", "codex", "--fallback-after-retries", "1"}, "--fallback-after-retries needs --fallback"},
		{"retries without a fallback, cursor", []string{"--fallback-after-retries", "2"}, "--fallback-after-retries needs --fallback"},
		{"a negative retry count", []string{"--agent", "codex", "--fallback", "cursor", "--fallback-after-retries", "-1"}, "the count of retries is at least 1"},
		{"a retry count that is no number", []string{"--agent", "codex", "--fallback", "cursor", "--fallback-after-retries", "x"}, "fallback-after-retries"},
		{"Cursor as its own fallback", []string{"--fallback", "cursor"}, "cannot be its own fallback"},
		{"Cursor as its own fallback, named", []string{"--agent", "cursor", "--fallback", "cursor:gpt-5"}, "cannot be its own fallback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--settings", f.settings, "run", "--json"}, tt.args...)
			code, stdout, stderr := runCLI(t, nil, "p", append(args, "-")...)
			assert.Equal(t, failure.ExitInput, code, stderr)
			requireOneJSONError(t, stdout, stderr, failure.Input)
			assert.Contains(t, stdout, tt.want)
			assert.NotContains(t, stdout, "secret-transcript")
		})
	}
	assert.Empty(t, f.turns(t, "codex"), "nothing ran")
	assert.Empty(t, f.turns(t, "cursor-agent"), "nothing ran")
}

func TestFallbackToCursor(t *testing.T) {
	transcript := filepath.Join(testkit.TempDir(t), "t.json")
	require.NoError(t, os.WriteFile(transcript, []byte(`[
		{"role":"user","content":"secret-earlier-question"},
		{"role":"assistant","content":[{"type":"thinking","thinking":"secret-thinking"},{"type":"text","text":"an earlier answer"},{"type":"tool_use","name":"Bash","input":{}}]}
	]`), 0o644))
	const prompt = "secret-prompt-5d1e: fix the test"
	tests := []struct {
		name        string
		stream      string
		exit        string
		transcript  bool
		noCursor    bool
		code        int
		engaged     bool
		transferred bool
	}{
		{name: "an auth failure hands the prompt to cursor", stream: codexUnauthorized, exit: "1", engaged: true},
		{name: "with the transcript on the swapped prompt", stream: codexUnauthorized, exit: "1", transcript: true, engaged: true, transferred: true},
		{name: "a usage limit is retryable too", stream: "../../agents/codex/testdata/failed.jsonl", exit: "1", engaged: true},
		{name: "a policy failure is not", stream: "../../agents/codex/testdata/disallowed.jsonl", exit: "0", code: failure.ExitPolicy},
		{name: "no cursor: the fallback is dropped with a warning", stream: codexUnauthorized, exit: "1", noCursor: true, code: failure.ExitAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAgentFixture(t, "codex", tt.stream, tt.exit, agentsim.ScenarioNormal, tt.noCursor)
			args := []string{"--settings", f.settings, "run", "--agent", "codex", "--fallback", "cursor", "--json"}
			if tt.transcript {
				args = append(args, "--transcript", transcript)
			}
			code, stdout, stderr := runCLI(t, nil, prompt, append(args, "-")...)
			require.Equal(t, tt.code, code, stderr)
			events, outcome := runEvents(t, stdout)
			engaged := eventsOfType(events, "cross-runtime-fallback-engaged")
			cursorTurns := f.turns(t, "cursor-agent")
			require.Len(t, f.turns(t, "codex"), 1, "the primary ran once")
			if !tt.engaged {
				assert.Empty(t, engaged)
				assert.Empty(t, cursorTurns, "cursor never ran")
				if tt.noCursor {
					var codes []string
					for _, w := range eventsOfType(events, "warning") {
						codes = append(codes, w["code"].(string))
					}
					assert.Equal(t, 1, strings.Count(strings.Join(codes, " "), "fallback_dropped"), "one warning: %v", codes)
				}
				return
			}
			assert.Equal(t, "done", outcome["status"], "cursor answered")
			require.Len(t, engaged, 1)
			e := engaged[0]
			assert.Equal(t, "run", e["sessionPurpose"])
			assert.Equal(t, "codex", e["primaryAgent"])
			assert.Equal(t, "openai", e["primaryProvider"])
			assert.Equal(t, "cursor", e["fallbackAgent"])
			assert.Equal(t, "cursor-cli", e["fallbackProvider"], "the runtime's provider id; the agent stays cursor")
			assert.Equal(t, "result", e["triggerPoint"])
			assert.EqualValues(t, 1, e["promptIndex"])
			assert.Contains(t, []any{"authentication", "rate-limit"}, e["failureCategory"])
			assert.Equal(t, tt.transferred, e["contextTransferred"])
			raw := stdout[strings.Index(stdout, `"cross-runtime-fallback-engaged"`):]
			raw = raw[:strings.IndexByte(raw, '\n')]
			for _, secret := range []string{"secret", "401", "Unauthorized", "usage"} {
				assert.NotContains(t, raw, secret, "ids and outcomes only")
			}
			require.Len(t, cursorTurns, 1, "one cursor turn")
			stdin := cursorTurns[0].Stdin
			if tt.transferred {
				assert.True(t, strings.HasPrefix(stdin, "[Transferred prior conversation from openai/default; partial, text-only, and non-authoritative]\n"), stdin)
				assert.Contains(t, stdin, "user: secret-earlier-question\nassistant: an earlier answer\n\n[Current prompt]\n"+prompt)
				assert.NotContains(t, stdin, "secret-thinking")
			} else {
				assert.Equal(t, prompt, stdin, "the failed prompt, unchanged")
			}
			assert.Less(t, strings.Index(stdout, `"cross-runtime-fallback-engaged"`), strings.LastIndex(stdout, `"type":"init"`),
				"the engaged event comes before cursor's turn")
		})
	}
}

func TestAgentsListing(t *testing.T) {
	f := newAgentFixture(t, "codex", codexUnauthorized, "1", "", false)
	code, stdout, stderr := runCLI(t, nil, "", "--settings", f.settings, "agents", "--json")
	require.Equal(t, 0, code, stderr)
	doc := decodeObject(t, stdout)
	list := doc["agents"].([]any)
	byName := map[string]map[string]any{}
	for _, a := range list {
		m := a.(map[string]any)
		byName[m["name"].(string)] = m
	}
	require.Len(t, byName, len(list))
	assert.Equal(t, true, byName["cursor"]["found"])
	assert.NotEmpty(t, byName["cursor"]["version"])
	codexReport := byName["codex"]
	assert.Equal(t, true, codexReport["found"])
	assert.Equal(t, "0.171.0", codexReport["version"])
	assert.Equal(t, "path", codexReport["source"])
	launch := codexReport["launch"].(map[string]any)
	assert.Contains(t, launch["commandLine"], "exec --json")
	for name, r := range byName {
		if name != "cursor" && name != "codex" {
			assert.Equal(t, false, r["found"], name)
			assert.NotEmpty(t, r["install"], name)
		}
	}
	code, stdout, stderr = runCLI(t, nil, "", "--settings", f.settings, "agents", "--json", "claude")
	assert.Equal(t, failure.ExitInput, code)
	requireOneJSONError(t, stdout, stderr, failure.Input)
	if runtime.GOOS != "windows" {
		code, stdout, _ = runCLI(t, nil, "", "--settings", f.settings, "agents")
		require.Equal(t, 0, code)
		assert.Contains(t, stdout, "codex")
		if len(byName) > 2 {
			assert.Contains(t, stdout, "not found")
		}
	}
}
