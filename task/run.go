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

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
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

// EnvAPIKey is the credential the Cursor CLI reads on Linux; a task passes
// it through unchanged and never reads or copies a credential file.
const EnvAPIKey = "CURSOR_API_KEY"

// Spec is one task or review to run.
type Spec struct {
	Role Role
	Mode Mode // a review is always ModeConsult
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
}

// Options configure a run.
type Options struct {
	// Env is the environment the private one is made from (nil:
	// os.Environ()): HOME points at the task's private home, the XDG
	// configuration, data and state directories are removed so that they
	// follow it, and everything else, EnvAPIKey included, passes unchanged.
	Env []string
	// Turn carries the deadlines, graces and event callbacks (start from
	// Defaults; Dir and Env are the task's own and are ignored).
	Turn agent.Options
	// Check, when set, reads the result text of a turn that ended done:
	// a non-nil error fails the job with it (a review's verdict that does
	// not validate); the value is kept as Record.Review.
	Check func(resultText string) (jsontext.Value, error)
	// Warnings are the caller's own warnings (a review's cut diff), recorded
	// before the turn's.
	Warnings []event.Warning
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Defaults returns the task's supervision: first line 30 s, inactivity
// 120 s, total 540 s, exit grace 15 s after the result, then a polite stop
// and the tree killed 5 s later.
func Defaults() agent.Options {
	return agent.Options{
		FirstLineTimeout: DefaultFirstLineTimeout,
		IdleTimeout:      DefaultIdleTimeout,
		TotalTimeout:     DefaultTotalTimeout,
		ExitGrace:        DefaultExitGrace,
		StopGrace:        DefaultStopGrace,
	}
}

// Warnings a task adds before launch.
const (
	// WarnProjectHooks: project hooks run outside the sandbox.
	WarnProjectHooks = "project_hooks"
	// WarnWorkspaceSandbox: the workspace's own .cursor/sandbox.json takes
	// priority over the private home's (docs/contract.md, "The task
	// profile") and may widen the task's policy.
	WarnWorkspaceSandbox = "workspace_sandbox"
)

// Run runs spec in the foreground and returns its final record, the turn's
// outcome and the verdict (nil exactly when the job ended done). Failures
// before the private home and the record exist (a missing credential, an
// unusable data directory) return a nil record. Once the record exists
// every return leaves it saved in its final state, whatever the turn did,
// cancellation included: the record's save uses no context.
func Run(ctx context.Context, store Store, spec Spec, opts Options) (*Record, agent.Outcome, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if spec.Role == RoleReview {
		spec.Mode = ModeConsult
	}
	cmode, policy := cursor.ModeAsk, PolicyReadOnly
	switch spec.Mode {
	case ModeConsult:
	case ModeWrite:
		cmode, policy = cursor.ModeWrite, PolicyReadWrite
	default:
		return nil, agent.Outcome{}, failure.New(failure.Input, "unknown task mode %q", string(spec.Mode))
	}
	turn := cursor.Turn{Prompt: spec.Prompt, Mode: cmode, Model: spec.ResolvedModel, Sandboxed: true, PartialOutput: spec.PartialOutput}
	if _, err := cursor.Args(turn); err != nil {
		return nil, agent.Outcome{}, err
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	if err := checkCredentials(env); err != nil {
		return nil, agent.Outcome{}, err
	}

	created := now()
	id := NewID(spec.Role, created)
	home := store.HomeDir(id)
	gitDir, commonDir := GitDirs(spec.Workspace)
	hs := cursor.HomeSpec{Mode: cmode, Workspace: spec.Workspace, GitDir: gitDir, GitCommonDir: commonDir}
	if spec.Mode == ModeWrite {
		denv := discovery.EnvFromOS()
		denv.Path = lookup(env, "PATH")
		hs.RuntimeRoot = RuntimeRoot(ctx, denv)
	}
	if runtime.GOOS == "darwin" {
		hs.KeychainDir = keychainDir(env)
	}
	if err := cursor.WritePrivateHome(home, hs); err != nil {
		return nil, agent.Outcome{}, err
	}

	pool := BillingPool(spec.ResolvedModel)
	rec := &Record{
		Engine: "cursor", ID: id, Role: spec.Role, Mode: spec.Mode, Workspace: spec.Workspace,
		CursorVersion: spec.Version, CursorBuildPath: spec.Binary.Resolution.Path,
		RequestedModel: spec.RequestedModel, ResolvedModel: spec.ResolvedModel,
		RequestedEffort: spec.RequestedEffort, EffortApplied: spec.EffortApplied, BillingPool: pool,
		Sandbox: policy, Delivery: "foreground", AllowedTools: cursor.SandboxedTools(cmode), HomeDir: home,
		Warnings: slices.Clone(opts.Warnings), State: StateRunning, CreatedAt: created, UpdatedAt: created,
	}
	for _, h := range cursor.ProjectHooks(spec.Workspace) {
		rec.Warnings = append(rec.Warnings, event.Warning{Code: WarnProjectHooks, Message: h})
	}
	if _, err := os.Lstat(filepath.Join(spec.Workspace, ".cursor", "sandbox.json")); err == nil {
		rec.Warnings = append(rec.Warnings, event.Warning{Code: WarnWorkspaceSandbox, Message: ".cursor/sandbox.json in the workspace takes priority over the task's sandbox policy and may widen it"})
	}
	if rec.Warnings == nil {
		rec.Warnings = []event.Warning{}
	}
	if err := store.Save(rec); err != nil {
		return nil, agent.Outcome{}, err
	}

	topts := opts.Turn
	topts.Dir = spec.Workspace
	topts.Env = privateEnv(env, home)
	var resultText string
	onEvent := topts.OnEvent
	topts.OnEvent = func(e event.Event) {
		switch e.Type {
		case event.TypeResult:
			rec.RequestID = e.Result.RequestID
			resultText = e.Result.Text
		case event.TypeInit:
			rec.SessionID, rec.ObservedModel = e.Init.SessionID, e.Init.Model
		}
		if onEvent != nil {
			onEvent(e)
		}
	}
	o, err := cursor.Run(ctx, spec.Binary, turn, topts)
	if err == nil && opts.Check != nil {
		var v jsontext.Value
		if v, err = opts.Check(resultText); err == nil {
			rec.Review = v
		} else {
			o.Status, o.Kind, o.Message = agent.StatusError, failure.KindOf(err), err.Error()
		}
	}
	finish(rec, o, err, now())
	if serr := store.Save(rec); serr != nil && err == nil {
		err = serr
	}
	return rec, o, err
}

// finish puts a turn's outcome into its record.
func finish(rec *Record, o agent.Outcome, err error, at time.Time) {
	if o.SessionID != "" {
		rec.SessionID = o.SessionID
	}
	if o.Model != "" {
		rec.ObservedModel = o.Model
	}
	if rec.BillingPool == "" {
		rec.BillingPool = BillingPool(rec.ObservedModel)
	}
	rec.Usage = o.Usage
	rec.Warnings = append(rec.Warnings, o.Warnings...)
	rec.UpdatedAt, rec.EndedAt = at, &at
	switch {
	case err == nil:
		rec.State = StateDone
	default:
		kind := failure.KindOf(err)
		rec.State = StateError
		if kind == failure.Cancelled {
			rec.State = StateCancelled
		}
		rec.Failure = &Failure{Kind: kind, Message: err.Error()}
		if kind == failure.Quota || kind == failure.RateLimited {
			rec.Failure.BillingPool = rec.BillingPool
		}
	}
}

// checkCredentials fails a task that cannot authenticate before anything
// is made: on Linux the Cursor CLI in a private home has only EnvAPIKey.
func checkCredentials(env []string) error {
	if runtime.GOOS != "linux" {
		return nil
	}
	if strings.TrimSpace(lookup(env, EnvAPIKey)) == "" {
		return failure.New(failure.Auth, "%s is not set: a task runs the Cursor CLI in a private home, where its login is not visible; create an API key in the Cursor dashboard and export %s", EnvAPIKey, EnvAPIKey)
	}
	return nil
}

// keychainDir is the user's keychain directory on macOS, which the private
// home links to (never copies).
func keychainDir(env []string) string {
	if h := lookup(env, "HOME"); h != "" {
		return h + "/Library/Keychains"
	}
	return ""
}

func lookup(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && envKeyEqual(k, name) {
			v = val // the last one wins, as in os/exec
		}
	}
	return v
}

func envKeyEqual(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// privateEnv is env with HOME (and on Windows USERPROFILE, where the CLI
// reads its configuration) set to home, and the variables that would lead
// the agent to the user's own configuration removed: CURSOR_CONFIG_DIR and
// the XDG configuration, data and state directories (which then follow
// HOME). Everything else passes unchanged.
func privateEnv(env []string, home string) []string {
	replaced := []string{"HOME", "USERPROFILE", "CURSOR_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"}
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(replaced, func(name string) bool { return envKeyEqual(k, name) }) {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+home)
	if runtime.GOOS == "windows" {
		out = append(out, "USERPROFILE="+home)
	}
	return out
}
