package main

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/task"
)

// workerCommand is the hidden command a background job's detached worker
// runs: cursorkit itself, so the worker is the same build as its caller.
const workerCommand = "__job-worker"

// envWorkerBin names the program started as the worker instead of this
// executable (a wrapper's, or a test's).
const envWorkerBin = "CURSORKIT_WORKER_BIN"

// pidlessGrace is how long a job may stay starting without a worker
// identity before it is judged died (docs/contract.md, "Jobs").
const pidlessGrace = 30 * time.Second

// promptFile is where a background job's prompt waits for its worker,
// readable by the user only; the worker removes it once read. The prompt
// never travels in argv or the environment.
func promptFile(store task.Store, id string) string {
	return filepath.Join(filepath.Dir(store.HomeDir(id)), "prompt")
}

// startBackground prepares the job, hands its prompt to a detached worker
// and returns at once with the job id.
func (a *app) startBackground(ctx context.Context, f jobFlags, store task.Store, spec task.Spec, opts task.Options) int {
	spec.Background = true
	rec, err := task.Prepare(ctx, store, spec, opts)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	fail := func(err error) int {
		rec.State, rec.Failure = task.StateError, &task.Failure{Kind: failure.KindOf(err), Message: err.Error()}
		_ = store.Save(rec)
		return a.fail(f.asJSON, err)
	}
	if err := safefile.Write(promptFile(store, rec.ID), []byte(spec.Prompt), 0o600); err != nil {
		return fail(failure.Wrap(failure.Setup, err, "writing the prompt for the worker"))
	}
	exe := strings.TrimSpace(a.getenv(envWorkerBin))
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return fail(failure.Wrap(failure.Setup, err, "finding cursorkit's own executable"))
		}
	}
	res, err := discovery.Resolve(ctx, discovery.Candidate{Value: exe, Source: discovery.SourceOverride, Origin: "the worker"}, discovery.EnvFromOS(), discovery.OSFS())
	if err != nil {
		return fail(err)
	}
	args := []string{workerCommand, "--data", store.Dir, "--workspace", rec.Workspace, "--id", rec.ID, "--timeout", f.total.String()}
	plan, err := shim.Build(res, args, shim.OptionsFromOS())
	if err != nil {
		return fail(err)
	}
	logFile := filepath.Join(filepath.Dir(rec.HomeDir), "worker.log")
	if _, err := launch.StartDetached(ctx, plan, launch.DetachOptions{Dir: rec.Workspace, Stdout: logFile, Stderr: logFile}); err != nil {
		return fail(err)
	}
	if f.asJSON {
		a.writeJSON(map[string]string{"id": rec.ID, "state": string(rec.State)})
	} else {
		fmt.Fprintf(a.stdout, "job: %s\nstate: %s\n", rec.ID, rec.State)
		fmt.Fprintf(a.stderr, "next: cursorkit jobs status %s\n      cursorkit jobs result %s --wait\n", rec.ID, rec.ID)
	}
	return failure.ExitOK
}

// runWorker is a background job's detached worker: it records its own
// identity, runs the prepared job and saves its final record, stopping
// the agent's tree on SIGTERM/SIGINT (jobs cancel).
func runWorker(ctx context.Context, a *app, args []string) int {
	var dataDir, workspace, id string
	var total time.Duration
	fs := newFlags(workerCommand)
	fs.StringVar(&dataDir, "data", "", "")
	fs.StringVar(&workspace, "workspace", "", "")
	fs.StringVar(&id, "id", "", "")
	fs.DurationVar(&total, "timeout", task.DefaultTotalTimeout, "")
	if err := fs.Parse(args); err != nil || dataDir == "" || id == "" {
		fmt.Fprintln(a.stderr, "cursorkit: the job worker is started by cursorkit itself")
		return failure.ExitInput
	}
	store := task.Store{Dir: dataDir}
	rec, err := store.Find(workspace, id)
	if err != nil {
		fmt.Fprintf(a.stderr, "cursorkit worker: %v\n", err)
		return failure.ExitCodeOf(err)
	}
	failJob := func(err error) int {
		now := time.Now()
		rec.State, rec.Failure, rec.UpdatedAt, rec.EndedAt = task.StateError, &task.Failure{Kind: failure.KindOf(err), Message: err.Error()}, now, &now
		_ = store.Save(rec)
		fmt.Fprintf(a.stderr, "cursorkit worker: %v\n", err)
		return failure.ExitCodeOf(err)
	}
	self, err := procid.Self()
	if err != nil {
		return failJob(err)
	}
	rec.Worker = &task.ProcessRef{PID: self.PID, Created: self.Created}
	prompt, err := safefile.Read(promptFile(store, id), maxPromptBytes)
	if err != nil {
		return failJob(failure.Wrap(failure.Setup, err, "reading the job's prompt"))
	}
	_ = os.Remove(promptFile(store, id))
	res, err := discovery.Resolve(ctx, discovery.Candidate{Value: rec.CursorBuildPath, Source: discovery.SourceOverride, Origin: "the job record"}, discovery.EnvFromOS(), discovery.OSFS())
	if err != nil {
		return failJob(err)
	}
	out, err := store.CreateOutput(id)
	if err != nil {
		return failJob(err)
	}
	defer out.Close()
	rec.Output = out.Path()
	opts := task.Options{Env: os.Environ(), Turn: task.Defaults(), Output: out}
	opts.Turn.TotalTimeout = total
	if rec.Role == task.RoleReview {
		opts.Check = checkVerdict
	}
	_, _, err = task.Execute(ctx, store, rec, string(prompt), cursor.Binary{Resolution: res, Configured: true}, opts)
	if _, perr := store.Prune(rec.Workspace, task.DefaultRetention); perr != nil {
		fmt.Fprintf(a.stderr, "cursorkit worker: pruning: %v\n", perr)
	}
	return failure.ExitCodeOf(err)
}

// judge returns rec with a running or starting state checked against its
// worker: a worker that is gone, or whose PID now names another process,
// makes the job died; a job still without a worker past pidlessGrace too.
// The verdict is saved (the worker can no longer save anything).
func judge(ctx context.Context, store task.Store, rec *task.Record) *task.Record {
	if rec.State.Terminal() || rec.Delivery != task.DeliveryBackground {
		return rec
	}
	var why string
	switch {
	case rec.Worker == nil:
		if time.Since(rec.CreatedAt) > pidlessGrace {
			why = fmt.Sprintf("no worker recorded itself within %s", pidlessGrace)
		}
	default:
		alive, err := procid.Identity{PID: rec.Worker.PID, Created: rec.Worker.Created}.Alive(ctx)
		if err == nil && !alive {
			why = fmt.Sprintf("its worker (pid %d) is gone", rec.Worker.PID)
		}
	}
	if why == "" {
		return rec
	}
	// Read again: the worker may have saved its final record meanwhile.
	if fresh, err := store.Find(rec.Workspace, rec.ID); err == nil && fresh.State.Terminal() {
		return fresh
	}
	now := time.Now()
	rec.State, rec.UpdatedAt, rec.EndedAt = task.StateDied, now, &now
	rec.Failure = &task.Failure{Kind: failure.Died, Message: "the job died: " + why}
	_ = store.Save(rec)
	return rec
}

const jobsUsage = "jobs status [ID] [--all] | result ID [--wait] | cancel ID | history [--all] [--limit N]  [--cwd DIR] [--json]"

// runJobs is `cursorkit jobs SUBCOMMAND`.
func runJobs(ctx context.Context, a *app, args []string) int {
	var asJSON, all, wait bool
	var cwd string
	var limit int
	fs := newFlags("jobs")
	fs.IntVar(&limit, "limit", task.DefaultHistoryLimit, "history: at most `N` jobs, newest first")
	fs.BoolVar(&asJSON, "json", a.json, "print JSON on stdout")
	fs.BoolVar(&all, "all", false, "status: every workspace's jobs")
	fs.BoolVar(&wait, "wait", false, "result: wait while the job runs (CURSORKIT_WAIT_TIMEOUT)")
	fs.StringVar(&cwd, "cwd", "", "the workspace `DIR` (default: search every workspace by id; status lists the current one)")
	if code, ok := a.parseFlags(fs, jobsUsage, args); !ok {
		return code
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return a.usageError(asJSON, jobsUsage, errors.New("jobs needs a subcommand: status, result, cancel or history"))
	}
	dataDir, err := task.DataDir(a.getenv)
	if err != nil {
		return a.fail(asJSON, err)
	}
	store := task.Store{Dir: dataDir}
	workspace := ""
	if cwd != "" {
		if workspace, err = task.Workspace(cwd); err != nil {
			return a.fail(asJSON, err)
		}
	}
	sub, ids := rest[0], rest[1:]
	if len(ids) > 1 {
		return a.usageError(asJSON, jobsUsage, fmt.Errorf("jobs %s takes one job id", sub))
	}
	id := ""
	if len(ids) == 1 {
		id = ids[0]
	}
	switch sub {
	case "history":
		if id != "" {
			return a.usageError(asJSON, jobsUsage, errors.New("jobs history takes no job id"))
		}
		if limit < 1 || limit > task.MaxHistoryLimit {
			return a.fail(asJSON, failure.New(failure.Input, "--limit must be between 1 and %d", task.MaxHistoryLimit))
		}
		return a.jobsList(ctx, store, workspace, all, limit, asJSON)
	case "status":
		return a.jobsStatus(ctx, store, workspace, id, all, asJSON)
	case "result":
		if id == "" {
			return a.usageError(asJSON, jobsUsage, errors.New("jobs result needs a job id"))
		}
		return a.jobsResult(ctx, store, workspace, id, wait, asJSON)
	case "cancel":
		if id == "" {
			return a.usageError(asJSON, jobsUsage, errors.New("jobs cancel needs a job id"))
		}
		return a.jobsCancel(ctx, store, workspace, id, asJSON)
	}
	return a.usageError(asJSON, jobsUsage, fmt.Errorf("unknown jobs subcommand %q", sub))
}

func (a *app) jobsStatus(ctx context.Context, store task.Store, workspace, id string, all, asJSON bool) int {
	if id != "" {
		rec, err := store.Find(workspace, id)
		if err != nil {
			return a.fail(asJSON, err)
		}
		rec = judge(ctx, store, rec)
		if asJSON {
			a.writeJSON(rec)
		} else {
			printJobFooter(a.stdout, rec)
		}
		return failure.ExitOK
	}
	return a.jobsList(ctx, store, workspace, all, task.DefaultHistoryLimit, asJSON)
}

// jobsList prints the newest jobs of the workspace (the current
// directory's by default) or, with all, of every workspace: a safe
// projection, no prompt and no output.
func (a *app) jobsList(ctx context.Context, store task.Store, workspace string, all bool, limit int, asJSON bool) int {
	if !all && workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return a.fail(asJSON, failure.Wrap(failure.Input, err, "the current directory is unusable"))
		}
		workspace = wd
	}
	if all {
		workspace = ""
	}
	recs, err := store.List(workspace, limit)
	if err != nil {
		return a.fail(asJSON, err)
	}
	entries := make([]task.HistoryEntry, 0, len(recs))
	for _, r := range recs {
		entries = append(entries, judge(ctx, store, r).Project())
	}
	if asJSON {
		a.writeJSON(map[string]any{"jobs": entries})
		return failure.ExitOK
	}
	for _, e := range entries {
		fmt.Fprintf(a.stdout, "%s  %-9s %-7s %-10s %s", e.ID, e.State, e.Mode, e.Delivery, orDash(e.Model))
		if e.ResumeSession != "" {
			fmt.Fprintf(a.stdout, "  --resume %s", e.ResumeSession)
		}
		fmt.Fprintln(a.stdout)
	}
	return failure.ExitOK
}

// exitStillRunning is `jobs result --wait`'s exit code when the wait
// budget ended before the job (docs/contract.md, "Jobs").
const exitStillRunning = 12

func (a *app) jobsResult(ctx context.Context, store task.Store, workspace, id string, wait, asJSON bool) int {
	rec, err := store.Find(workspace, id)
	if err != nil {
		return a.fail(asJSON, err)
	}
	budget, poll := envDuration(a.getenv, "CURSORKIT_WAIT_TIMEOUT", 10*time.Minute), envDuration(a.getenv, "CURSORKIT_WAIT_POLL", 200*time.Millisecond)
	deadline := time.Now().Add(budget)
	for rec = judge(ctx, store, rec); wait && !rec.State.Terminal() && time.Now().Before(deadline); rec = judge(ctx, store, rec) {
		select {
		case <-ctx.Done():
			return a.fail(asJSON, failure.Wrap(failure.Cancelled, context.Cause(ctx), "stopped waiting for job %s", id))
		case <-time.After(poll):
		}
		if fresh, err := store.Find(rec.Workspace, id); err == nil {
			rec = fresh
		}
	}
	if err := a.printOutput(store, rec, asJSON); err != nil {
		return a.fail(asJSON, err)
	}
	if !rec.State.Terminal() {
		return exitStillRunning
	}
	if rec.Failure != nil {
		return failure.ExitCode(rec.Failure.Kind)
	}
	return failure.ExitOK
}

// printOutput prints a job's output as the foreground run would have: the
// agent's text and the footer, or run's NDJSON with the outcome line
// carrying the record as it is now.
func (a *app) printOutput(store task.Store, rec *task.Record, asJSON bool) error {
	var outcome jsontext.Value
	var text int
	textEnded := false
	_, err := store.ReadOutput(rec.ID, func(v jsontext.Value) error {
		var head struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(v, &head)
		if head.Type == "outcome" {
			outcome = v.Clone()
			return nil
		}
		if asJSON {
			_, err := fmt.Fprintln(a.stdout, string(v))
			return err
		}
		if head.Type == "text" && rec.Role != task.RoleReview {
			text += len(head.Text)
			textEnded = strings.HasSuffix(head.Text, "\n")
			_, err := io.WriteString(a.stdout, head.Text)
			return err
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if asJSON {
		line, err := outcomeWithJob(outcome, rec)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(a.stdout, string(line))
		return err
	}
	// The foreground's layout: the text ended by a newline, the verdict of
	// a review, a blank line, the footer.
	if text > 0 && !textEnded {
		fmt.Fprintln(a.stdout)
	}
	verdict := rec.Role == task.RoleReview && len(rec.Review) > 0
	if verdict {
		renderVerdict(a.stdout, rec.Review)
	}
	if text > 0 || verdict {
		fmt.Fprintln(a.stdout)
	}
	printJobFooter(a.stdout, rec)
	return nil
}

// outcomeWithJob is a stored outcome line (or, without one, a bare
// outcome of the record's state) with the record as "job".
func outcomeWithJob(outcome jsontext.Value, rec *task.Record) ([]byte, error) {
	if len(outcome) == 0 {
		outcome = jsontext.Value(fmt.Sprintf(`{"type":"outcome","status":%q}`, string(rec.State)))
	}
	job, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	line := append([]byte(strings.TrimSuffix(strings.TrimSpace(string(outcome)), "}")), `,"job":`...)
	line = append(line, job...)
	if len(rec.Review) > 0 {
		line = append(append(line, `,"review":`...), rec.Review...)
	}
	return append(line, '}'), nil
}

func (a *app) jobsCancel(ctx context.Context, store task.Store, workspace, id string, asJSON bool) int {
	rec, err := store.Find(workspace, id)
	if err != nil {
		return a.fail(asJSON, err)
	}
	rec = judge(ctx, store, rec)
	if rec.State.Terminal() {
		if asJSON {
			a.writeJSON(map[string]string{"id": rec.ID, "state": string(rec.State), "cancelled": "no: the job had already ended"})
		} else {
			fmt.Fprintf(a.stdout, "job %s had already ended (%s): nothing to cancel\n", rec.ID, rec.State)
		}
		return failure.ExitOK
	}
	if rec.Worker == nil {
		return a.fail(asJSON, failure.New(failure.Process, "job %s has no worker yet; try again in a moment", id))
	}
	w := procid.Identity{PID: rec.Worker.PID, Created: rec.Worker.Created}
	// A polite stop first where there is one (the worker stops the agent's
	// tree and records cancelled); Windows has none: the worker is killed
	// and its kill-on-close job takes the agent's tree with it.
	if err := w.Signal(ctx, stopSignal()); err != nil && !errors.Is(err, procid.ErrGone) {
		if kerr := w.Kill(ctx); kerr != nil && !errors.Is(kerr, procid.ErrGone) {
			return a.fail(asJSON, kerr)
		}
	}
	deadline := time.Now().Add(task.DefaultStopGrace + 5*time.Second)
	for time.Now().Before(deadline) {
		if alive, err := w.Alive(ctx); err == nil && !alive {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling a process we do not own
	}
	if alive, _ := w.Alive(ctx); alive {
		_ = w.Kill(ctx)
	}
	if fresh, err := store.Find(rec.Workspace, id); err == nil {
		rec = fresh
	}
	if !rec.State.Terminal() {
		now := time.Now()
		rec.State, rec.UpdatedAt, rec.EndedAt = task.StateCancelled, now, &now
		rec.Failure = &task.Failure{Kind: failure.Cancelled, Message: "cancelled by jobs cancel"}
		_ = store.Save(rec)
	}
	if asJSON {
		a.writeJSON(map[string]string{"id": rec.ID, "state": string(rec.State)})
	} else {
		fmt.Fprintf(a.stdout, "job: %s\nstate: %s\n", rec.ID, rec.State)
	}
	return failure.ExitOK
}

// envDuration is a duration from the environment, def when unset or bad.
func envDuration(getenv func(string) string, name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(strings.TrimSpace(getenv(name))); err == nil && d > 0 {
		return d
	}
	return def
}
