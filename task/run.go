package task

import (
	"context"
	"encoding/json/jsontext"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/childenv"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/jobs"
	"github.com/cursorkit/cursorkit/turn"
)

// The task's supervision defaults (docs/contract.md, "Tasks and reviews").
const (
	DefaultFirstLineTimeout = 30 * time.Second
	DefaultIdleTimeout      = 120 * time.Second
	DefaultTotalTimeout     = 540 * time.Second
	DefaultExitGrace        = 15 * time.Second
	DefaultStopGrace        = 5 * time.Second
)

// Sandbox policies, by mode.
const (
	PolicyReadOnly  = "workspace_readonly"
	PolicyReadWrite = "workspace_readwrite"
)

// Spec is one task or review to run.
type Spec struct {
	Role jobs.Role
	Mode jobs.Mode // a review is always jobs.ModeConsult
	// Prompt travels on the agent's stdin only.
	Prompt string
	// Workspace is the task's directory, as Workspace returned it.
	Workspace string
	// Binary is the Cursor CLI (package probe's choice) and Version the
	// build its --version printed.
	Binary  cursor.Binary
	Version string
	// RequestedModel and RequestedEffort are the caller's flags;
	// ResolvedModel the catalog id they resolved to (probe.ResolveModel),
	// EffortApplied whether the effort is part of it.
	RequestedModel, RequestedEffort string
	ResolvedModel                   string
	EffortApplied                   bool
	// PartialOutput asks for --stream-partial-output.
	PartialOutput bool
	// Background prepares a job a detached worker will execute: state
	// starting, delivery background.
	Background bool
	// Resume is the job whose session this one continues (jobs.Store.ResumeFrom):
	// its chat is copied into the new private home before launch and the
	// agent gets --resume with its session.
	Resume *jobs.Record
}

// Options configure a run.
type Options struct {
	// Env is the environment the agent's is made from (nil: os.Environ()),
	// by cursor.PrivateEnv: HOME (and USERPROFILE on Windows) point at the
	// task's private home, CURSOR_CONFIG_DIR and the XDG configuration,
	// data and state directories are removed, and everything else,
	// cursor.EnvAPIKey included, passes unchanged.
	Env []string
	// Turn carries the deadlines, graces and event callbacks (start from
	// Defaults; Dir and Env are the task's own and are ignored).
	Turn turn.Options
	// Check, when set, reads the result text of a turn that ended done:
	// a non-nil error fails the job with it (a review's verdict that does
	// not validate); the value is kept as jobs.Record.Review.
	Check func(resultText string) (jsontext.Value, error)
	// Warnings are the caller's own warnings (a review's cut diff), recorded
	// before the turn's.
	Warnings []event.Warning
	// OnStart, when set, is called once the record is saved in state
	// running, before the agent starts: a caller prints the pre-launch
	// warnings there (project hooks run before the turn ends).
	OnStart func(*jobs.Record)
	// Output, when set, receives the job's events and outcome as they
	// come (the writer a jobs.Worker hands its Run), for jobs result.
	Output *jobs.OutputWriter
	// Owner, when set, is recorded as the job's Worker: the process that
	// runs the job and stops it cleanly, the agent's tree first, when it
	// gets a polite stop signal (SIGTERM; a kill on Windows, where its
	// kill-on-close Job Object takes the tree), as cursorkit's own command
	// does. jobs cancel then stops the job through it, and the job is
	// judged died once it is gone. Leave it nil in a program that does not
	// stop that way: nothing then signals it. Prepare ignores it for a
	// background job (its worker records itself).
	Owner *jobs.ProcessRef
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Defaults returns the task's supervision: first line 30 s, inactivity
// 120 s, total 540 s, exit grace 15 s after the result, then a polite stop
// and the tree killed 5 s later.
func Defaults() turn.Options {
	return turn.Options{
		FirstLineTimeout: DefaultFirstLineTimeout,
		IdleTimeout:      DefaultIdleTimeout,
		TotalTimeout:     DefaultTotalTimeout,
		ExitGrace:        DefaultExitGrace,
		StopGrace:        DefaultStopGrace,
	}
}

// Warnings a task adds.
const (
	// WarnProjectHooks: project hooks run outside the sandbox (before
	// launch).
	WarnProjectHooks = "project_hooks"
	// WarnNoChat: a resume found no chat to copy from the job it resumes.
	WarnNoChat = "no_chat"
)

// Run runs spec in the foreground and returns its final record, the turn's
// outcome and the error, nil exactly when the job ended done: Prepare,
// then Execute. Failures before the record exists (a bad mode, a missing
// credential, a workspace sandbox.json that could widen the policy, a
// data directory inside the workspace, a private home or first save that
// failed) return a nil record and leave nothing behind. Once the record
// exists every return leaves it saved in its final state, whatever the
// turn did, cancellation included: saving uses no context. When even the
// final save fails twice, the record returned carries a jobs.WarnRecordNotSaved
// warning.
func Run(ctx context.Context, store jobs.Store, spec Spec, opts Options) (*jobs.Record, turn.Outcome, error) {
	rec, err := Prepare(ctx, store, spec, opts)
	if err != nil {
		return nil, turn.Outcome{}, err
	}
	return Execute(ctx, store, rec, spec.Prompt, spec.Binary, opts)
}

// Prepare does everything a job needs before its agent starts: the
// checks, the private home and the first save of its record, in state
// running (foreground) or starting (spec.Background: a detached worker
// will Execute it). It returns the saved record, or an error and nothing
// left behind.
func Prepare(ctx context.Context, store jobs.Store, spec Spec, opts Options) (*jobs.Record, error) {
	now := clock(opts)
	if spec.Role == jobs.RoleReview {
		spec.Mode = jobs.ModeConsult
	}
	cmode, policy, err := modes(spec.Mode)
	if err != nil {
		return nil, err
	}
	req := agents.Turn{Prompt: spec.Prompt, Mode: cmode, Model: spec.ResolvedModel, Sandboxed: true, PartialOutput: spec.PartialOutput}
	if _, err := agents.Cursor().Args(req); err != nil {
		return nil, err
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	if err := cursor.CheckCredentials(env); err != nil {
		return nil, err
	}
	if err := cursor.CheckWorkspaceSandbox(spec.Workspace, cmode); err != nil {
		return nil, err
	}
	if err := checkApart(store.Dir, spec.Workspace); err != nil {
		return nil, err
	}

	created := now()
	id := jobs.NewID(spec.Role, created)
	home := store.HomeDir(id)
	if err := cursor.WritePrivateHome(home, homeSpec(ctx, spec, cmode, env)); err != nil {
		_ = store.RemoveRun(id)
		return nil, err
	}

	rec := &jobs.Record{
		Engine: "cursor", ID: id, Role: spec.Role, Mode: spec.Mode, Workspace: spec.Workspace,
		CursorVersion: spec.Version, CursorBuildPath: spec.Binary.Resolution.Executable(),
		RequestedModel: spec.RequestedModel, ResolvedModel: spec.ResolvedModel,
		RequestedEffort: spec.RequestedEffort, EffortApplied: spec.EffortApplied, BillingPool: cursor.BillingPool(spec.ResolvedModel),
		Sandbox: policy, Delivery: jobs.DeliveryForeground, AllowedTools: cursor.SandboxedTools(cmode), HomeDir: home,
		Warnings: slices.Clone(opts.Warnings), State: jobs.StateRunning, CreatedAt: created, UpdatedAt: created,
		LauncherSession: strings.TrimSpace(childenv.Lookup(env, jobs.EnvSession, runtime.GOOS)),
	}
	if spec.Background {
		rec.Delivery, rec.State = jobs.DeliveryBackground, jobs.StateStarting
	} else if opts.Owner != nil {
		owner := *opts.Owner
		rec.Worker = &owner
	}
	if spec.Resume != nil {
		if err := resume(rec, spec.Resume); err != nil {
			_ = store.RemoveRun(id)
			return nil, err
		}
	}
	for _, h := range cursor.ProjectHooks(spec.Workspace) {
		rec.Warnings = append(rec.Warnings, event.Warning{Code: WarnProjectHooks, Message: h})
	}
	if rec.Warnings == nil {
		rec.Warnings = []event.Warning{}
	}
	if err := store.Save(rec); err != nil {
		_ = store.RemoveRun(id)
		return nil, err
	}
	return rec, nil
}

// homeSpec is the private home of a task of spec, in Cursor's mode cmode,
// whose environment is env.
func homeSpec(ctx context.Context, spec Spec, cmode turn.Mode, env []string) cursor.HomeSpec {
	gitDir, commonDir := GitDirs(spec.Workspace)
	hs := cursor.HomeSpec{Mode: cmode, Workspace: spec.Workspace, GitDir: gitDir, GitCommonDir: commonDir}
	if spec.ResolvedModel == "" {
		// Without --model the user's own choice runs, as outside a task.
		hs.Model, hs.ModelChanged = cursor.UserModelChoice(env, runtime.GOOS)
	}
	if spec.Mode == jobs.ModeWrite {
		denv := discovery.EnvFromOS()
		denv.Path = childenv.Lookup(env, "PATH", runtime.GOOS)
		hs.RuntimeRoot = cursor.RuntimeRoot(ctx, denv)
	}
	if runtime.GOOS == "darwin" {
		hs.KeychainDir = cursor.KeychainDir(env)
	}
	return hs
}

// resume makes rec continue the session of job p: p must be a finished job
// of rec's workspace and mode that recorded a session, and its chat is
// copied into rec's private home.
func resume(rec, p *jobs.Record) error {
	if p.SessionID == "" || !p.State.Terminal() || p.Workspace != rec.Workspace || p.Mode != rec.Mode {
		return failure.New(failure.Input, "job %s cannot be resumed here: only a finished job of the same workspace and mode that recorded a session can", p.ID)
	}
	rec.ParentJob, rec.ResumedSession = p.ID, p.SessionID
	copied, err := CopyChat(p.HomeDir, rec.HomeDir, p.SessionID)
	if err != nil {
		return err
	}
	if copied == ChatNone {
		rec.Warnings = append(rec.Warnings, event.Warning{Code: WarnNoChat, Message: "the resumed job's home holds no chat; the agent resumes from what Cursor keeps itself"})
	}
	return nil
}

// Execute runs the agent of a prepared job (Prepare's record, here or in a
// detached worker) on bin with prompt, and saves the record as running,
// then final: the turn, a review's Check, the outcome. The zero bin is the
// build the record names (CursorBuildPath), found again as a configured
// binary, as a detached worker runs it; a build that is gone by then fails
// the call with the record still unfinished. Its events go to
// opts.Turn.OnEvent and, when opts.Output is set, to that output file.
func Execute(ctx context.Context, store jobs.Store, rec *jobs.Record, prompt string, bin cursor.Binary, opts Options) (*jobs.Record, turn.Outcome, error) {
	now := clock(opts)
	cmode, _, err := modes(rec.Mode)
	if err != nil {
		return rec, turn.Outcome{}, err
	}
	if bin.Resolution.Path == "" {
		if bin, err = recordedBinary(ctx, rec); err != nil {
			return rec, turn.Outcome{}, err
		}
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	if rec.State == jobs.StateStarting {
		rec.State, rec.UpdatedAt = jobs.StateRunning, now()
		if err := store.Save(rec); err != nil {
			return rec, turn.Outcome{}, err
		}
	}
	if opts.OnStart != nil {
		opts.OnStart(rec)
	}
	req := agents.Turn{Prompt: prompt, Mode: cmode, Model: rec.ResolvedModel, Resume: rec.ResumedSession, Sandboxed: true}
	topts := opts.Turn
	topts.Dir = rec.Workspace
	topts.Env = cursor.PrivateEnv(env, rec.HomeDir)
	// The agent's identity is recorded as it starts, for jobs cancel to
	// wait on; a failed read or save of it costs the record that detail
	// only, never the turn.
	topts.OnStarted = func(pid int) {
		if id, err := procid.Of(ctx, pid); err == nil {
			rec.Agent, rec.UpdatedAt = &jobs.ProcessRef{PID: id.PID, Created: id.Created}, now()
			_ = store.Save(rec)
		}
		if opts.Turn.OnStarted != nil {
			opts.Turn.OnStarted(pid)
		}
	}
	tee := &turnEvents{rec: rec, out: opts.Output}
	onEvent := topts.OnEvent
	topts.OnEvent = func(e event.Event) {
		tee.event(e)
		if onEvent != nil {
			onEvent(e)
		}
	}
	if opts.Output != nil {
		onDrained := topts.OnDrained
		topts.OnDrained = func() {
			tee.flush()
			if onDrained != nil {
				onDrained()
			}
		}
	}
	o, err := agents.Cursor().Run(ctx, bin.Resolution, bin.Configured, req, topts)
	tee.flush()
	if err == nil && opts.Check != nil {
		var v jsontext.Value
		if v, err = opts.Check(tee.resultText); err == nil {
			rec.Review = v
		} else {
			o.Status, o.Kind, o.Message = turn.StatusError, failure.KindOf(err), err.Error()
		}
	}
	if opts.Output != nil {
		_ = opts.Output.Outcome(o)
	}
	finish(rec, o, err, now())
	if serr := store.Save(rec); serr != nil {
		if serr = store.Save(rec); serr != nil {
			rec.Warnings = append(rec.Warnings, event.Warning{Code: jobs.WarnRecordNotSaved, Message: serr.Error()})
		}
	}
	return rec, o, err
}

// turnEvents is what Execute keeps of a turn's events: the session, model
// and request id go into the record, the result text to Check, and the
// events to the output file (when there is one) in bursts.
type turnEvents struct {
	rec        *jobs.Record
	out        *jobs.OutputWriter
	resultText string
	pending    []event.Event
}

func (t *turnEvents) event(e event.Event) {
	switch e.Type {
	case event.TypeResult:
		t.rec.RequestID = e.Result.RequestID
		t.resultText = e.Result.Text
	case event.TypeInit:
		t.rec.SessionID, t.rec.ObservedModel = e.Init.SessionID, e.Init.Model
	}
	if t.out != nil {
		t.pending = append(t.pending, e)
	}
}

// flush writes the pending events: the output file gets each burst in
// one write, when the stream is drained, not a write per line.
func (t *turnEvents) flush() {
	if len(t.pending) > 0 {
		_ = t.out.Events(t.pending...) // a full disk loses output, never the job
		t.pending = t.pending[:0]
	}
}

// recordedBinary is the Cursor CLI build job rec recorded, found again as
// a configured binary (so a build that vanished is not replaced by
// another).
func recordedBinary(ctx context.Context, rec *jobs.Record) (cursor.Binary, error) {
	res, err := discovery.Resolve(ctx, discovery.Candidate{Value: rec.CursorBuildPath, Source: discovery.SourceOverride, Origin: "the job record"},
		discovery.EnvFromOS(), discovery.OSFS())
	if err != nil {
		return cursor.Binary{}, err
	}
	return cursor.Binary{Resolution: res, Configured: true}, nil
}

func clock(opts Options) func() time.Time {
	if opts.Now != nil {
		return opts.Now
	}
	return time.Now
}

// modes maps a task mode to Cursor's mode and the sandbox policy.
func modes(m jobs.Mode) (turn.Mode, string, error) {
	switch m {
	case jobs.ModeConsult:
		return turn.ModeAsk, PolicyReadOnly, nil
	case jobs.ModeWrite:
		return turn.ModeWrite, PolicyReadWrite, nil
	}
	return "", "", failure.New(failure.Input, "unknown task mode %q", string(m))
}

// checkApart refuses a data directory inside the workspace or a workspace
// inside the data directory: in write mode the agent could rewrite its
// own sandbox policy, its records or another task's home.
func checkApart(dataDir, workspace string) error {
	d, w := realPath(dataDir), realPath(workspace)
	if within(w, d) || within(d, w) {
		return failure.New(failure.Input, "the workspace %s and the data directory %s overlap: the agent could change its own sandbox and records; move the data directory (CURSORKIT_DATA) or pick another workspace", workspace, dataDir)
	}
	return nil
}

// maxLinks bounds the links realPath follows, as the kernel bounds a
// lookup's (ELOOP).
const maxLinks = 255

// realPath is path with its links resolved as far as it exists: its
// longest existing prefix resolved, the rest appended. A link at the end
// of that prefix whose target does not exist yet (a data directory behind
// a link, before its first run) is followed too, so what is made through
// it later is compared where it will be.
func realPath(path string) string {
	p := filepath.Clean(path)
	for range maxLinks {
		head, rest := p, ""
		for {
			if _, err := os.Lstat(head); err == nil {
				break
			}
			parent := filepath.Dir(head)
			if parent == head {
				return p
			}
			rest = filepath.Join(filepath.Base(head), rest)
			head = parent
		}
		if r, err := filepath.EvalSymlinks(head); err == nil {
			return filepath.Join(r, rest)
		}
		target, err := os.Readlink(head)
		if err != nil {
			return p
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(head), target)
		}
		p = filepath.Join(target, rest)
	}
	return p
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// finish puts a turn's outcome into its record.
func finish(rec *jobs.Record, o turn.Outcome, err error, at time.Time) {
	if o.SessionID != "" {
		rec.SessionID = o.SessionID
	}
	if o.Model != "" {
		rec.ObservedModel = o.Model
	}
	if rec.BillingPool == "" {
		rec.BillingPool = cursor.BillingPool(rec.ObservedModel)
	}
	rec.Usage = o.Usage
	rec.Warnings = append(rec.Warnings, o.Warnings...)
	rec.UpdatedAt, rec.EndedAt = at, &at
	switch {
	case err == nil:
		rec.State = jobs.StateDone
	default:
		kind := failure.KindOf(err)
		rec.State = jobs.StateError
		if kind == failure.Cancelled {
			rec.State = jobs.StateCancelled
		}
		rec.Failure = &jobs.Failure{Kind: kind, Message: err.Error()}
		if kind == failure.Quota || kind == failure.RateLimited {
			rec.Failure.BillingPool = rec.BillingPool
		}
	}
}
