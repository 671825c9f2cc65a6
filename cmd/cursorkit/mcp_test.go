package main

import (
	"bufio"
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

// TestMCPStageDefaultOwnerIsTheScript: a script run as a job of its own
// (as an interactive shell starts one) stages through a command
// substitution, a pipeline in one, or xargs, whose processes are gone as
// soon as the stage returns; the lease follows the script: a reconcile
// while the script runs keeps it, the first one after it exits drops it.
func TestMCPStageDefaultOwnerIsTheScript(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no process groups: the lease follows the parent")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := testkit.TempDir(t)
	testkit.Install(t, bin, "cursorkit", cliRole)
	tests := []struct {
		name  string
		stage string // sets lease to the stage's JSON output; $1 is the worktree
	}{
		{"command substitution", `lease=$(cursorkit mcp stage --cwd "$1" --json -- node server.js 2>&1)`},
		{"pipeline in a substitution", `lease=$(cursorkit mcp stage --cwd "$1" --json -- node server.js 2>&1 | cat)`},
		{"xargs", `lease=$(echo server.js | xargs cursorkit mcp stage --cwd "$1" --json -- node 2>&1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, config, baseline := mcpWorktree(t)
			script := filepath.Join(testkit.TempDir(t), "stage.sh")
			body := tt.stage + "\n" + `[ $? = 0 ] || { printf '%s\n' "$lease" >&2; exit 1; }
printf '%s\n' "$lease"
read -r _
`
			require.NoError(t, os.WriteFile(script, []byte(body), 0o644))
			// set -m runs the script as a job, in a process group of its
			// own, as an interactive shell does.
			cmd := exec.Command(bash, "-c", `set -m; bash "$0" "$1" & wait $!`, script, dir)
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			lines := make(chan string, 1)
			exited := make(chan struct{})
			var waitErr error // once exited is closed
			go func() {
				line, _ := bufio.NewReader(stdout).ReadString('\n')
				lines <- line
				_, _ = io.Copy(io.Discard, stdout)
				waitErr = cmd.Wait()
				close(exited)
			}()
			t.Cleanup(func() { _ = stdin.Close(); <-exited })

			var line string
			select {
			case line = <-lines:
			case <-time.After(30 * time.Second):
				t.Fatal("the script printed no lease")
			}
			if line == "" {
				<-exited // stderr is complete once the script is waited for
				t.Fatalf("the script printed no lease (%v): %s", waitErr, stderr.String())
			}
			id := decodeObject(t, line)["lease"].(string)

			code, out, errOut := runCLI(t, nil, "", "mcp", "reconcile", "--cwd", dir, "--json")
			require.Equal(t, 0, code, errOut)
			assert.Empty(t, decodeObject(t, out)["dropped"], "the script still runs")
			got, err := os.ReadFile(config)
			require.NoError(t, err)
			assert.Contains(t, string(got), decodeLeaseKey(t, id))

			_, err = io.WriteString(stdin, "done\n")
			require.NoError(t, err)
			select {
			case <-exited:
				require.NoError(t, waitErr, "stderr: %s", stderr.String())
			case <-time.After(30 * time.Second):
				t.Fatal("the script did not end")
			}
			code, out, errOut = runCLI(t, nil, "", "mcp", "reconcile", "--cwd", dir, "--json")
			require.Equal(t, 0, code, errOut)
			assert.Equal(t, []any{id}, decodeObject(t, out)["dropped"], "the script is gone")
			got, err = os.ReadFile(config)
			require.NoError(t, err)
			assert.Equal(t, baseline, string(got))
		})
	}
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
