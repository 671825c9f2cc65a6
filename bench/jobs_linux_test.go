package bench

import (
	"bytes"
	"context"
	"encoding/json/v2"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
	"github.com/cursorkit/cursorkit/task"
)

const (
	// backgroundRounds, statusRounds and historyRounds are how many timed
	// runs of each job command (each next to a `cursorkit version`) give
	// the medians.
	backgroundRounds = 20
	statusRounds     = 30
	historyRounds    = 9
	// jobWithin bounds the wait for a background job to end and for its
	// worker to exit: a simulator turn takes milliseconds, so only a hang
	// reaches it.
	jobWithin = 30 * time.Second
)

// BenchmarkBackground is the caller's side of `cursorkit task
// --background`: the built binary's wall time from its start to its exit
// (probe of the simulator, the credential and workspace checks, the
// private home, the record, the prompt file and the detached worker's
// start), against `cursorkit version` (plain process start) alternating in
// the same run (medians of twenty rounds). Every job is waited for, done
// and its worker exited (a worker ends after its agent's tree), before the
// next round, so no worker shares the machine with a timed caller; the
// agents are checked gone at the end. One untimed run first fills the probe's
// version cache, as any earlier cursorkit command of the user has. Goal:
// background-ms <= 100.
func BenchmarkBackground(b *testing.B) {
	t := buildTools(b)
	data, ws := removableDir(b), b.TempDir()
	cli := cursorkitEnv(b, t, []string{
		agentsim.Scenario(),
		cursor.EnvAPIKey + "=bench-key", // the private home hides any login (Linux)
		jobs.EnvData + "=" + data,
		jobs.EnvSession + "=",
		"CURSORKIT_WORKER_BIN=", // the worker is the built cursorkit itself
	})
	// Made after every directory (the caller's home included), so that
	// its cleanup, which kills any survivor, runs before they are removed.
	w := testkit.NewWatch(b)
	cli.env = withEnvIn(cli.env, agentsim.EnvPIDDir+"="+w.PIDDir())
	store := jobs.Store{Dir: data}
	start := func() time.Duration {
		d, out := cli.timedRun(b, "task", "--background", "--json", "--cwd", ws, "--binary", t.sim, "summarise the README")
		var started struct {
			ID    string `json:"id"`
			State string `json:"state"`
		}
		require.NoError(b, json.Unmarshal(out, &started), "task --background printed %q", out)
		require.Equal(b, "starting", started.State)
		waitJob(b, store, ws, started.ID)
		return d
	}
	b.Logf("first run, filling the version cache: %.1f ms", ms(start()))
	var versions, backgrounds []time.Duration
	for b.Loop() {
		for range backgroundRounds {
			d, _ := cli.timedRun(b, "version")
			versions = append(versions, d)
			backgrounds = append(backgrounds, start())
		}
	}
	// Every agent recorded itself in the watch's PIDDir, so the survivor
	// check below covers them (a check of nothing would pass too).
	require.NotEmpty(b, w.Recorded())
	w.RequireGone(jobWithin)
	v, bg := median(versions), median(backgrounds)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(v), "version-ms")
	b.ReportMetric(ms(bg), "background-ms")
	b.ReportMetric(ms(bg-v), "overhead-ms")
}

// waitJob waits until job id of workspace is done and its worker has
// exited (the worker prunes the workspace after its final save), so that
// nothing of it runs on.
func waitJob(b *testing.B, store jobs.Store, workspace, id string) {
	b.Helper()
	var rec *jobs.Record
	testkit.Eventually(b, "job "+id+" to end", jobWithin, func() bool {
		r, err := store.Find(workspace, id)
		require.NoError(b, err)
		rec = r
		return r.State.Terminal()
	})
	require.Equal(b, jobs.StateDone, rec.State, "job %s failed: %+v", id, rec.Failure)
	require.NotNil(b, rec.Worker, "job %s ended without a worker identity", id)
	worker := procid.Identity{PID: rec.Worker.PID, Created: rec.Worker.Created}
	testkit.Eventually(b, "the worker of "+id+" to exit", jobWithin, func() bool {
		alive, err := worker.Alive(context.Background())
		require.NoError(b, err)
		return !alive
	})
}

// BenchmarkJobsStatusCLI is `cursorkit jobs status ID --json` without
// --cwd, the id searched in every workspace: 100 workspaces of 20 records
// each, thirty ids spread over them, against `cursorkit version`
// alternating (medians). Goal: status-ms <= 20. BenchmarkFind in package
// task is the same lookup in process.
func BenchmarkJobsStatusCLI(b *testing.B) {
	t := buildTools(b)
	data := b.TempDir()
	ids := writeRecords(b, jobs.Store{Dir: data}, 100, 2000)
	cli := cursorkitEnv(b, t, []string{jobs.EnvData + "=" + data})
	var versions, statuses []time.Duration
	i := 0
	for b.Loop() {
		for range statusRounds {
			// A stride prime to the count visits every workspace,
			// early and late records alike.
			id := ids[(i*7919)%len(ids)]
			i++
			d, _ := cli.timedRun(b, "version")
			versions = append(versions, d)
			d, out := cli.timedRun(b, "jobs", "status", id, "--json")
			statuses = append(statuses, d)
			var rec struct {
				ID    string `json:"id"`
				State string `json:"state"`
			}
			require.NoError(b, json.Unmarshal(out, &rec), "jobs status printed %q", out)
			require.Equal(b, id, rec.ID)
			require.Equal(b, string(jobs.StateDone), rec.State)
		}
	}
	v, s := median(versions), median(statuses)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(v), "version-ms")
	b.ReportMetric(ms(s), "status-ms")
	b.ReportMetric(ms(s-v), "overhead-ms")
}

// BenchmarkJobsHistoryCLI is `cursorkit jobs history --all --limit 20
// --json` over 10,000 records in 50 workspaces, against `cursorkit
// version` alternating (medians of nine rounds). Goal: history-ms <= 100.
// BenchmarkHistory in package task is the same listing in process.
func BenchmarkJobsHistoryCLI(b *testing.B) {
	t := buildTools(b)
	data := b.TempDir()
	ids := writeRecords(b, jobs.Store{Dir: data}, 50, 10000)
	newest := ids[len(ids)-1]
	cli := cursorkitEnv(b, t, []string{jobs.EnvData + "=" + data})
	var versions, histories []time.Duration
	for b.Loop() {
		for range historyRounds {
			d, _ := cli.timedRun(b, "version")
			versions = append(versions, d)
			d, out := cli.timedRun(b, "jobs", "history", "--all", "--limit", "20", "--json")
			histories = append(histories, d)
			var h struct {
				Jobs []struct {
					ID string `json:"id"`
				} `json:"jobs"`
			}
			require.NoError(b, json.Unmarshal(out, &h), "jobs history printed %q", out)
			require.Len(b, h.Jobs, 20)
			require.Equal(b, newest, h.Jobs[0].ID, "newest first")
		}
	}
	v, h := median(versions), median(histories)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(v), "version-ms")
	b.ReportMetric(ms(h), "history-ms")
	b.ReportMetric(ms(h-v), "overhead-ms")
}

// writeRecords saves n finished background jobs spread round-robin over
// the given number of workspaces, one second apart (ids are
// second-granular), through the public store, and returns their ids
// oldest first. The workspaces need not exist: the records only name them.
func writeRecords(b *testing.B, store jobs.Store, workspaces, n int) []string {
	b.Helper()
	root := b.TempDir()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ids := make([]string, 0, n)
	for i := range n {
		at := base.Add(time.Duration(i) * time.Second)
		end := at.Add(time.Minute)
		rec := &jobs.Record{Engine: "cursor", ID: jobs.NewID(jobs.RoleTask, at), Role: jobs.RoleTask, Mode: jobs.ModeConsult,
			Workspace: filepath.Join(root, fmt.Sprintf("ws%03d", i%workspaces)), SessionID: "0f8fad5b-d9cb-469f-a165-70867728950e",
			Delivery: jobs.DeliveryBackground, Sandbox: task.PolicyReadOnly, AllowedTools: []string{"read_tool_call", "grep_tool_call"},
			State: jobs.StateDone, Warnings: []event.Warning{}, CreatedAt: at, UpdatedAt: end, EndedAt: &end}
		require.NoError(b, store.Save(rec))
		ids = append(ids, rec.ID)
	}
	return ids
}

// removableDir is b.TempDir for a data directory: a job's private home has
// read-only directories (its plugins and skills), which os.RemoveAll
// cannot empty unless run as root, so they are made writable first.
func removableDir(b *testing.B) string {
	dir := b.TempDir()
	// Registered after TempDir's own cleanup, so it runs before it.
	b.Cleanup(func() {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(path, 0o700)
			}
			return nil
		})
	})
	return dir
}

// timedRun runs `cursorkit ARGS...` in c's environment, requiring exit 0,
// and returns its wall time from start to exit and its stdout.
func (c cliEnv) timedRun(b *testing.B, args ...string) (time.Duration, []byte) {
	b.Helper()
	cmd := exec.Command(c.t.cursorkit, args...)
	cmd.Env = c.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var err error
	d := timed(func() { err = cmd.Run() })
	require.NoError(b, err, "cursorkit %q: %s", args, stderr.String())
	return d, stdout.Bytes()
}
