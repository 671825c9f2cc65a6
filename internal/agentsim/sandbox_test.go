package agentsim_test

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// sandboxArgs is the task profile's argv in write mode.
var sandboxArgs = []string{"--print", "--output-format", "stream-json", "--sandbox", "enabled", "--disable-project-configs",
	"--single-turn", "--disable-auto-update", "--allowed-tools", "read_tool_call,edit_tool_call", "--trust"}

// runInProcess runs the simulator in this process with env as its whole
// environment.
func runInProcess(t *testing.T, env map[string]string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := agentsim.Main(args, strings.NewReader(stdin), &stdout, &stderr, func(k string) string { return env[k] })
	return stdout.String(), stderr.String(), code
}

// TestSandboxFlags: the profile's flags are parsed, bad values and
// unknown flags refused in the real CLI's style.
func TestSandboxFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{name: "the whole profile", args: sandboxArgs},
		{name: "sandbox disabled", args: append(append([]string{}, printArgs...), "--sandbox=disabled")},
		{name: "bad sandbox value", args: append(append([]string{}, printArgs...), "--sandbox", "on"),
			err: "error: option '--sandbox <mode>' argument 'on' is invalid. Allowed choices are enabled, disabled"},
		{name: "sandbox without a value", args: append(append([]string{}, printArgs...), "--sandbox"), err: "option '--sandbox' argument missing"},
		{name: "an empty tool list", args: append(append([]string{}, printArgs...), "--allowed-tools", ""), err: "option '--allowed-tools <tools>' argument '' is invalid"},
		{name: "an empty tool name", args: append(append([]string{}, printArgs...), "--allowed-tools", "read_tool_call,,ls_tool_call"), err: "is invalid"},
		{name: "a tool name with a space", args: append(append([]string{}, printArgs...), "--allowed-tools", "read tool"), err: "is invalid"},
		{name: "single-turn takes no value", args: append(append([]string{}, printArgs...), "--single-turn=yes"), err: "option '--single-turn' takes no argument"},
		{name: "an unknown flag", args: append(append([]string{}, printArgs...), "--auto-review"), err: "error: unknown option '--auto-review'"},
		{name: "plugin-dir is unknown here", args: append(append([]string{}, printArgs...), "--plugin-dir", "x"), err: "unknown option '--plugin-dir'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runInProcess(t, map[string]string{"HOME": testkit.TempDir(t)}, "p", tt.args...)
			if tt.err == "" {
				assert.Equal(t, 0, code, stderr)
				return
			}
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.err)
		})
	}
}

// TestRecordHoldsHomeAndSandbox: the record names HOME, the files under
// it with their modes, and the parsed profile values.
func TestRecordHoldsHomeAndSandbox(t *testing.T) {
	home := testkit.TempDir(t)
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".cursor", "skills"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".cursor", "sandbox.json"), []byte(`{"type":"workspace_readwrite"}`), 0o600))
	if runtime.GOOS != "windows" {
		require.NoError(t, os.Chmod(filepath.Join(home, ".cursor", "skills"), 0o500))
	}
	record := filepath.Join(testkit.TempDir(t), "record.jsonl")
	env := map[string]string{"HOME": home, agentsim.EnvRecord: record}
	_, stderr, code := runInProcess(t, env, "p", sandboxArgs...)
	require.Equal(t, 0, code, stderr)
	_, _, code = runInProcess(t, env, "p", append(append([]string{}, printArgs...), "--sandbox", "bogus")...)
	require.Equal(t, 1, code)

	records, err := agentsim.ReadRecords(record)
	require.NoError(t, err)
	require.Len(t, records, 2)
	r := records[0]
	assert.Equal(t, home, r.Home)
	assert.Equal(t, "enabled", r.Sandbox)
	assert.Equal(t, []string{"read_tool_call", "edit_tool_call"}, r.AllowedTools)
	var paths []string
	modes := map[string]string{}
	for _, f := range r.HomeFiles {
		paths = append(paths, f.Path)
		modes[f.Path] = f.Mode
	}
	assert.Equal(t, []string{".cursor", ".cursor/sandbox.json", ".cursor/skills"}, paths)
	assert.False(t, r.HomeFilesTruncated)
	if runtime.GOOS != "windows" {
		assert.Equal(t, "-rw-------", modes[".cursor/sandbox.json"])
		assert.Equal(t, "dr-x------", modes[".cursor/skills"])
	}
	assert.Empty(t, records[1].Sandbox, "a refused value is not recorded as parsed")

	raw, err := json.Marshal(r)
	require.NoError(t, err)
	back := agentsim.Record{}
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.Equal(t, r, back)
}

// toolResults returns each completed tool call's key and result kind
// ("success", "rejected", ...) by call id.
func toolResults(t *testing.T, out string) map[string]string {
	t.Helper()
	events, _ := decodeLines(t, out)
	got := map[string]string{}
	for _, e := range events {
		if e.Type != "tool_call" || e.Subtype != "completed" {
			continue
		}
		var call map[string]struct {
			Result map[string]jsontext.Value `json:"result"`
		}
		require.NoError(t, json.Unmarshal(e.ToolCall, &call))
		for key, v := range call {
			for kind := range v.Result {
				got[e.CallID] = key + ":" + kind
			}
		}
	}
	return got
}

// TestSandboxEnforcement: in a --sandbox enabled run the simulator's
// tool results follow $HOME/.cursor/sandbox.json.
func TestSandboxEnforcement(t *testing.T) {
	tests := []struct {
		name       string
		sandbox    string // the sandbox.json, "" for none
		enabled    bool
		extraRW    bool // an additionalReadwritePaths entry for the outside file's directory
		inside     string
		outside    string
		wantReason string
	}{
		{name: "readwrite: inside succeeds, outside rejected", sandbox: `{"type":"workspace_readwrite"}`, enabled: true,
			inside: "editToolCall:success", outside: "editToolCall:rejected", wantReason: "outside the workspace"},
		{name: "no sandbox.json is the documented default", enabled: true,
			inside: "editToolCall:success", outside: "editToolCall:rejected"},
		{name: "readonly rejects both", sandbox: `{"type":"workspace_readonly"}`, enabled: true,
			inside: "editToolCall:rejected", outside: "editToolCall:rejected", wantReason: "workspace_readonly"},
		{name: "read as JSON.parse: a member given twice keeps its last value", enabled: true,
			sandbox: `{"type":"workspace_readwrite","type":"workspace_readonly"}`,
			inside:  "editToolCall:rejected", outside: "editToolCall:rejected", wantReason: "workspace_readonly"},
		{name: "read as JSON.parse: names match exactly", sandbox: `{"Type":"workspace_readonly"}`, enabled: true,
			inside: "editToolCall:success", outside: "editToolCall:rejected", wantReason: "outside the workspace"},
		{name: "an extra read-write path", sandbox: "extra", enabled: true, extraRW: true,
			inside: "editToolCall:success", outside: "editToolCall:success"},
		{name: "without --sandbox enabled nothing is enforced", sandbox: `{"type":"workspace_readonly"}`,
			inside: "editToolCall:success", outside: "editToolCall:success"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := testkit.TempDir(t)
			ws := filepath.Join(testkit.TempDir(t), "ws")
			content := tt.sandbox
			if tt.extraRW {
				b, _ := json.Marshal(map[string]any{"type": "workspace_readwrite", "additionalReadwritePaths": []string{filepath.Dir(ws)}})
				content = string(b)
			}
			if content != "" {
				require.NoError(t, os.MkdirAll(filepath.Join(home, ".cursor"), 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(home, ".cursor", "sandbox.json"), []byte(content), 0o600))
			}
			args := append(append([]string{}, printArgs...), "--workspace", ws)
			if tt.enabled {
				args = append(append([]string{}, sandboxArgs...), "--workspace", ws)
			}
			env := map[string]string{"HOME": home, agentsim.EnvScenario: agentsim.ScenarioSandboxWriteOutside}
			stdout, stderr, code := runInProcess(t, env, "p", args...)
			require.Equal(t, 0, code, stderr)
			got := toolResults(t, stdout)
			assert.Equal(t, tt.inside, got["toolu_edit_in"])
			assert.Equal(t, tt.outside, got["toolu_edit_out"])
			if tt.wantReason != "" {
				assert.Contains(t, stdout, tt.wantReason)
			}
			_, err := os.Stat(filepath.Join(ws, agentsim.SandboxInsideFile))
			assert.True(t, os.IsNotExist(err), "the simulator writes no file")
		})
	}
}

// TestSandboxUnavailable: with --sandbox enabled the turn never runs; the
// failure is on stderr, exit 1. Without it the turn is normal.
func TestSandboxUnavailable(t *testing.T) {
	env := []string{agentsim.Scenario(agentsim.ScenarioSandboxUnavailable)}
	stdout, stderr, code := runSim(t, env, "p", sandboxArgs...)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout, "no stream: the turn did not run")
	assert.Contains(t, stderr, agentsim.SandboxUnavailableText)
	assert.Contains(t, strings.ToLower(stderr), "sandbox unavailable", "the stable core cursor.Diagnose matches")

	stdout, stderr, code = runSim(t, env, "p", printArgs...)
	require.Equal(t, 0, code, stderr)
	assert.True(t, resultSeen(stdout))

}
