package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestSIGKILLOfARunWithToolsLeavesNoBridge: `run --tools` killed with
// SIGKILL while a tool's program answers a call leaves nothing running
// (the agent, the bridge program, the tool's program), and after `mcp
// reconcile` the worktree's config is back to its baseline.
func TestSIGKILLOfARunWithToolsLeavesNoBridge(t *testing.T) {
	for _, shape := range mcpShapes() {
		t.Run(shape.name, func(t *testing.T) {
			pidFile := filepath.Join(testkit.TempDir(t), "tool.pid")
			flags, _, tools, _, w := toolsRun(t, "hang", pidFile)
			dir := shape.make(t)
			before := takeSnapshot(t, dir)
			// The simulator's settings, which ChildEnv leaves to the caller.
			var simEnv []string
			for _, kv := range os.Environ() {
				if strings.HasPrefix(kv, "CURSORKIT_SIM_") {
					simEnv = append(simEnv, kv)
				}
			}
			c := startCLI(t, nil, simEnv, append(flags, "run", "--json", "--cwd", dir, "--tools", tools, "hi")...)

			var tool int
			testkit.Eventually(t, "the tool's program to run", execWait, func() bool {
				data, err := os.ReadFile(pidFile)
				if err != nil {
					return false
				}
				tool, err = strconv.Atoi(string(data))
				return err == nil
			})
			bridges, ok := testkit.PIDs(func(_ int, dir string) bool {
				cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
				return err == nil && bytes.Contains(cmdline, []byte("\x00__cursorkit-mcp-bridge"))
			})
			require.True(t, ok)
			require.NotEmpty(t, bridges, "the bridge program runs")
			w.Add(append(bridges, tool)...)
			killAndRequireGone(t, c, w)

			assert.NotEqual(t, before, takeSnapshot(t, dir), "the killed run's entry is still staged")
			code, stdout, stderr := runCLI(t, map[string]string{}, "", "mcp", "reconcile", "--cwd", dir)
			require.Equal(t, 0, code, "stderr: %s\nstdout: %s", stderr, stdout)
			assert.Equal(t, before, takeSnapshot(t, dir), "reconciled: the config is back to its baseline")
		})
	}
}
