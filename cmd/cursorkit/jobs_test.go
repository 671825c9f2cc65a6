package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
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
	assert.NotNil(t, job["agent"])
	assert.Equal(t, "done", out["status"])
	// The outcome the worker stored, not one made up from the record.
	assert.Equal(t, true, out["usage"].(map[string]any)["reported"], "usage is the stored outcome's")

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
	rec, err := jobs.Store{Dir: data}.Find("", id)
	require.NoError(t, err)
	assert.Equal(t, jobs.StateDone, rec.State)

	code, stdout, _ = runCLI(t, env, "", "jobs", "history", "--all", "--json")
	require.Equal(t, 0, code)
	listed := decodeObject(t, stdout)["jobs"].([]any)
	require.Len(t, listed, 1)
	first := listed[0].(map[string]any)
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
	rec, err := jobs.Store{Dir: data}.Find("", id)
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

// simEnv is the simulator's settings of this test's environment, for a
// child that testkit.ChildEnv would otherwise strip them from.
func simEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(strings.ToUpper(kv), "CURSORKIT_SIM_") {
			env = append(env, kv)
		}
	}
	return env
}

// waitRunning waits until job id runs its agent (recorded) and returns the
// record.
func waitRunning(t *testing.T, data, id string) *jobs.Record {
	t.Helper()
	var rec *jobs.Record
	testkit.Eventually(t, "job "+id+" to run its agent", execWait, func() bool {
		r, err := jobs.Store{Dir: data}.Find("", id)
		if err == nil && r.State == jobs.StateRunning && r.Worker != nil && r.Agent != nil {
			rec = r
			return true
		}
		return false
	})
	return rec
}

func alive(t *testing.T, p *jobs.ProcessRef) bool {
	t.Helper()
	ok, err := procid.Identity{PID: p.PID, Created: p.Created}.Alive(context.Background())
	require.NoError(t, err)
	return ok
}

// TestCleanupStopsItsSessionsJobsOnly: jobs cleanup --session stops every
// running job started with that CURSORKIT_SESSION, trees included, and no
// other.
func TestCleanupStopsItsSessionsJobsOnly(t *testing.T) {
	flags, env, data, ws := backgroundEnv(t, agentsim.ScenarioHangMidStream)
	w := testkit.NewWatch(t)
	t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
	start := func(session string) string {
		t.Setenv(jobs.EnvSession, session)
		code, stdout, stderr := runCLI(t, env, "go", append(flags, "task", "--background", "--json", "--cwd", ws)...)
		require.Equal(t, 0, code, "%s %s", stdout, stderr)
		return decodeObject(t, stdout)["id"].(string)
	}
	ours := []string{start("orchestrator-1"), start("orchestrator-1")}
	other := start("orchestrator-2")
	var agents []*jobs.ProcessRef
	for _, id := range ours {
		agents = append(agents, waitRunning(t, data, id).Agent)
	}
	otherAgent := waitRunning(t, data, other).Agent

	code, stdout, stderr := runCLI(t, env, "", "jobs", "cleanup", "--session", "orchestrator-1", "--json")
	require.Equal(t, 0, code, stderr)
	answer := decodeObject(t, stdout)
	assert.Equal(t, "orchestrator-1", answer["session"])
	stopped := answer["jobs"].([]any)
	require.Len(t, stopped, 2)
	for _, j := range stopped {
		m := j.(map[string]any)
		assert.Contains(t, ours, m["id"])
		assert.Equal(t, "cancelled", m["state"])
		assert.Equal(t, true, m["cancelled"])
	}
	for _, a := range agents {
		assert.False(t, alive(t, a), "the answer comes after the agents are gone")
	}
	rec, err := jobs.Store{Dir: data}.Find("", other)
	require.NoError(t, err)
	assert.Equal(t, jobs.StateRunning, rec.State, "another session's job is not touched")
	assert.True(t, alive(t, otherAgent))

	code, stdout, _ = runCLI(t, env, "", "jobs", "cleanup", "--session", "orchestrator-1")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "no running job of session orchestrator-1")
	code, _, stderr = runCLI(t, env, "", "jobs", "cleanup")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "needs --session")
	code, _, _ = runCLI(t, env, "", "jobs", "cleanup", "--session", "x", other)
	assert.Equal(t, 2, code)
	code, _, _ = runCLI(t, env, "", "jobs", "status", "--session", "x")
	assert.Equal(t, 2, code)

	code, stdout, stderr = runCLI(t, env, "", "jobs", "cleanup", "--session", "orchestrator-2")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, other+"  cancelled")
	w.RequireGone(execWait)
}

// TestCancelBeforeTheWorkerCame: a job cancelled while it has no worker yet
// is cancelled at once, and its worker, when it comes, runs nothing.
func TestCancelBeforeTheWorkerCame(t *testing.T) {
	_, env, data, ws := jobEnv(t, "")
	// A background job as --background prepares it, its worker not started.
	store := jobs.Store{Dir: data}
	rec, err := task.Prepare(context.Background(), store, task.Spec{Role: jobs.RoleTask, Mode: jobs.ModeConsult,
		Prompt: "secret-prompt-77", Workspace: ws, Background: true}, task.Options{})
	require.NoError(t, err)
	id := rec.ID
	// Where jobs.Start leaves the prompt for the worker: <data>/runs/<id>/prompt.
	promptFile := filepath.Join(data, "runs", id, "prompt")
	require.NoError(t, os.WriteFile(promptFile, []byte("secret-prompt-77"), 0o600))

	code, stdout, stderr := runCLI(t, env, "", "jobs", "cancel", id, "--json")
	require.Equal(t, 0, code, stderr)
	answer := decodeObject(t, stdout)
	assert.Equal(t, "cancelled", answer["state"])
	assert.Equal(t, true, answer["cancelled"])

	code, _, stderr = runCLI(t, env, "", workerCommand, "--data", data, "--workspace", ws, "--id", id)
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr, "before its worker started: nothing to run")
	assert.NotContains(t, stderr, "secret-prompt-77")
	_, err = os.Stat(promptFile)
	assert.ErrorIs(t, err, os.ErrNotExist, "the prompt does not stay behind")
	rec, err = store.Find("", id)
	require.NoError(t, err)
	assert.Equal(t, jobs.StateCancelled, rec.State)
	assert.Nil(t, rec.Worker)
	assert.Nil(t, rec.Agent, "no agent ever started")
}

// TestCancelAForegroundTask: jobs cancel from another terminal stops a
// foreground task through its own command, which records cancelled (on
// Windows the command is killed, its Job Object takes the tree, and jobs
// cancel records it).
func TestCancelAForegroundTask(t *testing.T) {
	flags, env, data, ws := jobEnv(t, agentsim.ScenarioHangMidStream)
	w := testkit.NewWatch(t)
	t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
	cmd := exec.Command(testBinary(t), append(flags, "task", "--json", "--cwd", ws)...)
	cmd.Env = testkit.ChildEnv(cliRole, append(simEnv(), jobs.EnvData+"="+data)...)
	cmd.Stdin = strings.NewReader("go")
	var out strings.Builder
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	exited := make(chan int, 1)
	go func() { _ = cmd.Wait(); exited <- cmd.ProcessState.ExitCode() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })

	var id string
	testkit.Eventually(t, "the foreground job to run its agent", execWait, func() bool {
		recs, _ := jobs.Store{Dir: data}.List("", 1)
		if len(recs) == 1 && recs[0].Agent != nil {
			id = recs[0].ID
			return true
		}
		return false
	})
	rec, err := jobs.Store{Dir: data}.Find("", id)
	require.NoError(t, err)
	require.NotNil(t, rec.Worker)
	assert.Equal(t, cmd.Process.Pid, rec.Worker.PID, "the foreground command owns its job")
	assert.Equal(t, "foreground", rec.Delivery)

	code, stdout, stderr := runCLI(t, env, "", "jobs", "cancel", id)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "state: cancelled")
	select {
	case code := <-exited:
		exited <- code
		if runtime.GOOS != "windows" {
			assert.Equal(t, 130, code, "the command stopped its turn as cancelled")
			assert.Contains(t, out.String(), `"status":"cancelled"`)
		}
	case <-time.After(execWait):
		t.Fatal("the foreground command did not exit")
	}
	w.RequireGone(execWait)
	rec, err = jobs.Store{Dir: data}.Find("", id)
	require.NoError(t, err)
	assert.Equal(t, jobs.StateCancelled, rec.State)
}

// recordedJob saves a background task of a new data directory in state,
// run by worker (nil: none yet), and returns the environment that finds
// it, the store and the record.
func recordedJob(t *testing.T, state jobs.State, worker *jobs.ProcessRef) (map[string]string, jobs.Store, *jobs.Record) {
	t.Helper()
	store := jobs.Store{Dir: testkit.TempDir(t)}
	now := time.Now().UTC()
	rec := &jobs.Record{Engine: "cursor", ID: jobs.NewID(jobs.RoleTask, now), Role: jobs.RoleTask, Mode: jobs.ModeWrite,
		Workspace: testkit.TempDir(t), SessionID: "sess-1", Sandbox: "workspace_readwrite", Delivery: jobs.DeliveryBackground,
		AllowedTools: []string{}, Warnings: []event.Warning{}, State: state, Worker: worker, CreatedAt: now, UpdatedAt: now}
	if state.Terminal() {
		rec.EndedAt = &now
	}
	require.NoError(t, store.Save(rec))
	return map[string]string{jobs.EnvData: store.Dir}, store, rec
}

func selfRef(t *testing.T) *jobs.ProcessRef {
	t.Helper()
	self, err := procid.Self()
	require.NoError(t, err)
	return &jobs.ProcessRef{PID: self.PID, Created: self.Created}
}

// TestJobStatusOfADeadJobWhoseRecordCannotBeSaved: the died verdict is
// shown, with a record_not_saved warning, even when it cannot be saved,
// and result --wait ends at it instead of waiting out its budget.
func TestJobStatusOfADeadJobWhoseRecordCannotBeSaved(t *testing.T) {
	self := selfRef(t)
	gone := &jobs.ProcessRef{PID: self.PID, Created: self.Created.Add(-time.Hour)} // names no living process
	env, store, rec := recordedJob(t, jobs.StateRunning, gone)
	// A directory where the record's lock file goes: no save can lock it.
	lock := filepath.Join(store.Dir, "runs", rec.ID, "record.lock")
	require.NoError(t, os.Remove(lock))
	require.NoError(t, os.Mkdir(lock, 0o700))

	code, stdout, stderr := runCLI(t, env, "", "jobs", "status", rec.ID)
	require.Equal(t, 0, code, stderr)
	f := footer(stdout)
	assert.Equal(t, "died", f["state"])
	assert.Contains(t, f["warning"], jobs.WarnRecordNotSaved+": ")

	code, stdout, _ = runCLI(t, env, "", "jobs", "status", rec.ID, "--json")
	require.Equal(t, 0, code)
	assert.Equal(t, "died", decodeObject(t, stdout)["state"])
	code, stdout, _ = runCLI(t, env, "", "jobs", "history", "--all", "--json")
	require.Equal(t, 0, code)
	assert.Equal(t, "died", decodeObject(t, stdout)["jobs"].([]any)[0].(map[string]any)["state"])

	env["CURSORKIT_WAIT_TIMEOUT"] = "5s"
	env["CURSORKIT_WAIT_POLL"] = "10ms"
	start := time.Now()
	code, stdout, _ = runCLI(t, env, "", "jobs", "result", rec.ID, "--wait")
	assert.Equal(t, 11, code, "died")
	assert.Less(t, time.Since(start), 5*time.Second, "the wait ends at the verdict")
	assert.Equal(t, "died", footer(stdout)["state"])

	saved, err := store.Find(rec.Workspace, rec.ID)
	require.NoError(t, err)
	assert.Equal(t, jobs.StateRunning, saved.State, "the file still reads as it did")
}
