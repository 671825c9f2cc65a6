package main

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
)

// pidWorkerRole is the job worker that first records its PID in the
// simulator's PID directory (role "worker"), so a test can watch and kill
// it from its first instant.
const pidWorkerRole = "pid-worker"

func runPIDWorker(args []string) int {
	if dir := os.Getenv(agentsim.EnvPIDDir); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), []byte("worker\n"), 0o644)
	}
	return runCLIProcess(args)
}

// TestKillsAtRandomPoints is the jobs' crash test: each round starts a
// background task from a cursorkit process of its own and kills, with
// kill -9 (TerminateProcess on Windows), at random points: that caller,
// the job's worker, and (every other round) a concurrent `jobs cancel`.
// `jobs status` runs all along (it saves the died judgement). After each
// round the job's state must be final and true, nothing it started may
// survive, and every record of the store must decode.
func TestKillsAtRandomPoints(t *testing.T) {
	testkit.SkipIfWine(t, "processes killed at random points leave Wine's own state behind: the process objects "+
		"of a killed worker's job keep their image files in use, and a Wine process started meanwhile holds the "+
		"test binary's output a minute past its exit (\"Test I/O incomplete\"); no Unix process of the job runs")
	rounds, kills := 100, 300*time.Millisecond
	flags, env, data, _ := jobEnv(t, "")
	workerBin := testkit.Install(t, testkit.TempDir(t), "cursorkit", pidWorkerRole)
	rng := testkit.Rand(t)
	store := jobs.Store{Dir: data}
	states := map[string]int{}
	noRecord := 0
	for i := range rounds {
		ws := testkit.TempDir(t)
		w := testkit.NewWatch(t)
		t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
		childEnv := testkit.ChildEnv(cliRole, append(simEnv(), jobs.EnvData+"="+data, envWorkerBin+"="+workerBin)...)

		caller := exec.Command(testBinary(t), append(flags, "task", "--background", "--json", "--cwd", ws)...)
		caller.Env, caller.Stdin = childEnv, strings.NewReader("go")
		require.NoError(t, caller.Start())
		w.AddStarted(caller.Process.Pid)
		testkit.SleepRandomly(rng, kills/2)
		_ = caller.Process.Kill()
		_ = caller.Wait()

		recs, err := store.List(ws, 0)
		require.NoError(t, err)
		if len(recs) == 0 {
			noRecord++ // killed before its record: nothing may run
			w.RequireGone(execWait)
			continue
		}
		id := recs[0].ID

		var writer *exec.Cmd
		if i%2 == 1 {
			writer = exec.Command(testBinary(t), "jobs", "cancel", id)
			writer.Env = childEnv
			require.NoError(t, writer.Start())
			w.AddStarted(writer.Process.Pid)
		}
		// The worker, killed at a random point once it is there (it may
		// never come: its caller was killed first, or the job was
		// cancelled or judged died before it started).
		deadline := time.Now().Add(execWait)
		for worker := 0; worker == 0 && time.Now().Before(deadline); {
			for _, p := range w.Recorded() {
				if p.Role == "worker" {
					worker = p.PID
				}
			}
			if worker != 0 {
				testkit.SleepRandomly(rng, kills)
				if id, err := procid.Of(t.Context(), worker); err == nil {
					_ = id.Kill(t.Context())
				}
				break
			}
			if r, err := store.Find(ws, id); err == nil && r.State.Terminal() {
				break
			}
			runCLI(t, env, "", "jobs", "status", id)
			time.Sleep(5 * time.Millisecond) // polling for a worker that may never come
		}
		if writer != nil {
			testkit.SleepRandomly(rng, kills/3)
			_ = writer.Process.Kill()
			_ = writer.Wait()
		}

		// A worker killed before it recorded itself leaves the job starting
		// until the start grace has passed since its creation.
		var final map[string]any
		testkit.Eventually(t, "job "+id+" to reach a final state", jobs.DefaultStartGrace+execWait, func() bool {
			code, stdout, _ := runCLI(t, env, "", "jobs", "status", id, "--json")
			if code != 0 {
				return false
			}
			final = decodeObject(t, stdout)
			return jobs.State(final["state"].(string)).Terminal()
		})
		w.RequireGone(execWait)
		state := final["state"].(string)
		states[state]++
		rec, err := store.Find(ws, id)
		require.NoError(t, err)
		checkFinalRecord(t, store, rec)
	}
	// A caller killed between its job's private home and its first record
	// save leaves the home, and mid-save the temporary file: the sweep
	// (a worker's, after an hour) removes them.
	swept := store.Sweep(0)
	checked := checkEveryRecord(t, data)
	t.Logf("%d rounds: %d records checked, none torn or wrong; final states %v; %d callers killed before their record (%d leftovers swept)",
		rounds, checked, states, noRecord, swept)
	assert.Equal(t, rounds-noRecord, checked)
}

// checkFinalRecord checks that a final record says what happened: done
// with the outcome in its output; died or cancelled with that failure
// kind, its processes gone.
func checkFinalRecord(t *testing.T, store jobs.Store, rec *jobs.Record) {
	t.Helper()
	switch rec.State {
	case jobs.StateDone:
		assert.Nil(t, rec.Failure, rec.ID)
		end, err := store.ReadOutput(rec.ID, func(jsontext.Value) error { return nil })
		require.NoError(t, err, rec.ID)
		assert.Contains(t, string(end.Outcome), `"status":"done"`, rec.ID)
	case jobs.StateDied, jobs.StateCancelled:
		require.NotNil(t, rec.Failure, rec.ID)
		assert.Equal(t, string(rec.State), string(rec.Failure.Kind), rec.ID)
		for name, p := range map[string]*jobs.ProcessRef{"worker": rec.Worker, "agent": rec.Agent} {
			if p != nil && alive(t, p) {
				status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
				t.Errorf("%s %s: its %s (pid %d) is alive: %s; record %+v", rec.ID, rec.State, name, p.PID, status, rec)
			}
		}
	default:
		t.Errorf("%s ended %s", rec.ID, rec.State)
	}
	require.NotNil(t, rec.EndedAt, rec.ID)
}

// checkEveryRecord decodes every record file of the data directory,
// strictly, and returns how many there are.
func checkEveryRecord(t *testing.T, data string) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(data, "state", "*", "jobs", "*"))
	require.NoError(t, err)
	n := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".json") {
			t.Errorf("a stray file among the records: %s", f)
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var r jobs.Record
		require.NoError(t, json.Unmarshal(b, &r), "%s: %q", f, b)
		assert.True(t, r.State.Terminal(), "%s: %s", r.ID, r.State)
		n++
	}
	return n
}
