package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/procid"
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
	// The foreground's layout: the text, a blank line, the footer.
	assert.Contains(t, stdout, "The README says hello.\n\ncursor-session: ")
	assert.Contains(t, stdout, "The README says hello.")
	assert.Contains(t, stdout, "\ndelivery: background\n")
	assert.Contains(t, stdout, "\nstate: done\n")

	code, stdout, _ = runCLI(t, env, "", "jobs", "status", id)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "state: done")
	rec, err := task.Store{Dir: data}.Find("", id)
	require.NoError(t, err)
	assert.Equal(t, task.StateDone, rec.State)

	code, stdout, _ = runCLI(t, env, "", "jobs", "history", "--all", "--json")
	require.Equal(t, 0, code)
	jobs := decodeObject(t, stdout)["jobs"].([]any)
	require.Len(t, jobs, 1)
	first := jobs[0].(map[string]any)
	assert.Equal(t, id, first["id"])
	assert.Equal(t, rec.SessionID, first["resumeSession"])
	assert.NotContains(t, stdout, "explain", "history never shows the prompt")
	code, _, _ = runCLI(t, env, "", "jobs", "history", "--limit", "0")
	assert.Equal(t, 2, code)
	code, stdout, _ = runCLI(t, env, "", "jobs", "status", "task-20200101T000000Z-00000000", "--json")
	assert.Equal(t, 2, code)
	assert.Equal(t, "input", decodeObject(t, stdout)["error"].(map[string]any)["kind"])
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

// TestResultWaitBudget: --wait ends when its budget does, with the output
// so far ending in state: running and exit 12.
func TestResultWaitBudget(t *testing.T) {
	flags, env, _, ws := backgroundEnv(t, agentsim.ScenarioHangMidStream)
	// The job's own deadline ends it; the test waits for that (its worker
	// having stopped the agent's tree) before its directories go.
	code, stdout, stderr := runCLI(t, env, "go", append(flags, "task", "--background", "--timeout", "3s", "--json", "--cwd", ws)...)
	require.Equal(t, 0, code, stderr)
	id := decodeObject(t, stdout)["id"].(string)
	t.Cleanup(func() {
		wait := map[string]string{"CURSORKIT_WAIT_TIMEOUT": "60s", "CURSORKIT_WAIT_POLL": "50ms"}
		for k, v := range env {
			if _, set := wait[k]; !set {
				wait[k] = v
			}
		}
		code, _, _ := runCLI(t, wait, "", "jobs", "result", id, "--wait")
		assert.Equal(t, 10, code, "the job ends at its own deadline")
	})
	env["CURSORKIT_WAIT_TIMEOUT"] = "300ms"
	env["CURSORKIT_WAIT_POLL"] = "20ms"
	code, stdout, _ = runCLI(t, env, "", "jobs", "result", id, "--wait")
	assert.Equal(t, exitStillRunning, code)
	assert.True(t, strings.HasSuffix(stdout, "state: running\n") || strings.HasSuffix(stdout, "state: starting\n"), stdout)
}

// TestAKilledWorkerIsDiedAndLeavesNothing: kill -9 of the worker: its
// agent's tree goes with it (the launch guard, or the Job Object), and the
// job reads died once its worker is gone.
func TestAKilledWorkerIsDiedAndLeavesNothing(t *testing.T) {
	flags, env, data, ws := backgroundEnv(t, agentsim.ScenarioLinger)
	w := testkit.NewWatch(t)
	t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
	code, stdout, stderr := runCLI(t, env, "go", append(flags, "task", "--background", "--json", "--cwd", ws)...)
	require.Equal(t, 0, code, stderr)
	id := decodeObject(t, stdout)["id"].(string)
	w.WaitRecorded("linger", 30*time.Second) // the agent's lingering worker is up
	rec, err := task.Store{Dir: data}.Find("", id)
	require.NoError(t, err)
	require.NotNil(t, rec.Worker)
	require.NoError(t, procid.Identity{PID: rec.Worker.PID, Created: rec.Worker.Created}.Kill(context.Background()))
	w.RequireGone(execWait)
	testkit.Eventually(t, "the job to read died", 20*time.Second, func() bool {
		_, out, _ := runCLI(t, env, "", "jobs", "status", id)
		return strings.Contains(out, "state: died")
	})
	code, stdout, _ = runCLI(t, env, "", "jobs", "result", id, "--json")
	assert.Equal(t, 11, code)
	assert.Equal(t, "died", outcomeLine(t, stdout)["job"].(map[string]any)["state"])
}
