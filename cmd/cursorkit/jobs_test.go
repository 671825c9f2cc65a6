package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/task"
)

// backgroundEnv is jobEnv plus this test binary installed as the worker
// (it plays the CLI: cliRole).
func backgroundEnv(t *testing.T, scenario string) (flags []string, env map[string]string, data, ws string) {
	t.Helper()
	flags, env, data, ws = jobEnv(t, scenario)
	env[envWorkerBin] = testkit.Install(t, testkit.TempDir(t), "cursorkit", cliRole)
	return flags, env, data, ws
}

func TestBackgroundTask(t *testing.T) {
	flags, env, data, ws := backgroundEnv(t, "")
	start := time.Now()
	code, stdout, stderr := runCLI(t, env, "explain", append(flags, "task", "--background", "--json", "--cwd", ws)...)
	require.Equal(t, 0, code, stderr)
	t.Logf("--background returned in %s", time.Since(start))
	started := decodeObject(t, stdout)
	id := started["id"].(string)
	assert.Equal(t, "starting", started["state"])

	env["CURSORKIT_WAIT_TIMEOUT"] = "60s"
	env["CURSORKIT_WAIT_POLL"] = "20ms"
	code, stdout, stderr = runCLI(t, env, "", "jobs", "result", id, "--wait", "--json")
	require.Equal(t, 0, code, stderr)
	out := outcomeLine(t, stdout)
	job := out["job"].(map[string]any)
	assert.Equal(t, "done", job["state"])
	assert.Equal(t, "background", job["delivery"])
	assert.NotNil(t, job["worker"])
	assert.Equal(t, "done", out["status"])

	code, stdout, _ = runCLI(t, env, "", "jobs", "result", id)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "The README says hello.")
	assert.Contains(t, stdout, "\ndelivery: background\n")
	assert.Contains(t, stdout, "\nstate: done\n")

	code, stdout, _ = runCLI(t, env, "", "jobs", "status", id)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "state: done")
	rec, err := task.Store{Dir: data}.Find("", id)
	require.NoError(t, err)
	assert.Equal(t, task.StateDone, rec.State)
}

func TestCancelABackgroundTask(t *testing.T) {
	flags, env, _, ws := backgroundEnv(t, agentsim.ScenarioHangMidStream)
	w := testkit.NewWatch(t)
	t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
	code, stdout, stderr := runCLI(t, env, "go", append(flags, "task", "--background", "--json", "--cwd", ws)...)
	require.Equal(t, 0, code, stderr)
	id := decodeObject(t, stdout)["id"].(string)
	testkit.Eventually(t, "the job to run", 30*time.Second, func() bool {
		_, out, _ := runCLI(t, env, "", "jobs", "status", id)
		return strings.Contains(out, "state: running")
	})
	code, stdout, stderr = runCLI(t, env, "", "jobs", "cancel", id)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "state: cancelled")
	w.RequireGone(execWait)
	code, stdout, _ = runCLI(t, env, "", "jobs", "cancel", id)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "nothing to cancel")
}
