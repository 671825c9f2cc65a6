package main

import (
	"bytes"
	"context"
	"encoding/json/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpstage"
)

// mcpServerFile is a --mcp-server file; its env value must never show in
// any message.
const (
	mcpSecret     = "tok-5ecret-9a1f"
	mcpServerJSON = `{"command": "node", "args": ["server.js", "--stdio"], "env": {"API_TOKEN": "` + mcpSecret + `"}}`
)

// mcpEnv prepares `run --mcp-server` against the simulator: the global
// flags, the record file and a watch over the agent's processes. PATH holds
// git when the machine has it: mcpstage runs it to learn the worktree's
// shape.
func mcpEnv(t *testing.T, scenario string) (flags []string, record string, w *testkit.Watch) {
	t.Helper()
	gitPath, err := exec.LookPath("git") // before cursorEnv empties PATH
	settings := cursorEnv(t, "", scenario)
	if err == nil {
		t.Setenv("PATH", os.Getenv("PATH")+string(os.PathListSeparator)+filepath.Dir(gitPath))
	}
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	w = testkit.NewWatch(t)
	t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
	record = filepath.Join(testkit.TempDir(t), "record.jsonl")
	t.Setenv(agentsim.EnvRecord, record)
	return []string{"--settings", settings, "--binary", bin}, record, w
}

// mcpShape is a worktree shape mcpstage supports.
type mcpShape struct {
	name string
	make func(t *testing.T) string
}

// mcpShapes are a plain directory (no git: the only one under Wine, whose
// prefix has no git) and, when git is installed, a repository.
func mcpShapes() []mcpShape {
	shapes := []mcpShape{{"no git", func(t *testing.T) string { return testkit.TempDir(t) }}}
	if _, err := exec.LookPath("git"); err == nil && !testkit.UnderWine() {
		shapes = append(shapes, mcpShape{"git repository", gitRepo})
	}
	return shapes
}

// snapshot is a worktree's .cursor as cursorkit must leave it: the
// config's bytes (nil: absent or not a file), what the config path is,
// and whether .cursor exists.
type snapshot struct {
	config     []byte
	configType string
	cursorDir  bool
}

func takeSnapshot(t *testing.T, dir string) snapshot {
	t.Helper()
	var s snapshot
	path := filepath.Join(dir, ".cursor", "mcp.json")
	if info, err := os.Lstat(path); err == nil {
		s.configType = info.Mode().Type().String()
		if info.Mode().IsRegular() {
			s.config, err = os.ReadFile(path)
			require.NoError(t, err)
		}
	} else {
		require.True(t, os.IsNotExist(err), "%v", err)
	}
	_, err := os.Lstat(filepath.Join(dir, ".cursor"))
	s.cursorDir = err == nil
	return s
}

// stagedServers returns the cursorkit servers of a config's bytes.
func stagedServers(t *testing.T, config string) map[string]map[string]any {
	t.Helper()
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal([]byte(config), &doc), "the staged config is JSON: %q", config)
	out := map[string]map[string]any{}
	for k, v := range doc.MCPServers {
		if strings.HasPrefix(k, mcpstage.DefaultKeyPrefix) {
			out[k] = v
		}
	}
	return out
}

// turnRecord is the simulator's record of the print turn ("" when none ran).
func turnRecord(t *testing.T, record string) *agentsim.Record {
	t.Helper()
	records, err := agentsim.ReadRecords(record)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	for i := range records {
		if strings.Contains(strings.Join(records[i].Args, " "), "--print") {
			return &records[i]
		}
	}
	return nil
}

// TestRunMCPServer: the server is staged for the turn (its key in
// .cursor/mcp.json while the agent runs, --approve-mcps in its argv, its
// tool allowed) and the config is back to its baseline, byte for byte,
// once the run is over; an operator's own server stays refused.
func TestRunMCPServer(t *testing.T) {
	const operator = "{\n    \"mcpServers\": {\"mine\": {\"command\": \"my-server\"}},\n    \"x\": 1\n}"
	for _, shape := range mcpShapes() {
		for _, tc := range []struct {
			name     string
			baseline string // "" : no config at all
			code     int
			kind     string
		}{
			{name: "no config before", code: 0},
			{name: "an operator's config with a server of its own", baseline: operator, code: 8, kind: "policy"},
		} {
			t.Run(shape.name+"/"+tc.name, func(t *testing.T) {
				flags, record, w := mcpEnv(t, agentsim.ScenarioMCPTool)
				dir := shape.make(t)
				if tc.baseline != "" {
					require.NoError(t, os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(dir, ".cursor", "mcp.json"), []byte(tc.baseline), 0o644))
				}
				before := takeSnapshot(t, dir)
				var statusBefore string
				if shape.name == "git repository" {
					statusBefore = gitStatus(t, dir)
				}
				server := testkit.TempFile(t, "server.json", mcpServerJSON)

				code, stdout, stderr := runCLI(t, map[string]string{}, "", append(flags, "run", "--json", "--write",
					"--cwd", dir, "--mcp-server", server, "--", "use the tools")...)
				require.Equal(t, tc.code, code, "stderr: %s", stderr)
				events, outcome := runEvents(t, stdout)
				assert.NotContains(t, stdout+stderr, mcpSecret, "the server's env never shows")

				rec := turnRecord(t, record)
				require.NotNil(t, rec, "the agent ran")
				assert.Contains(t, rec.Args, "--approve-mcps")
				assert.True(t, rec.ApproveMCPs)
				require.NotNil(t, rec.ProjectMCPConfig, "the agent saw a project config")
				staged := stagedServers(t, *rec.ProjectMCPConfig)
				require.Len(t, staged, 1, "one staged server while the agent ran: %s", *rec.ProjectMCPConfig)
				var key string
				for k, entry := range staged {
					key = k
					assert.Equal(t, "node", entry["command"])
					assert.Equal(t, []any{"server.js", "--stdio"}, entry["args"])
					assert.Equal(t, map[string]any{"API_TOKEN": mcpSecret}, entry["env"])
				}
				if tc.baseline != "" {
					assert.Contains(t, *rec.ProjectMCPConfig, `"mine"`, "the operator's server stays while the agent runs")
				}

				if tc.kind == "" {
					assert.Nil(t, outcome["kind"], "outcome: %v", outcome)
					var called []string
					for _, ev := range events {
						if ev["type"] == "tool_completed" && ev["tool"] == "mcp" {
							called = append(called, ev["args"].(map[string]any)["providerIdentifier"].(string))
						}
					}
					assert.Equal(t, []string{key}, called, "the staged server's tool ran")
				} else {
					assert.Equal(t, tc.kind, outcome["kind"], "outcome: %v", outcome)
					assert.Contains(t, outcome["message"], `MCP server "mine"`)
				}
				assert.Equal(t, before, takeSnapshot(t, dir), "the config is back to its baseline, byte for byte")
				if shape.name == "git repository" {
					assert.Equal(t, statusBefore, gitStatus(t, dir), "git's view of the worktree is unchanged")
				}
				w.RequireGone(10 * time.Second)
			})
		}
	}
}

func gitStatus(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--porcelain", "--ignored=no")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.TrimSpace(string(out))
}

// TestRunWithoutMCPServerApprovesNothing: no --mcp-server, no
// --approve-mcps, and nothing is staged.
func TestRunWithoutMCPServerApprovesNothing(t *testing.T) {
	flags, record, w := mcpEnv(t, agentsim.ScenarioMCPTool)
	dir := testkit.TempDir(t)
	code, _, stderr := runCLI(t, map[string]string{}, "", append(flags, "run", "--json", "--write", "--cwd", dir, "hi")...)
	require.Equal(t, 0, code, stderr)
	rec := turnRecord(t, record)
	require.NotNil(t, rec)
	assert.NotContains(t, rec.Args, "--approve-mcps")
	assert.Nil(t, rec.ProjectMCPConfig)
	assert.Equal(t, snapshot{}, takeSnapshot(t, dir))
	w.RequireGone(10 * time.Second)
}

// TestRunMCPServerCancelled: a run stopped while the agent hangs stops the
// tree, exits 130, and still puts the config back.
func TestRunMCPServerCancelled(t *testing.T) {
	for _, shape := range mcpShapes() {
		t.Run(shape.name, func(t *testing.T) {
			flags, _, w := mcpEnv(t, agentsim.ScenarioHangMidStream)
			dir := shape.make(t)
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755))
			const baseline = "{\"mcpServers\":{}}\n\n"
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".cursor", "mcp.json"), []byte(baseline), 0o644))
			before := takeSnapshot(t, dir)
			var statusBefore string
			if shape.name == "git repository" {
				statusBefore = gitStatus(t, dir)
			}
			server := testkit.TempFile(t, "server.json", mcpServerJSON)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := newLineWatcher()
			done := make(chan int, 1)
			go func() {
				var errOut bytes.Buffer
				done <- run(ctx, append(flags, "run", "--json", "--cwd", dir, "--mcp-server", server, "hi"),
					strings.NewReader(""), pw, &errOut, func(k string) string {
						if k == envProbeTimeout {
							return probeTimeoutForTests()
						}
						return ""
					})
			}()
			select {
			case <-pr: // the first event arrived: the agent runs
			case <-time.After(20 * time.Second):
				t.Fatal("no event from the agent")
			}
			during, err := os.ReadFile(filepath.Join(dir, ".cursor", "mcp.json"))
			require.NoError(t, err)
			assert.Len(t, stagedServers(t, string(during)), 1, "staged while the agent runs: %s", during)
			if shape.name == "git repository" {
				// The exclusion covers the config itself, so an operator's
				// untracked mcp.json may disappear from git's view while
				// staged; nothing may appear.
				for _, line := range strings.Split(gitStatus(t, dir), "\n") {
					if line != "" {
						assert.Contains(t, statusBefore, line, "git sees none of the staging files")
					}
				}
			}
			cancel()
			select {
			case code := <-done:
				assert.Equal(t, 130, code)
			case <-time.After(30 * time.Second):
				t.Fatal("run did not return after cancel")
			}
			assert.Equal(t, before, takeSnapshot(t, dir), "released after a cancelled run too")
			w.RequireGone(10 * time.Second)
		})
	}
}

// TestRunMCPServerRefused: a stage mcpstage refuses fails the run before
// anything is launched, with its kind (setup), as one JSON error object.
func TestRunMCPServerRefused(t *testing.T) {
	tests := []struct {
		name  string
		git   bool // needs a repository
		unix  bool // needs symbolic links
		setup func(t *testing.T, dir string)
	}{
		{name: "a tracked mcp.json", git: true, setup: func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".cursor", "mcp.json"), []byte(`{"mcpServers":{}}`), 0o644))
			gitRun(t, dir, "add", ".cursor/mcp.json")
			gitRun(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "config")
		}},
		{name: "a directory in place of mcp.json", setup: func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".cursor", "mcp.json"), 0o755))
		}},
		{name: "a symlinked .cursor", unix: true, setup: func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink(testkit.TempDir(t), filepath.Join(dir, ".cursor")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.unix && runtime.GOOS == "windows" {
				t.Skip("symbolic links need privileges on Windows")
			}
			flags, record, w := mcpEnv(t, agentsim.ScenarioMCPTool)
			var dir string
			if tt.git {
				dir = gitRepo(t)
			} else {
				dir = testkit.TempDir(t)
			}
			tt.setup(t, dir)
			before := takeSnapshot(t, dir)
			server := testkit.TempFile(t, "server.json", mcpServerJSON)
			code, stdout, stderr := runCLI(t, map[string]string{}, "", append(flags, "run", "--json", "--cwd", dir, "--mcp-server", server, "hi")...)
			assert.Equal(t, failure.ExitCode(failure.Setup), code, "stderr: %s", stderr)
			obj := decodeObject(t, stdout)
			require.Contains(t, obj, "error", "one JSON error object")
			assert.Equal(t, "setup", obj["error"].(map[string]any)["kind"])
			assert.Nil(t, turnRecord(t, record), "nothing was launched")
			assert.Equal(t, before, takeSnapshot(t, dir))
			w.RequireGone(10 * time.Second)
		})
	}
}

// TestRunMCPServerBadFile: a --mcp-server file that is not one
// {command, args, env} object is input, names what is wrong, never shows
// an env value, and stages and launches nothing.
func TestRunMCPServerBadFile(t *testing.T) {
	tests := []struct {
		name, body string
		missing    bool
		msg        string
	}{
		{name: "missing", missing: true, msg: "does not exist"},
		{name: "not JSON", body: `{"command": "node", "env": {"K": "` + mcpSecret + `"`, msg: "not valid JSON"},
		{name: "not an object", body: `["node"]`, msg: "one JSON object"},
		{name: "two values", body: `{"command":"node"} {}`, msg: "more than one JSON value"},
		{name: "no command", body: `{"args": [], "env": {"K": "` + mcpSecret + `"}}`, msg: `"command" is missing`},
		{name: "command not a string", body: `{"command": ["node"]}`, msg: `"command" must be a string`},
		{name: "args not strings", body: `{"command": "node", "args": ["a", 1]}`, msg: `"args" must be an array of strings`},
		{name: "env value not a string", body: `{"command": "node", "env": {"K": {"v": "` + mcpSecret + `"}}}`, msg: `"env" must be an object`},
		{name: "an unknown member", body: `{"command": "node", "cwd": "/x"}`, msg: `unknown member "cwd"`},
		{name: "a member twice", body: `{"command": "node", "env": {"K": "` + mcpSecret + `", "K": "b"}}`, msg: "given twice"},
		{name: "an empty command", body: `{"command": "  ", "env": {"K": "` + mcpSecret + `"}}`, msg: "command is empty"},
		{name: "a NUL in an env value", body: `{"command": "node", "env": {"K": "` + mcpSecret + `\u0000"}}`, msg: "NUL"},
		{name: "too large", body: `{"command": "node", "args": ["` + strings.Repeat("a", 1<<20) + `"]}`, msg: "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flags, record, w := mcpEnv(t, agentsim.ScenarioMCPTool)
			dir := testkit.TempDir(t)
			path := filepath.Join(testkit.TempDir(t), "server.json")
			if !tt.missing {
				path = testkit.TempFile(t, "server.json", tt.body)
			}
			code, stdout, stderr := runCLI(t, map[string]string{}, "", append(flags, "run", "--json", "--cwd", dir, "--mcp-server", path, "hi")...)
			assert.Equal(t, 2, code, "stderr: %s", stderr)
			obj := decodeObject(t, stdout)
			require.Contains(t, obj, "error")
			e := obj["error"].(map[string]any)
			assert.Equal(t, "input", e["kind"])
			assert.Contains(t, e["message"], tt.msg)
			assert.NotContains(t, stdout+stderr, mcpSecret, "an env value never shows")
			assert.Nil(t, turnRecord(t, record), "nothing was launched")
			assert.Equal(t, snapshot{}, takeSnapshot(t, dir), "nothing was staged")
			w.RequireGone(10 * time.Second)
		})
	}
}

// TestRunMCPServerBadHeartbeat: a heartbeat period that is not a positive
// duration below the lease's TTL is refused before anything is staged.
func TestRunMCPServerBadHeartbeat(t *testing.T) {
	for _, value := range []string{"soon-ish", (mcpstage.LeaseTTL + time.Minute).String()} {
		t.Run(value, func(t *testing.T) {
			flags, record, w := mcpEnv(t, agentsim.ScenarioMCPTool)
			dir := testkit.TempDir(t)
			server := testkit.TempFile(t, "server.json", mcpServerJSON)
			code, stdout, stderr := runCLI(t, map[string]string{envMCPHeartbeat: value}, "", append(flags, "run", "--json", "--cwd", dir, "--mcp-server", server, "hi")...)
			assert.Equal(t, failure.ExitInput, code, "stderr: %s", stderr)
			e := decodeObject(t, stdout)["error"].(map[string]any)
			assert.Equal(t, "input", e["kind"])
			assert.Contains(t, e["message"], envMCPHeartbeat)
			assert.Nil(t, turnRecord(t, record), "nothing was launched")
			assert.Equal(t, snapshot{}, takeSnapshot(t, dir), "nothing was staged")
			w.RequireGone(10 * time.Second)
		})
	}
}

// TestRunMCPServerHeartbeats: the lease is renewed while the turn runs; a
// renewal that fails (here: the lease was released behind the run's back)
// is a warning event, the turn goes on, and a release that finds nothing
// to release is a warning too.
func TestRunMCPServerHeartbeats(t *testing.T) {
	flags, _, w := mcpEnv(t, agentsim.ScenarioHangMidStream)
	dir := testkit.TempDir(t)
	server := testkit.TempFile(t, "server.json", mcpServerJSON)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		var errOut bytes.Buffer
		done <- run(ctx, append(flags, "run", "--json", "--cwd", dir, "--mcp-server", server, "hi"),
			strings.NewReader(""), &out, &errOut, func(k string) string {
				switch k {
				case envMCPHeartbeat:
					return "50ms"
				case envProbeTimeout:
					return probeTimeoutForTests()
				}
				return ""
			})
	}()
	stager, err := mcpstage.New(context.Background(), dir, mcpstage.Options{})
	require.NoError(t, err)
	var lease mcpstage.LeaseStatus
	testkit.Eventually(t, "a renewed lease", 20*time.Second, func() bool {
		st, err := stager.Status(context.Background())
		if err != nil || len(st.Leases) != 1 {
			return false
		}
		lease = st.Leases[0]
		return lease.HeartbeatAt.After(lease.AcquiredAt)
	})
	// The lease goes behind the run's back (retried: the run's heartbeats
	// hold the lock now and then).
	testkit.Eventually(t, "the lease released by another process", 20*time.Second, func() bool {
		return stager.Release(context.Background(), lease.ID) == nil
	})
	testkit.Eventually(t, "a heartbeat warning", 20*time.Second, func() bool {
		return strings.Contains(out.String(), `"code":"`+mcpstage.WarnHeartbeat+`"`)
	})
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 130, code, "the failed renewals did not end the turn: the cancel did")
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	_, outcome := runEvents(t, out.String())
	assert.Equal(t, "cancelled", outcome["kind"])
	codes := warningCodes(outcome)
	assert.Contains(t, codes, mcpstage.WarnHeartbeat)
	assert.Contains(t, codes, mcpstage.WarnRelease)
	assert.Equal(t, snapshot{}, takeSnapshot(t, dir))
	w.RequireGone(10 * time.Second)
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
