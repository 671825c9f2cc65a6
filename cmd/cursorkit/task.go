package main

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/jobs"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/task"
	"github.com/cursorkit/cursorkit/turn"
)

const taskUsage = "task [--write] [--model ID] [--effort E] [--cwd DIR] [--timeout D] [--resume SESSION|--resume-last|--fresh] [--background] [--json] [--] [PROMPT...]"

// jobFlags are the flags task and review share.
type jobFlags struct {
	asJSON        bool
	background    bool
	model, effort string
	cwd           string
	total         time.Duration
}

func (f *jobFlags) add(fs interface {
	BoolVar(*bool, string, bool, string)
	StringVar(*string, string, string, string)
}, a *app) {
	fs.BoolVar(&f.asJSON, "json", a.json, "print NDJSON events on stdout, ending with an outcome line that carries the job record")
	fs.StringVar(&f.model, "model", "", "model `ID` or name, resolved through the catalog (auto and default are refused; default: Cursor's default model, as the private home hides the user's own choice)")
	fs.StringVar(&f.effort, "effort", "", "reasoning `EFFORT` for --model (low, medium, high, xhigh...)")
	fs.StringVar(&f.cwd, "cwd", "", "the workspace `DIR` (default: the current directory, which must then be its git repository's root)")
	fs.BoolVar(&f.background, "background", false, "detach into a worker and print the job id at once (see cursorkit jobs)")
}

func runTask(ctx context.Context, a *app, args []string) int {
	var f jobFlags
	var write bool
	fs := newFlags("task")
	f.add(fs, a)
	var resume string
	var resumeLast, fresh bool
	fs.StringVar(&resume, "resume", "", "continue the session `ID` of a finished task of this workspace and mode")
	fs.BoolVar(&resumeLast, "resume-last", false, "continue the newest finished task of this workspace and mode (only this CURSORKIT_SESSION's when set)")
	fs.BoolVar(&fresh, "fresh", false, "start a new session (the default)")
	fs.BoolVar(&write, "write", false, "write mode: the agent may edit files and run commands inside the workspace (default: consult, read-only)")
	fs.DurationVar(&f.total, "timeout", task.DefaultTotalTimeout, "fail when the task takes longer than `D`")
	// Options come first: from the prompt's first word on, the rest of the
	// line is the prompt, "--" in it included.
	fs.SetInterspersed(false)
	if code, ok := a.parseFlags(fs, taskUsage, args); !ok {
		return code
	}
	if !f.background {
		launch.PrepareGuard(ctx)
	}
	if !fs.Changed("timeout") {
		var err error
		if f.total, err = a.envDuration(envTaskTimeout, f.total); err != nil {
			return a.fail(f.asJSON, err)
		}
	}
	if f.total <= 0 {
		return a.fail(f.asJSON, failure.New(failure.Input, "--timeout must be positive"))
	}
	workspace, err := task.Workspace(f.cwd)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	words := fs.Args()
	if len(words) > 1 {
		words = []string{strings.Join(words, " ")}
	}
	prompt, err := a.readPrompt(ctx, words)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	spec := task.Spec{Role: jobs.RoleTask, Mode: jobs.ModeConsult, Prompt: prompt, Workspace: workspace}
	if write {
		spec.Mode = jobs.ModeWrite
	}
	chosen := 0
	for _, on := range []bool{resume != "", resumeLast, fresh} {
		if on {
			chosen++
		}
	}
	if chosen > 1 {
		return a.fail(f.asJSON, failure.New(failure.Input, "--resume, --resume-last and --fresh exclude each other"))
	}
	if resume != "" || resumeLast {
		dataDir, err := jobs.DataDir(a.getenv)
		if err != nil {
			return a.fail(f.asJSON, err)
		}
		parent, err := jobs.Store{Dir: dataDir}.ResumeFrom(workspace, spec.Mode, strings.TrimSpace(os.Getenv(jobs.EnvSession)), resume)
		if err != nil {
			return a.fail(f.asJSON, err)
		}
		spec.Resume = parent
	}
	return a.runJob(ctx, f, spec, jobExtras{})
}

// jobExtras are what a review adds to a job: its verdict check and the
// warnings made before it started.
type jobExtras struct {
	check    func(string) (jsontext.Value, error)
	warnings []event.Warning
}

// planJob probes the binary and resolves the model: everything that can
// fail before a record exists.
func (a *app) planJob(ctx context.Context, f jobFlags, spec *task.Spec) error {
	if f.effort != "" && f.model == "" {
		return failure.New(failure.Input, "--effort needs --model")
	}
	cfg, report, err := a.probeCursor(ctx)
	if err != nil {
		return err
	}
	spec.Binary, spec.Version = report.Binary, report.Version
	spec.RequestedModel, spec.RequestedEffort = f.model, f.effort
	if f.model != "" {
		spec.ResolvedModel, spec.EffortApplied, err = probe.ResolveTurnModel(ctx, cfg, report, f.model, f.effort)
	}
	return err
}

// cursorUnavailable fails a task or review that cannot use the Cursor CLI
// (err, from its probe) the way an orchestrator's circuit breaker reads
// it: one line `cursor unavailable: KIND: REASON` on stderr, and under
// --json the typed error on stdout. A refused input is an input error
// as any other.
func (a *app) cursorUnavailable(asJSON bool, err error) int {
	kind := failure.KindOf(err)
	if kind == failure.Input || kind == failure.Cancelled {
		return a.fail(asJSON, err)
	}
	fmt.Fprintf(a.stderr, "cursor unavailable: %s: %s\n", kind, oneLine(err.Error()))
	if asJSON {
		a.writeJSON(errorBody{Error: errorObject{Kind: kind, Message: err.Error()}})
	}
	return failure.ExitCode(kind)
}

// runJob runs a planned task or review in the foreground and prints it:
// human output streams the agent's text (a review's verdict instead) and
// ends with the footer block; --json prints run's NDJSON events and one
// outcome line carrying the record as "job" (and a review's verdict as
// "review").
func (a *app) runJob(ctx context.Context, f jobFlags, spec task.Spec, x jobExtras) int {
	if err := a.planJob(ctx, f, &spec); err != nil {
		return a.cursorUnavailable(f.asJSON, err)
	}
	dataDir, err := jobs.DataDir(a.getenv)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	opts := task.Options{Env: os.Environ(), Turn: task.Defaults(), Check: x.check, Warnings: x.warnings}
	opts.Turn.TotalTimeout = f.total
	if opts.Turn.ExitGrace, err = a.envDuration(envExitGrace, opts.Turn.ExitGrace); err != nil {
		return a.fail(f.asJSON, err)
	}
	if f.background {
		return a.startBackground(ctx, f, jobs.Store{Dir: dataDir}, spec, opts)
	}
	// This command owns the job: jobs cancel stops it through this process
	// (its SIGTERM, or on Windows its kill, stops the agent's tree), and
	// the job is judged died if it is killed.
	if self, err := procid.Self(); err == nil {
		opts.Owner = &jobs.ProcessRef{PID: self.PID, Created: self.Created}
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	w := newTurnWriter(f.asJSON, a.stdout, a.stderr, stop)
	if spec.Role == jobs.RoleReview && !f.asJSON {
		w.quiet = true // the verdict is printed, not the raw reply
	}
	opts.Turn.OnEvent, opts.Turn.OnDrained = w.event, w.drained
	if !f.asJSON {
		// Hooks run while the turn does: say so before it starts, not
		// only in the footer.
		opts.OnStart = func(rec *jobs.Record) {
			for _, warn := range rec.Warnings {
				fmt.Fprintf(a.stderr, "warning: %s: %s\n", warn.Code, oneLine(warn.Message))
			}
		}
	}

	rec, o, err := task.Run(ctx, jobs.Store{Dir: dataDir}, spec, opts)
	w.close()
	if rec == nil {
		_ = w.out.Flush()
		return a.fail(f.asJSON, err)
	}
	if f.asJSON {
		if merr := writeJobOutcome(w.events.Encoder(), o, rec); merr != nil {
			fmt.Fprintf(a.stderr, "cursorkit: writing the outcome: %v\n", merr)
		}
		_ = w.out.Flush()
		return failure.ExitCodeOf(err)
	}
	printJobEnd(w.out, rec, w.text > 0, w.textEnded)
	_ = w.out.Flush()
	if err != nil && o.Process.StderrTail != "" {
		fmt.Fprintf(a.stderr, "agent stderr (last lines):\n%s\n", forTerminal(lastLines(o.Process.StderrTail, 10)))
	}
	return failure.ExitCodeOf(err)
}

// printJobEnd is how a job's human output ends, in the foreground as in
// jobs result: the text ended by a newline, the verdict of a review, a
// blank line, the footer.
func printJobEnd(w io.Writer, rec *jobs.Record, text, textEnded bool) {
	if text && !textEnded {
		fmt.Fprintln(w)
	}
	verdict := rec.Role == jobs.RoleReview && len(rec.Review) > 0
	if verdict {
		renderVerdict(w, rec.Review)
	}
	if text || verdict {
		fmt.Fprintln(w)
	}
	printJobFooter(w, rec)
}

// printJobFooter writes the companion contract's footer block.
func printJobFooter(w io.Writer, rec *jobs.Record) {
	if rec.SessionID != "" {
		fmt.Fprintf(w, "cursor-session: %s\n", rec.SessionID)
	}
	fmt.Fprintf(w, "job: %s\n", rec.ID)
	fmt.Fprintf(w, "sandbox: %s\n", rec.Sandbox)
	fmt.Fprintf(w, "delivery: %s\n", rec.Delivery)
	semantic := string(rec.Mode) // consult or write; a review is a review
	if rec.Role == jobs.RoleReview {
		semantic = string(jobs.RoleReview)
	}
	fmt.Fprintf(w, "semantic: %s\n", semantic)
	for _, warn := range rec.Warnings {
		fmt.Fprintf(w, "warning: %s: %s\n", warn.Code, oneLine(warn.Message))
	}
	fmt.Fprintf(w, "state: %s\n", rec.State)
	if rec.Failure != nil && (rec.State == jobs.StateError || rec.State == jobs.StateCancelled) {
		fmt.Fprintf(w, "failure: %s: %s\n", rec.Failure.Kind, oneLine(rec.Failure.Message))
	}
}

// oneLine is s for one line of human output: on its line, without a
// control character (forTerminal).
func oneLine(s string) string {
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(forTerminal(s))
}

// writeJobOutcome writes run's outcome line with the job record (and a
// review's verdict) added as its last members.
func writeJobOutcome(enc *jsontext.Encoder, o turn.Outcome, rec *jobs.Record) error {
	// The outcome's warnings are the job's: those made before the turn
	// (hooks, a cut diff) and the turn's own, as the record has them.
	o.Warnings = rec.Warnings
	base, err := json.Marshal(o, enc.Options())
	if err != nil {
		return err
	}
	line, err := jobs.OutcomeWithJob(base, rec)
	if err != nil {
		return err
	}
	return enc.WriteValue(line)
}
