package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestRunToolsReportsARefusedBridge: a bridge program that the turn's
// agent did not start (here this test starts the staged server itself,
// as another turn's Cursor on the worktree would) is refused, and the run
// says so once, as an mcp_bridge_refused warning naming no secret.
func TestRunToolsReportsARefusedBridge(t *testing.T) {
	pidFile := filepath.Join(testkit.TempDir(t), "tool.pid")
	flags, _, tools, _, w := toolsRun(t, "hang", pidFile)
	dir := testkit.TempDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append(flags, "run", "--json", "--cwd", dir, "--tools", tools, "hi"),
			strings.NewReader(""), &out, &errOut, func(k string) string {
				if k == envProbeTimeout {
					return probeTimeoutForTests()
				}
				return ""
			})
	}()
	testkit.Eventually(t, "the tool's program to run", 30*time.Second, func() bool {
		_, err := os.Stat(pidFile)
		return err == nil
	})

	// Another agent starts the staged bridge, twice.
	config, err := os.ReadFile(filepath.Join(dir, ".cursor", "mcp.json"))
	require.NoError(t, err)
	servers := stagedServers(t, string(config))
	require.Len(t, servers, 1)
	for _, entry := range servers {
		for range 2 {
			var args []string
			for _, a := range entry["args"].([]any) {
				args = append(args, a.(string))
			}
			bridge := exec.Command(entry["command"].(string), args...)
			bridge.Env = os.Environ()
			for k, v := range entry["env"].(map[string]any) {
				bridge.Env = append(bridge.Env, k+"="+v.(string))
			}
			var stderr bytes.Buffer
			bridge.Stdin, bridge.Stderr = strings.NewReader(""), &stderr
			assert.Error(t, bridge.Run(), "the bridge program was let in")
			assert.Contains(t, stderr.String(), "refused")
		}
	}
	testkit.Eventually(t, "the refusal's warning", 30*time.Second, func() bool {
		return strings.Contains(out.String(), `"code":"mcp_bridge_refused"`)
	})
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	w.RequireGone(10 * time.Second)

	events, outcome := runEvents(t, out.String())
	var warnings []string
	for _, ev := range events {
		if ev["type"] == "warning" && ev["code"] == "mcp_bridge_refused" {
			warnings = append(warnings, ev["message"].(string))
		}
	}
	assert.Equal(t, []string{"the MCP tool bridge refused a connection that came from a process the turn's agent did not start"}, warnings, "once for both")
	assert.Contains(t, outcome["warnings"], map[string]any{"code": "mcp_bridge_refused", "message": warnings[0]})
}
