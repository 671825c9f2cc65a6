package jobs_test

import (
	"context"
	"encoding/json/jsontext"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
	"github.com/cursorkit/cursorkit/turn"
)

// The roles this test binary plays for the lifecycle tests: a process
// that only stays alive (a job's worker or agent as Judge and Cancel see
// it), and a background job's worker (jobs.Worker.Work) whose Run either
// ends the job done or waits until it is stopped.
const (
	roleSleeper = "jobs-sleeper"
	roleWorker  = "jobs-worker"
)

func TestMain(m *testing.M) {
	testkit.RunIfChild(append(crashRoles(),
		testkit.Role{Name: roleSleeper, Run: func([]string) int { testkit.SleepForever(); return 0 }},
		testkit.Role{Name: roleWorker, Run: runWorker})...)
	os.Exit(m.Run())
}

// runWorker is the worker Start detaches in these tests: args are the data
// directory, the workspace, the job id and how its Run behaves, "done" (the
// prompt becomes the job's one event) or "hang" (until SIGTERM or SIGINT,
// then the job is cancelled).
func runWorker(args []string) int {
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: DATA WORKSPACE ID done|hang")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store := jobs.Store{Dir: args[0]}
	w := jobs.Worker{Run: func(ctx context.Context, rec *jobs.Record, prompt string, out *jobs.OutputWriter) error {
		rec.State = jobs.StateRunning
		if err := store.Save(rec); err != nil {
			return err
		}
		var err error
		if args[3] == "hang" {
			<-ctx.Done()
			err = failure.Wrap(failure.Cancelled, context.Cause(ctx), "stopped")
		} else {
			_ = out.Events(event.Event{Type: event.TypeText, Text: prompt})
		}
		_ = out.Outcome(turn.Outcome{Status: turn.StatusDone})
		end(rec, err)
		return store.Save(rec)
	}}
	if err := w.Work(ctx, store, args[1], args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return failure.ExitCodeOf(err)
	}
	return 0
}

// end makes rec final: done, or cancelled by err.
func end(rec *jobs.Record, err error) {
	now := time.Now()
	rec.State, rec.UpdatedAt, rec.EndedAt = jobs.StateDone, now, &now
	if err != nil {
		rec.State, rec.Failure = jobs.StateCancelled, &jobs.Failure{Kind: failure.KindOf(err), Message: err.Error()}
	}
}

// startJob is a background job as task.Prepare leaves it: starting,
// without a worker, created at created.
func startJob(t *testing.T, store jobs.Store, ws string, created time.Time, session string) *jobs.Record {
	t.Helper()
	r := jobs.JobAt(ws, jobs.RoleTask, created, jobs.StateStarting, jobs.ModeConsult, "")
	r.LauncherSession, r.HomeDir = session, store.HomeDir(r.ID)
	require.NoError(t, store.Save(r))
	return r
}

// child starts this test binary as a sleeper and returns its identity;
// kill ends it and waits until it is reaped. w watches it.
func child(t *testing.T, w *testkit.Watch) (ref *jobs.ProcessRef, kill func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = testkit.ChildEnv(roleSleeper)
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	w.Add(cmd.Process.Pid)
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	id, err := procid.Of(t.Context(), cmd.Process.Pid)
	require.NoError(t, err)
	return &jobs.ProcessRef{PID: id.PID, Created: id.Created}, func() { _ = cmd.Process.Kill(); <-exited }
}

func alive(t *testing.T, p *jobs.ProcessRef) bool {
	t.Helper()
	ok, err := procid.Identity{PID: p.PID, Created: p.Created}.Alive(t.Context())
	require.NoError(t, err)
	return ok
}

func TestJudge(t *testing.T) {
	store, ws := jobs.NewTestStore(t)
	w := testkit.NewWatch(t)
	live, _ := child(t, w)
	dead, kill := child(t, w)
	kill()
	self, err := procid.Self()
	require.NoError(t, err)
	reused := &jobs.ProcessRef{PID: self.PID, Created: self.Created.Add(-time.Hour)}
	long := time.Now().Add(-time.Minute)

	for _, tc := range []struct {
		name     string
		delivery string
		worker   *jobs.ProcessRef
		created  time.Time
		want     jobs.State
		why      string
	}{
		{"its worker runs", jobs.DeliveryBackground, live, long, jobs.StateStarting, ""},
		{"its worker is gone", jobs.DeliveryBackground, dead, long, jobs.StateDied, "is gone"},
		{"its worker's PID names another process", jobs.DeliveryBackground, reused, long, jobs.StateDied, "is gone"},
		{"no worker within the grace", jobs.DeliveryBackground, nil, time.Now(), jobs.StateStarting, ""},
		{"no worker past the grace", jobs.DeliveryBackground, nil, long, jobs.StateDied, "no worker recorded itself within 30s"},
		{"a foreground job without an owner", jobs.DeliveryForeground, nil, long, jobs.StateStarting, ""},
		{"a foreground job whose owner is gone", jobs.DeliveryForeground, dead, long, jobs.StateDied, "is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startJob(t, store, ws, tc.created, "")
			r.Delivery, r.Worker = tc.delivery, tc.worker
			require.NoError(t, store.Save(r))
			got := jobs.Judge(t.Context(), store, r, 0)
			assert.Equal(t, tc.want, got.State)
			saved, err := store.Load(ws, r.ID)
			require.NoError(t, err)
			assert.Equal(t, tc.want, saved.State, "the verdict is saved")
			if tc.why != "" {
				require.NotNil(t, got.Failure)
				assert.Equal(t, failure.Died, got.Failure.Kind)
				assert.Contains(t, got.Failure.Message, tc.why)
				assert.NotNil(t, got.EndedAt)
			}
		})
	}
	t.Run("a grace of its own", func(t *testing.T) {
		r := startJob(t, store, ws, time.Now().Add(-2*time.Second), "")
		assert.Equal(t, jobs.StateDied, jobs.Judge(t.Context(), store, r, time.Second).State)
	})
	t.Run("a final job is as it is", func(t *testing.T) {
		r := startJob(t, store, ws, long, "")
		end(r, nil)
		r.Worker = dead
		require.NoError(t, store.Save(r))
		assert.Equal(t, jobs.StateDone, jobs.Judge(t.Context(), store, r, 0).State)
	})
	t.Run("a worker that came meanwhile keeps the job", func(t *testing.T) {
		r := startJob(t, store, ws, long, "")
		_, err := store.Update(ws, r.ID, func(cur *jobs.Record) bool { cur.Worker = live; return true })
		require.NoError(t, err)
		got := jobs.Judge(t.Context(), store, r, 0) // r is the record as read before the worker came
		assert.Equal(t, jobs.StateStarting, got.State)
		assert.Equal(t, live.PID, got.Worker.PID)
	})
}

// TestADiedJobHasLeftNoAgent: the agent of a job whose worker is gone is
// killed through its identity before the job is died. It mostly waits out
// Judge's 2 s for the agent to go, so it runs beside the crash test.
func TestADiedJobHasLeftNoAgent(t *testing.T) {
	t.Parallel()
	store, ws := jobs.NewTestStore(t)
	w := testkit.NewWatch(t)
	agentProc, _ := child(t, w)
	dead, kill := child(t, w)
	kill()
	r := startJob(t, store, ws, time.Now(), "")
	r.State, r.Worker, r.Agent = jobs.StateRunning, dead, agentProc
	require.NoError(t, store.Save(r))
	got := jobs.Judge(t.Context(), store, r, 0)
	assert.Equal(t, jobs.StateDied, got.State)
	assert.False(t, alive(t, agentProc), "the verdict comes after the agent is gone")
	w.RequireGone(10 * time.Second)
}

func TestCancel(t *testing.T) {
	store, ws := jobs.NewTestStore(t)
	w := testkit.NewWatch(t)
	t.Run("a job without its worker yet is cancelled at once", func(t *testing.T) {
		r := startJob(t, store, ws, time.Now(), "")
		got, cancelled, err := jobs.Cancel(t.Context(), store, r, 0)
		require.NoError(t, err)
		assert.True(t, cancelled)
		assert.Equal(t, jobs.StateCancelled, got.State)
		assert.Equal(t, failure.Cancelled, got.Failure.Kind)
		got, cancelled, err = jobs.Cancel(t.Context(), store, got, 0)
		require.NoError(t, err)
		assert.False(t, cancelled, "a final job is not cancelled again")
		assert.Equal(t, jobs.StateCancelled, got.State)
	})
	t.Run("the worker is stopped and waited for", func(t *testing.T) {
		worker, _ := child(t, w)
		r := startJob(t, store, ws, time.Now(), "")
		r.State, r.Worker = jobs.StateRunning, worker
		require.NoError(t, store.Save(r))
		got, cancelled, err := jobs.Cancel(t.Context(), store, r, 0)
		require.NoError(t, err)
		assert.True(t, cancelled)
		assert.Equal(t, jobs.StateCancelled, got.State)
		assert.False(t, alive(t, worker), "the answer comes after the worker is gone")
	})
	t.Run("a foreground job without an owner is refused", func(t *testing.T) {
		r := startJob(t, store, ws, time.Now(), "")
		r.Delivery, r.State = jobs.DeliveryForeground, jobs.StateRunning
		require.NoError(t, store.Save(r))
		got, cancelled, err := jobs.Cancel(t.Context(), store, r, 0)
		assert.Equal(t, failure.Process, failure.KindOf(err))
		assert.False(t, cancelled)
		assert.Equal(t, jobs.StateRunning, got.State)
	})
	t.Run("a worker whose PID names another process is never signalled", func(t *testing.T) {
		self, err := procid.Self()
		require.NoError(t, err)
		r := startJob(t, store, ws, time.Now(), "")
		r.State, r.Worker = jobs.StateRunning, &jobs.ProcessRef{PID: self.PID, Created: self.Created.Add(-time.Hour)}
		require.NoError(t, store.Save(r))
		got, cancelled, err := jobs.Cancel(t.Context(), store, r, 0)
		require.NoError(t, err)
		assert.False(t, cancelled)
		assert.Equal(t, jobs.StateDied, got.State, "judged instead")
	})
	w.RequireGone(10 * time.Second)
}

func TestCleanupStopsOneSessionsJobs(t *testing.T) {
	store, ws := jobs.NewTestStore(t)
	other := testkit.TempDir(t)
	ours := []*jobs.Record{startJob(t, store, ws, time.Now(), "orch-1"), startJob(t, store, other, time.Now(), "orch-1")}
	theirs := startJob(t, store, ws, time.Now(), "orch-2")
	untagged := startJob(t, store, ws, time.Now(), "")
	done := startJob(t, store, ws, time.Now(), "orch-1")
	end(done, nil)
	require.NoError(t, store.Save(done))

	got, err := jobs.Cleanup(t.Context(), store, "orch-1", 0)
	require.NoError(t, err)
	require.Len(t, got, 2, "the final job is not one to stop")
	for _, c := range got {
		require.NoError(t, c.Err)
		assert.True(t, c.Cancelled)
		assert.Equal(t, jobs.StateCancelled, c.Record.State)
		assert.Contains(t, []string{ours[0].ID, ours[1].ID}, c.Record.ID)
	}
	for _, r := range []*jobs.Record{theirs, untagged} {
		r, err := store.Load(r.Workspace, r.ID)
		require.NoError(t, err)
		assert.Equal(t, jobs.StateStarting, r.State, "another session's job, or one without a session, is not touched")
	}
	got, err = jobs.Cleanup(t.Context(), store, "orch-1", 0)
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = jobs.Cleanup(t.Context(), store, " ", 0)
	assert.Equal(t, failure.Input, failure.KindOf(err))
}

// TestStartDetachesAWorker: Start hands the prompt to a detached worker,
// which runs the job (Worker.Work) and leaves its record final, its output
// and its log, and no prompt file.
func TestStartDetachesAWorker(t *testing.T) {
	store, ws := jobs.NewTestStore(t)
	bin := testkit.Install(t, testkit.TempDir(t), "worker", roleWorker)
	r := startJob(t, store, ws, time.Now(), "")
	require.NoError(t, jobs.Start(t.Context(), store, r, "the prompt", bin, store.Dir, ws, r.ID, "done"))

	var got *jobs.Record
	testkit.Eventually(t, "the job to end", 30*time.Second, func() bool {
		got, _ = store.Load(ws, r.ID)
		return got != nil && got.State.Terminal()
	})
	require.Equal(t, jobs.StateDone, got.State, "%+v", got.Failure)
	require.NotNil(t, got.Worker)
	assert.Equal(t, store.OutputPath(r.ID), got.Output)
	var text []string
	out, err := store.ReadOutput(r.ID, func(v jsontext.Value) error { text = append(text, string(v)); return nil })
	require.NoError(t, err)
	assert.Equal(t, []string{`{"type":"text","text":"the prompt"}`}, text)
	assert.NotNil(t, out.Outcome)
	assert.NoFileExists(t, filepath.Join(store.Dir, "runs", r.ID, "prompt"), "the worker removed it")
	assert.FileExists(t, filepath.Join(store.Dir, "runs", r.ID, "worker.log"))
	testkit.Eventually(t, "the worker to exit", 10*time.Second, func() bool { return !alive(t, got.Worker) })
}

// TestCancelABackgroundJob: a job Start detached is cancelled through its
// worker, which stops it (SIGTERM; on Windows the worker is killed and
// Cancel records the job cancelled).
func TestCancelABackgroundJob(t *testing.T) {
	store, ws := jobs.NewTestStore(t)
	bin := testkit.Install(t, testkit.TempDir(t), "worker", roleWorker)
	r := startJob(t, store, ws, time.Now(), "")
	require.NoError(t, jobs.Start(t.Context(), store, r, "p", bin, store.Dir, ws, r.ID, "hang"))
	testkit.Eventually(t, "the job to run", 30*time.Second, func() bool {
		got, _ := store.Load(ws, r.ID)
		return got != nil && got.State == jobs.StateRunning
	})
	r, err := store.Load(ws, r.ID)
	require.NoError(t, err)
	got, cancelled, err := jobs.Cancel(t.Context(), store, r, 0)
	require.NoError(t, err)
	assert.True(t, cancelled)
	assert.Equal(t, jobs.StateCancelled, got.State)
	assert.False(t, alive(t, got.Worker), "the answer comes after the worker is gone")
}

func TestStartRefusesAndRecordsFailures(t *testing.T) {
	store, ws := jobs.NewTestStore(t)
	t.Run("not a job waiting for its worker", func(t *testing.T) {
		r := startJob(t, store, ws, time.Now(), "")
		r.State = jobs.StateRunning
		require.NoError(t, store.Save(r))
		err := jobs.Start(t.Context(), store, r, "p", os.Args[0])
		assert.Equal(t, failure.Input, failure.KindOf(err))
		got, err := store.Load(ws, r.ID)
		require.NoError(t, err)
		assert.Equal(t, jobs.StateRunning, got.State, "left as it is")
	})
	t.Run("a worker that is not there", func(t *testing.T) {
		r := startJob(t, store, ws, time.Now(), "")
		err := jobs.Start(t.Context(), store, r, "p", filepath.Join(testkit.TempDir(t), "no-such-worker"))
		require.Error(t, err)
		got, lerr := store.Load(ws, r.ID)
		require.NoError(t, lerr)
		assert.Equal(t, jobs.StateError, got.State, "a job that never got a worker does not wait out the grace")
		assert.Equal(t, failure.KindOf(err), got.Failure.Kind)
	})
	t.Run("a prompt over the bound", func(t *testing.T) {
		r := startJob(t, store, ws, time.Now(), "")
		err := jobs.Start(t.Context(), store, r, string(make([]byte, jobs.MaxPromptBytes+1)), os.Args[0])
		assert.Equal(t, failure.Input, failure.KindOf(err))
	})
}
