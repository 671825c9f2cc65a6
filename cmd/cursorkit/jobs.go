package main

import (
	"bufio"
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/jobs"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/review"
	"github.com/cursorkit/cursorkit/task"
)

// workerCommand is the hidden command a background job's detached worker
// runs: cursorkit itself, so the worker is the same build as its caller.
const workerCommand = "__job-worker"

// envWorkerBin names the program started as the worker instead of this
// executable (a wrapper's, or a test's).
const envWorkerBin = "CURSORKIT_WORKER_BIN"

// startGrace is the grace this command gives a job without a worker.
func (a *app) startGrace() (time.Duration, error) {
	return a.envDuration(envStartGrace, jobs.DefaultStartGrace)
}

// startBackground prepares the job, hands its prompt to a detached worker
// (this executable's workerCommand) and returns at once with the job id.
func (a *app) startBackground(ctx context.Context, f jobFlags, store jobs.Store, spec task.Spec, opts task.Options) int {
	spec.Background = true
	rec, err := task.Prepare(ctx, store, spec, opts)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	args := []string{workerCommand, "--data", store.Dir, "--workspace", rec.Workspace, "--id", rec.ID, "--timeout", f.total.String(), "--exit-grace", opts.Turn.ExitGrace.String()}
	if err := jobs.Start(ctx, store, rec, spec.Prompt, strings.TrimSpace(a.getenv(envWorkerBin)), args...); err != nil {
		return a.fail(f.asJSON, err)
	}
	if f.asJSON {
		a.writeJSON(map[string]string{"id": rec.ID, "state": string(rec.State)})
	} else {
		fmt.Fprintf(a.stdout, "job: %s\nstate: %s\n", rec.ID, rec.State)
		fmt.Fprintf(a.stderr, "next: cursorkit jobs status %s\n      cursorkit jobs result %s --wait\n", rec.ID, rec.ID)
	}
	return failure.ExitOK
}

// runWorker is a background job's detached worker (jobs.Worker): it runs
// the prepared job as the foreground would, with its output file. SIGTERM
// and SIGINT (jobs cancel) cancel ctx: the turn then stops the agent's
// tree and records the job cancelled.
func runWorker(ctx context.Context, a *app, args []string) int {
	var dataDir, workspace, id string
	var total, exitGrace time.Duration
	fs := newFlags(workerCommand)
	fs.StringVar(&dataDir, "data", "", "")
	fs.StringVar(&workspace, "workspace", "", "")
	fs.StringVar(&id, "id", "", "")
	fs.DurationVar(&total, "timeout", task.DefaultTotalTimeout, "")
	fs.DurationVar(&exitGrace, "exit-grace", task.DefaultExitGrace, "")
	if err := fs.Parse(args); err != nil || dataDir == "" || id == "" {
		fmt.Fprintln(a.stderr, "cursorkit: the job worker is started by cursorkit itself")
		return failure.ExitInput
	}
	launch.PrepareGuard(ctx)
	store := jobs.Store{Dir: dataDir}
	w := jobs.Worker{Log: log.New(a.stderr, "cursorkit worker: ", 0)}
	w.Run = func(ctx context.Context, rec *jobs.Record, prompt string, out *jobs.OutputWriter) error {
		opts := task.Options{Env: os.Environ(), Turn: task.Defaults(), Output: out}
		opts.Turn.TotalTimeout, opts.Turn.ExitGrace = total, exitGrace
		if rec.Role == jobs.RoleReview {
			opts.Check = review.CheckVerdict
		}
		// The zero binary is the build the job recorded.
		_, _, err := task.Execute(ctx, store, rec, prompt, cursor.Binary{}, opts)
		return err
	}
	if err := w.Work(ctx, store, workspace, id); err != nil {
		fmt.Fprintf(a.stderr, "cursorkit worker: %v\n", err)
		return failure.ExitCodeOf(err)
	}
	return failure.ExitOK
}

const jobsUsage = "jobs status [ID] [--all] | result ID [--wait] | cancel ID | accept ID --acceptance accepted|rejected|unverified [--note TEXT] | history [--all] [--limit N] | cleanup --session ID  [--cwd DIR] [--json]"

// jobsFlags are the flags of `cursorkit jobs`, each a subcommand's.
type jobsFlags struct {
	asJSON, all, wait          bool
	cwd, session               string
	acceptance, note           string
	acceptanceSet, noteOrState bool
	limit                      int
}

// runJobs is `cursorkit jobs SUBCOMMAND`.
func runJobs(ctx context.Context, a *app, args []string) int {
	var f jobsFlags
	fs := newFlags("jobs")
	fs.IntVar(&f.limit, "limit", jobs.DefaultHistoryLimit, "history: at most `N` jobs, newest first")
	fs.BoolVar(&f.asJSON, "json", a.json, "print JSON on stdout")
	fs.BoolVar(&f.all, "all", false, "status: every workspace's jobs")
	fs.BoolVar(&f.wait, "wait", false, "result: wait while the job runs (CURSORKIT_WAIT_TIMEOUT)")
	fs.StringVar(&f.session, "session", "", "cleanup: the launcher session `ID` (CURSORKIT_SESSION) whose running jobs to stop")
	fs.StringVar(&f.acceptance, "acceptance", "", "accept: the verdict `STATE` on the finished job: accepted, rejected or unverified")
	fs.StringVar(&f.note, "note", "", fmt.Sprintf("accept: one line of `TEXT` (at most %d bytes) kept with the verdict", jobs.MaxNoteBytes))
	fs.StringVar(&f.cwd, "cwd", "", "the workspace `DIR` (default: search every workspace by id; status lists the current one)")
	if code, ok := a.parseFlags(fs, jobsUsage, args); !ok {
		return code
	}
	f.acceptanceSet = fs.Changed("acceptance")
	f.noteOrState = f.acceptanceSet || fs.Changed("note")
	rest := fs.Args()
	if len(rest) == 0 {
		return a.usageError(f.asJSON, jobsUsage, errors.New("jobs needs a subcommand: status, result, cancel, accept, history or cleanup"))
	}
	dataDir, err := jobs.DataDir(a.getenv)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	grace, err := a.startGrace()
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	workspace := ""
	if f.cwd != "" {
		if workspace, err = task.Workspace(f.cwd); err != nil {
			return a.fail(f.asJSON, err)
		}
	}
	sub, ids := rest[0], rest[1:]
	if len(ids) > 1 {
		return a.usageError(f.asJSON, jobsUsage, fmt.Errorf("jobs %s takes one job id", sub))
	}
	id := ""
	if len(ids) == 1 {
		id = ids[0]
	}
	return a.jobsSubcommand(ctx, jobs.Store{Dir: dataDir}, grace, workspace, sub, id, f)
}

// jobsSubcommand runs jobs subcommand sub on the job id ("" for none).
func (a *app) jobsSubcommand(ctx context.Context, store jobs.Store, grace time.Duration, workspace, sub, id string, f jobsFlags) int {
	asJSON := f.asJSON
	if f.session != "" && sub != "cleanup" {
		return a.usageError(asJSON, jobsUsage, fmt.Errorf("--session is cleanup's; jobs %s takes none", sub))
	}
	if f.noteOrState && sub != "accept" {
		return a.usageError(asJSON, jobsUsage, fmt.Errorf("--acceptance and --note are accept's; jobs %s takes neither", sub))
	}
	switch sub {
	case "cleanup":
		if id != "" {
			return a.usageError(asJSON, jobsUsage, errors.New("jobs cleanup takes no job id: it stops every running job of --session"))
		}
		if strings.TrimSpace(f.session) == "" {
			return a.usageError(asJSON, jobsUsage, errors.New("jobs cleanup needs --session ID (the CURSORKIT_SESSION its jobs were started with)"))
		}
		return a.jobsCleanup(ctx, store, grace, strings.TrimSpace(f.session), asJSON)
	case "history":
		if id != "" {
			return a.usageError(asJSON, jobsUsage, errors.New("jobs history takes no job id"))
		}
		return a.jobsList(ctx, store, grace, workspace, f.all, f.limit, asJSON)
	case "status":
		return a.jobsStatus(ctx, store, grace, workspace, id, f.all, asJSON)
	}
	if sub != "result" && sub != "cancel" && sub != "accept" {
		return a.usageError(asJSON, jobsUsage, fmt.Errorf("unknown jobs subcommand %q", sub))
	}
	if id == "" {
		return a.usageError(asJSON, jobsUsage, fmt.Errorf("jobs %s needs a job id", sub))
	}
	switch sub {
	case "result":
		return a.jobsResult(ctx, store, grace, workspace, id, f.wait, asJSON)
	case "accept":
		if !f.acceptanceSet {
			return a.usageError(asJSON, jobsUsage, errors.New("jobs accept needs --acceptance accepted, rejected or unverified"))
		}
		return a.jobsAccept(ctx, store, grace, workspace, id, jobs.AcceptanceState(f.acceptance), f.note, asJSON)
	}
	return a.jobsCancel(ctx, store, grace, workspace, id, asJSON)
}

func (a *app) jobsStatus(ctx context.Context, store jobs.Store, grace time.Duration, workspace, id string, all, asJSON bool) int {
	if id != "" {
		rec, err := store.Find(workspace, id)
		if err != nil {
			return a.fail(asJSON, err)
		}
		rec = jobs.Judge(ctx, store, rec, grace)
		if asJSON {
			a.writeJSON(rec)
		} else {
			printJobFooter(a.stdout, rec)
			printAcceptance(a.stdout, rec.Acceptance)
		}
		return failure.ExitOK
	}
	return a.jobsList(ctx, store, grace, workspace, all, jobs.DefaultHistoryLimit, asJSON)
}

// jobsList prints the newest jobs of the workspace (the current
// directory's by default) or, with all, of every workspace: a safe
// projection, no prompt and no output.
func (a *app) jobsList(ctx context.Context, store jobs.Store, grace time.Duration, workspace string, all bool, limit int, asJSON bool) int {
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
	entries, err := store.History(ctx, workspace, limit, grace)
	if err != nil {
		return a.fail(asJSON, err)
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
		if e.Acceptance != nil {
			fmt.Fprintf(a.stdout, "  acceptance: %s", e.Acceptance.State)
		}
		fmt.Fprintln(a.stdout)
	}
	return failure.ExitOK
}

// exitStillRunning is `jobs result --wait`'s exit code when the wait
// budget ended before the job (docs/contract.md, "Jobs").
const exitStillRunning = 12

func (a *app) jobsResult(ctx context.Context, store jobs.Store, grace time.Duration, workspace, id string, wait, asJSON bool) int {
	budget, err := a.envDuration(envWaitTimeout, 10*time.Minute)
	if err != nil {
		return a.fail(asJSON, err)
	}
	poll, err := a.envDuration(envWaitPoll, 200*time.Millisecond)
	if err != nil {
		return a.fail(asJSON, err)
	}
	rec, err := store.Find(workspace, id)
	if err != nil {
		return a.fail(asJSON, err)
	}
	if wait {
		if rec, err = jobs.Wait(ctx, store, rec, grace, budget, poll); err != nil {
			return a.fail(asJSON, err)
		}
	} else {
		rec = jobs.Judge(ctx, store, rec, grace)
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
func (a *app) printOutput(store jobs.Store, rec *jobs.Record, asJSON bool) error {
	var text int
	textEnded := false
	out := bufio.NewWriter(a.stdout)
	var guard lineGuard
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
		if head.Type == "text" && rec.Role != jobs.RoleReview {
			text += len(head.Text)
			textEnded = strings.HasSuffix(head.Text, "\n")
			guard.Write(out, forTerminal(head.Text))
		}
		return nil
	})
	guard.Flush(out)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	outcome := end.Outcome
	if failure.Is(err, failure.Input) {
		err = nil // no output kept (a job that never started its agent)
	}
	if err != nil {
		return err
	}
	if asJSON {
		line, err := jobs.OutcomeWithJob(outcome, rec)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(a.stdout, string(line))
		return err
	}
	printJobEnd(a.stdout, rec, text > 0, textEnded)
	printAcceptance(a.stdout, rec.Acceptance)
	return nil
}

// printAcceptance ends a job's footer with the operator's verdict, when
// one was given.
func printAcceptance(w io.Writer, acc *jobs.Acceptance) {
	if acc == nil {
		return
	}
	fmt.Fprintf(w, "acceptance: %s\n", acc.State)
	if acc.Note != "" {
		fmt.Fprintf(w, "acceptance-note: %s\n", oneLine(acc.Note))
	}
}

func (a *app) jobsCancel(ctx context.Context, store jobs.Store, grace time.Duration, workspace, id string, asJSON bool) int {
	rec, err := store.Find(workspace, id)
	if err != nil {
		return a.fail(asJSON, err)
	}
	rec, cancelled, err := jobs.Cancel(ctx, store, rec, grace)
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

// jobsAccept records the operator's verdict on a finished job (judged
// first, so a job whose worker is gone can be accepted as died).
func (a *app) jobsAccept(ctx context.Context, store jobs.Store, grace time.Duration, workspace, id string, state jobs.AcceptanceState, note string, asJSON bool) int {
	rec, err := store.Find(workspace, id)
	if err != nil {
		return a.fail(asJSON, err)
	}
	rec = jobs.Judge(ctx, store, rec, grace)
	if rec, err = store.Accept(rec.Workspace, rec.ID, state, note); err != nil {
		return a.fail(asJSON, err)
	}
	if asJSON {
		a.writeJSON(map[string]any{"id": rec.ID, "state": string(rec.State), "acceptance": rec.Acceptance})
		return failure.ExitOK
	}
	fmt.Fprintf(a.stdout, "job: %s\nstate: %s\n", rec.ID, rec.State)
	printAcceptance(a.stdout, rec.Acceptance)
	return failure.ExitOK
}

// jobsCleanup stops every unfinished job of launcher session (jobs.Cleanup)
// and prints what became of each.
func (a *app) jobsCleanup(ctx context.Context, store jobs.Store, grace time.Duration, session string, asJSON bool) int {
	results, err := jobs.Cleanup(ctx, store, session, grace)
	if err != nil {
		return a.fail(asJSON, err)
	}
	code := failure.ExitOK
	answers := make([]map[string]any, 0, len(results))
	for _, res := range results {
		m := cancelAnswer(res.Record, res.Cancelled)
		if res.Err != nil {
			m["error"] = errorObject{Kind: failure.KindOf(res.Err), Message: res.Err.Error()}
			if code == failure.ExitOK {
				code = failure.ExitCodeOf(res.Err)
			}
		}
		answers = append(answers, m)
		if asJSON {
			continue
		}
		switch {
		case res.Err != nil:
			fmt.Fprintf(a.stdout, "%s  %s  not stopped: %v\n", res.Record.ID, res.Record.State, res.Err)
		case res.Cancelled:
			fmt.Fprintf(a.stdout, "%s  cancelled\n", res.Record.ID)
		default:
			fmt.Fprintf(a.stdout, "%s  %s (had already ended)\n", res.Record.ID, res.Record.State)
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
func cancelAnswer(rec *jobs.Record, cancelled bool) map[string]any {
	m := map[string]any{"id": rec.ID, "state": string(rec.State), "cancelled": cancelled}
	if !cancelled {
		m["reason"] = "the job had already ended"
	}
	return m
}
