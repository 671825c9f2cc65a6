package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// mcpWorktree is a git repository (a plain directory where the machine has
// no git: the Wine lane) with an operator's config.
func mcpWorktree(t *testing.T) (dir, config, baseline string) {
	t.Helper()
	dir = testkit.TempDir(t)
	if git, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command(git, "-C", dir, "init", "-q").CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	config = filepath.Join(dir, ".cursor", "mcp.json")
	baseline = "{\"mcpServers\": {\"mine\": {\"command\": \"x\"}}}"
	require.NoError(t, os.MkdirAll(filepath.Dir(config), 0o755))
	require.NoError(t, os.WriteFile(config, []byte(baseline), 0o644))
	return dir, config, baseline
}

func TestMCPCommands(t *testing.T) {
	dir, config, baseline := mcpWorktree(t)
	self := strconv.Itoa(os.Getpid())
	code, stdout, stderr := runCLI(t, nil, "", "mcp", "stage", "--cwd", dir, "--owner-pid", self, "--env", "TOKEN=s3cr3t", "--json", "--", "node", "server.js")
	require.Equal(t, 0, code, stderr)
	lease := decodeObject(t, stdout)
	id, key := lease["lease"].(string), lease["serverKey"].(string)
	require.NotEmpty(t, id)
	got, err := os.ReadFile(config)
	require.NoError(t, err)
	assert.Contains(t, string(got), key)
	assert.Contains(t, string(got), `"mine"`)

	code, stdout, _ = runCLI(t, nil, "", "mcp", "status", "--cwd", dir, "--json")
	require.Equal(t, 0, code)
	st := decodeObject(t, stdout)
	assert.Equal(t, true, st["staged"])
	require.Len(t, st["leases"], 1)
	assert.NotContains(t, stdout, "s3cr3t", "status never shows env values")
	code, stdout, _ = runCLI(t, nil, "", "mcp", "status", "--cwd", dir)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "lease "+id)

	code, _, stderr = runCLI(t, nil, "", "mcp", "heartbeat", id, "--cwd", dir)
	require.Equal(t, 0, code, stderr)
	code, _, stderr = runCLI(t, nil, "", "mcp", "release", id, "--cwd", dir)
	require.Equal(t, 0, code, stderr)
	got, err = os.ReadFile(config)
	require.NoError(t, err)
	assert.Equal(t, baseline, string(got), "the baseline, byte for byte")
	code, stdout, _ = runCLI(t, nil, "", "mcp", "reconcile", "--cwd", dir)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "clean")

	code, stdout, _ = runCLI(t, nil, "", "mcp", "release", id, "--cwd", dir, "--json")
	assert.Equal(t, 2, code, "an unknown lease is input")
	assert.Equal(t, "input", decodeObject(t, stdout)["error"].(map[string]any)["kind"])
}

func TestMCPQuarantineSaysHowToRecover(t *testing.T) {
	dir, config, _ := mcpWorktree(t)
	self := strconv.Itoa(os.Getpid())
	code, stdout, stderr := runCLI(t, nil, "", "mcp", "stage", "--cwd", dir, "--owner-pid", self, "--json", "--", "node")
	require.Equal(t, 0, code, stderr)
	id := decodeObject(t, stdout)["lease"].(string)
	require.NoError(t, os.WriteFile(config, []byte(`{"mcpServers": {`), 0o644))
	code, stdout, _ = runCLI(t, nil, "", "mcp", "stage", "--cwd", dir, "--owner-pid", self, "--json", "--", "node")
	assert.Equal(t, 4, code, "quarantined is setup")
	msg := decodeObject(t, stdout)["error"].(map[string]any)["message"].(string)
	assert.Contains(t, msg, "To recover")
	assert.Contains(t, msg, "cursorkit mcp reconcile")
	code, stdout, _ = runCLI(t, nil, "", "mcp", "status", "--cwd", dir)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "quarantine: ")
	require.NoError(t, os.Remove(config))
	code, stdout, _ = runCLI(t, nil, "", "mcp", "reconcile", "--cwd", dir, "--json")
	require.Equal(t, 0, code)
	assert.Equal(t, false, decodeObject(t, stdout)["quarantined"])
	// The lease lives on (its owner runs): its entry is back, and its
	// release leaves the operator's latest state, no file.
	got, err := os.ReadFile(config)
	require.NoError(t, err)
	assert.Contains(t, string(got), decodeLeaseKey(t, id))
	code, _, stderr = runCLI(t, nil, "", "mcp", "release", id, "--cwd", dir)
	require.Equal(t, 0, code, stderr)
	assert.NoFileExists(t, config)
}

func TestMCPUsage(t *testing.T) {
	dir := testkit.TempDir(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"mcp"}, "needs a subcommand"},
		{"stage without command", []string{"mcp", "stage", "--cwd", dir}, "needs the server's command"},
		{"stage with operand", []string{"mcp", "stage", "x", "--cwd", dir, "--", "node"}, "after --"},
		{"bad env", []string{"mcp", "stage", "--cwd", dir, "--env", "NOEQUALS", "--", "node"}, "K=V"},
		{"release without lease", []string{"mcp", "release", "--cwd", dir}, "one lease id"},
		{"env on release", []string{"mcp", "release", "x", "--cwd", dir, "--env", "A=B"}, "stage's"},
		{"unknown", []string{"mcp", "frob", "--cwd", dir}, "unknown mcp subcommand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, nil, "", tt.args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, tt.want)
		})
	}
}

// decodeLeaseKey is the server key of lease id.
func decodeLeaseKey(t *testing.T, id string) string {
	t.Helper()
	return "cursorkit-tools-" + id
}
