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
	"sync"
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

// defaultStartGrace is how long a background job may stay starting
// without a worker identity before it is judged died (docs/contract.md,
// "Jobs"); envStartGrace overrides it.
const (
	defaultStartGrace = 30 * time.Second
	envStartGrace     = "CURSORKIT_START_GRACE"
)

// sweepAfter is how old what a killed writer left must be before a worker
// sweeps it (task.Store.Sweep).
const sweepAfter = time.Hour

// startGrace is the grace this command gives a job without a worker.
func (a *app) startGrace() time.Duration {
	return envDuration(a.getenv, envStartGrace, defaultStartGrace)
}

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
	// The identity goes on record first, so that jobs cancel can reach
	// this worker from now on; a job already final was cancelled (or
	// judged died) before its worker came: nothing runs.
	rec, err = store.Update(workspace, id, func(r *task.Record) bool {
		if r.State.Terminal() {
			return false
		}
		r.Worker = &task.ProcessRef{PID: self.PID, Created: self.Created}
		return true
	})
	if err != nil {
		fmt.Fprintf(a.stderr, "cursorkit worker: %v\n", err)
		return failure.ExitCodeOf(err)
	}
	if rec.State.Terminal() {
		_ = os.Remove(promptFile(store, id))
		fmt.Fprintf(a.stderr, "cursorkit worker: job %s ended (%s) before its worker started: nothing to run\n", id, rec.State)
		return failure.ExitOK
	}
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
	store.Sweep(sweepAfter)
	return failure.ExitCodeOf(err)
}

// judge returns rec with a running or starting state checked against the
// process that runs it (Record.Worker: a background job's worker, a
// foreground job's own command): one that is gone, or whose PID now names
// another process, makes the job died; so does a background job still
// without a worker past grace. A foreground job with no owner on
// record (run through the library) is left as it is. The verdict is saved
// in one turn of the record's writers, so a job that ended meanwhile
// keeps its own final state.
func judge(ctx context.Context, store task.Store, rec *task.Record, grace time.Duration) *task.Record {
	if rec.State.Terminal() {
		return rec
	}
	var why string
	switch {
	case rec.Worker != nil:
		alive, err := procid.Identity{PID: rec.Worker.PID, Created: rec.Worker.Created}.Alive(ctx)
		if err == nil && !alive {
			why = fmt.Sprintf("the cursorkit process running it (pid %d) is gone", rec.Worker.PID)
		}
	case rec.Delivery == task.DeliveryBackground && time.Since(rec.CreatedAt) > grace:
		why = fmt.Sprintf("no worker recorded itself within %s", grace)
	}
	if why == "" {
		return rec
	}
	// The dead worker's tree is being killed by the launch guard (Linux)
	// or its Job Object (Windows) as its worker goes: a job is only died
	// once its agent is gone too, and an agent still there after the
	// grace is killed, through its identity.
	if rec.Agent != nil {
		agent := procid.Identity{PID: rec.Agent.PID, Created: rec.Agent.Created}
		if !waitGone(ctx, agent, 2*time.Second) {
			_ = agent.Kill(ctx)
			waitGone(ctx, agent, 5*time.Second)
		}
	}
	judged, err := store.Update(rec.Workspace, rec.ID, func(r *task.Record) bool {
		if r.State.Terminal() || (r.Worker != nil && !sameProcess(r.Worker, rec.Worker)) {
			return false // it ended, or a worker came, meanwhile
		}
		now := time.Now()
		r.State, r.UpdatedAt, r.EndedAt = task.StateDied, now, &now
		r.Failure = &task.Failure{Kind: failure.Died, Message: "the job died: " + why}
		return true
	})
	if err != nil {
		return rec
	}
	return judged
}

const jobsUsage = "jobs status [ID] [--all] | result ID [--wait] | cancel ID | history [--all] [--limit N] | cleanup --session ID  [--cwd DIR] [--json]"

// runJobs is `cursorkit jobs SUBCOMMAND`.
func runJobs(ctx context.Context, a *app, args []string) int {
	var asJSON, all, wait bool
	var cwd, session string
	var limit int
	fs := newFlags("jobs")
	fs.IntVar(&limit, "limit", task.DefaultHistoryLimit, "history: at most `N` jobs, newest first")
	fs.BoolVar(&asJSON, "json", a.json, "print JSON on stdout")
	fs.BoolVar(&all, "all", false, "status: every workspace's jobs")
	fs.BoolVar(&wait, "wait", false, "result: wait while the job runs (CURSORKIT_WAIT_TIMEOUT)")
	fs.StringVar(&session, "session", "", "cleanup: the launcher session `ID` (CURSORKIT_SESSION) whose running jobs to stop")
	fs.StringVar(&cwd, "cwd", "", "the workspace `DIR` (default: search every workspace by id; status lists the current one)")
	if code, ok := a.parseFlags(fs, jobsUsage, args); !ok {
		return code
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return a.usageError(asJSON, jobsUsage, errors.New("jobs needs a subcommand: status, result, cancel, history or cleanup"))
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
	if session != "" && sub != "cleanup" {
		return a.usageError(asJSON, jobsUsage, fmt.Errorf("--session is cleanup's; jobs %s takes none", sub))
	}
	switch sub {
	case "cleanup":
		if id != "" {
			return a.usageError(asJSON, jobsUsage, errors.New("jobs cleanup takes no job id: it stops every running job of --session"))
		}
		if strings.TrimSpace(session) == "" {
			return a.usageError(asJSON, jobsUsage, errors.New("jobs cleanup needs --session ID (the CURSORKIT_SESSION its jobs were started with)"))
		}
		return a.jobsCleanup(ctx, store, strings.TrimSpace(session), asJSON)
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
		rec = judge(ctx, store, rec, a.startGrace())
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
		entries = append(entries, judge(ctx, store, r, a.startGrace()).Project())
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
	grace := a.startGrace()
	for rec = judge(ctx, store, rec, grace); wait && !rec.State.Terminal() && time.Now().Before(deadline); rec = judge(ctx, store, rec, grace) {
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
	var text int
	textEnded := false
	end, err := store.ReadOutput(rec.ID, func(v jsontext.Value) error {
		if asJSON {
			_, err := fmt.Fprintln(a.stdout, string(v))
			return err
		}
		var head struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(v, &head)
		if head.Type == "text" && rec.Role != task.RoleReview {
			text += len(head.Text)
			textEnded = strings.HasSuffix(head.Text, "\n")
			_, err := io.WriteString(a.stdout, head.Text)
			return err
		}
		return nil
	})
	outcome := end.Outcome
	if failure.Is(err, failure.Input) {
		err = nil // no output kept (a job that never started its agent)
	}
	if err != nil {
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
	rec, cancelled, err := cancelJob(ctx, store, rec, a.startGrace())
	if err != nil {
		return a.fail(asJSON, err)
	}
	if asJSON {
		a.writeJSON(cancelAnswer(rec, cancelled))
	} else if !cancelled {
		fmt.Fprintf(a.stdout, "job %s had already ended (%s): nothing to cancel\n", rec.ID, rec.State)
	} else {
		fmt.Fprintf(a.stdout, "job: %s\nstate: %s\n", rec.ID, rec.State)
	}
	return failure.ExitOK
}

// jobsCleanup stops every unfinished job of launcher session (the jobs
// started with CURSORKIT_SESSION set to it), each through its recorded
// identity, all at once, and answers when all of them are gone: an
// orchestrator's session-end hook. Jobs of other sessions, and foreground
// jobs with no owner on record, are never touched.
func (a *app) jobsCleanup(ctx context.Context, store task.Store, session string, asJSON bool) int {
	recs, err := store.Unfinished()
	if err != nil {
		return a.fail(asJSON, err)
	}
	type result struct {
		rec       *task.Record
		cancelled bool
		err       error
	}
	var results []*result
	var wg sync.WaitGroup
	grace := a.startGrace()
	for _, r := range recs {
		if r.LauncherSession != session {
			continue
		}
		res := &result{rec: r}
		results = append(results, res)
		wg.Go(func() { res.rec, res.cancelled, res.err = cancelJob(ctx, store, r, grace) })
	}
	wg.Wait()
	code := failure.ExitOK
	answers := make([]map[string]any, 0, len(results))
	for _, res := range results {
		m := cancelAnswer(res.rec, res.cancelled)
		if res.err != nil {
			m["error"] = errorObject{Kind: failure.KindOf(res.err), Message: res.err.Error()}
			if code == failure.ExitOK {
				code = failure.ExitCodeOf(res.err)
			}
		}
		answers = append(answers, m)
		if asJSON {
			continue
		}
		switch {
		case res.err != nil:
			fmt.Fprintf(a.stdout, "%s  %s  not stopped: %v\n", res.rec.ID, res.rec.State, res.err)
		case res.cancelled:
			fmt.Fprintf(a.stdout, "%s  cancelled\n", res.rec.ID)
		default:
			fmt.Fprintf(a.stdout, "%s  %s (had already ended)\n", res.rec.ID, res.rec.State)
		}
	}
	if asJSON {
		a.writeJSON(map[string]any{"session": session, "jobs": answers})
	} else if len(results) == 0 {
		fmt.Fprintf(a.stdout, "no running job of session %s\n", session)
	}
	return code
}

// cancelAnswer is jobs cancel's --json object for one job.
func cancelAnswer(rec *task.Record, cancelled bool) map[string]any {
	m := map[string]any{"id": rec.ID, "state": string(rec.State), "cancelled": cancelled}
	if !cancelled {
		m["reason"] = "the job had already ended"
	}
	return m
}

// cancelJob stops job rec and returns its record once the process running
// it and the agent are gone, and whether this call stopped it (false: it
// had already ended). Every process is acted on through its recorded
// identity, so a reused PID is never signalled:
//   - a background job still without a worker is recorded cancelled, and
//     its worker, when it comes, runs nothing;
//   - otherwise the process running it gets the polite stop (SIGTERM; on
//     Windows, where there is none, a kill, and its kill-on-close Job
//     Object takes the agent's tree): it stops the agent's tree and records
//     cancelled itself. Past the stop grace it is killed, and the launch
//     guard (Linux) or the Job Object (Windows) takes the tree.
//
// A foreground job with no owner on record (run through the library) is a
// process error: nothing here may stop it.
func cancelJob(ctx context.Context, store task.Store, rec *task.Record, grace time.Duration) (*task.Record, bool, error) {
	rec = judge(ctx, store, rec, grace)
	if rec.State.Terminal() {
		return rec, false, nil
	}
	if rec.Worker == nil {
		if rec.Delivery != task.DeliveryBackground {
			return rec, false, failure.New(failure.Process, "job %s runs in a program that recorded no process to stop it through: stop it there", rec.ID)
		}
		r, err := store.Update(rec.Workspace, rec.ID, func(r *task.Record) bool {
			if r.State.Terminal() || r.Worker != nil {
				return false
			}
			markCancelled(r)
			return true
		})
		if err != nil {
			return rec, false, err
		}
		if r.Worker == nil {
			return r, r.State == task.StateCancelled, nil
		}
		rec = r // its worker came meanwhile: stop it
	}
	w := procid.Identity{PID: rec.Worker.PID, Created: rec.Worker.Created}
	if err := w.Signal(ctx, stopSignal()); err != nil && !errors.Is(err, procid.ErrGone) {
		if errors.Is(err, procid.ErrMismatch) {
			return judge(ctx, store, rec, grace), false, nil // not the job's process any more: it died
		}
		if kerr := w.Kill(ctx); kerr != nil && !errors.Is(kerr, procid.ErrGone) {
			return rec, false, kerr
		}
	}
	// The worker stops the agent within its stop grace; past that, and a
	// margin, it is killed.
	if !waitGone(ctx, w, task.DefaultStopGrace+5*time.Second) {
		_ = w.Kill(ctx)
		waitGone(ctx, w, 5*time.Second)
	}
	if fresh, err := store.Find(rec.Workspace, rec.ID); err == nil {
		rec = fresh
	}
	// A killed worker's tree is killed by the launch guard or the Job
	// Object as the worker goes; the answer waits for the agent too.
	if rec.Agent != nil {
		agent := procid.Identity{PID: rec.Agent.PID, Created: rec.Agent.Created}
		if !waitGone(ctx, agent, 5*time.Second) {
			_ = agent.Kill(ctx)
			waitGone(ctx, agent, 5*time.Second)
		}
	}
	r, err := store.Update(rec.Workspace, rec.ID, func(r *task.Record) bool {
		if r.State.Terminal() {
			return false
		}
		markCancelled(r)
		return true
	})
	if err != nil {
		return rec, false, err
	}
	return r, r.State == task.StateCancelled, nil
}

// markCancelled makes r cancelled by jobs cancel.
func markCancelled(r *task.Record) {
	now := time.Now()
	r.State, r.UpdatedAt, r.EndedAt = task.StateCancelled, now, &now
	r.Failure = &task.Failure{Kind: failure.Cancelled, Message: "cancelled by jobs cancel"}
}

// waitGone polls id until its process is gone (true) or within passed.
// A process this one did not start cannot be waited for: polling is the
// portable way.
func waitGone(ctx context.Context, id procid.Identity, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		if alive, err := id.Alive(ctx); err == nil && !alive {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sameProcess reports whether a and b name the same process.
func sameProcess(a, b *task.ProcessRef) bool {
	return a != nil && b != nil && a.PID == b.PID && a.Created.Equal(b.Created)
}

// envDuration is a duration from the environment, def when unset or bad.
func envDuration(getenv func(string) string, name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(strings.TrimSpace(getenv(name))); err == nil && d > 0 {
		return d
	}
	return def
}
