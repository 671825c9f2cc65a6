// Package gitexec runs git the way cursorkit runs every child
// (docs/contract.md, "Supervision"), for the packages that ask git
// questions (review, mcpstage): the program resolved by discovery as the
// bare name git on PATH, planned by shim, started and supervised by
// supervise under a total deadline with the tree killed at once, stdout
// bounded and stderr kept as a short tail. Every command gets the same -c
// settings (Config) and the same environment rules (Env), so no program
// named by the repository's configuration or the caller's environment runs
// and git answers about the directory it is run in.
//
// The timeout and the stdout bound are the caller's: each passes its own
// to Run. What a missing git means (a setup failure, or "no git here") is
// the caller's too: New only tells it apart (Missing).
package gitexec

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/childenv"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
)

// StderrTail is the stderr kept of a command for its messages (then
// bounded again by detail.Bound in Result.Why).
const StderrTail = 4 << 10

// Config returns the -c settings (and global options) every git command
// gets, before its own arguments, as a new slice:
//   - core.quotepath=off: paths are printed as they are, not octal-quoted,
//     so callers can read them back;
//   - core.fsmonitor=false: no filesystem monitor, a hook command the
//     repository's configuration could name;
//   - color.ui=false: no colour codes in output that is parsed;
//   - --no-pager: git never starts a pager.
func Config() []string {
	return []string{
		"-c", "core.quotepath=off",
		"-c", "core.fsmonitor=false",
		"-c", "color.ui=false",
		"--no-pager",
	}
}

// EnvDrop returns the variables a child git never inherits:
//   - GIT_EXTERNAL_DIFF, GIT_DIFF_OPTS, GIT_PAGER, PAGER: commands (and
//     diff options) that would run a program or change the output;
//   - GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY,
//     GIT_ALTERNATE_OBJECT_DIRECTORIES, GIT_COMMON_DIR, GIT_NAMESPACE,
//     GIT_PREFIX, GIT_CEILING_DIRECTORIES: everything that would point git
//     at another repository (or stop its search) than the one found from
//     the directory the command runs in; a git hook that started cursorkit
//     sets some of them.
func EnvDrop() []string {
	return []string{
		"GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER", "PAGER",
		"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
		"GIT_PREFIX", "GIT_CEILING_DIRECTORIES",
	}
}

// EnvSet returns what is added to every git command's environment:
//   - GIT_TERMINAL_PROMPT=0: never prompt (there is no terminal to answer);
//   - GIT_PAGER=cat, PAGER=cat: never page, even where --no-pager is not
//     honoured;
//   - GIT_OPTIONAL_LOCKS=0: take no optional locks, so a command that only
//     reads (status) does not write the index's stat cache or contend with
//     the user's own git;
//   - LC_ALL=C: messages in English, since callers read a few of them
//     ("not a git repository", "did not match").
func EnvSet() []string {
	return []string{
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_OPTIONAL_LOCKS=0",
		"LC_ALL=C",
	}
}

// Env returns env (NAME=value entries) without EnvDrop() and without any
// earlier value of an EnvSet() name, in order, followed by EnvSet(), as a
// new slice; env is not modified. Names are compared case-insensitively
// when foldCase (Windows), exactly otherwise.
func Env(env []string, foldCase bool) []string {
	drop, set := EnvDrop(), EnvSet()
	same := func(a, b string) bool { return a == b || foldCase && strings.EqualFold(a, b) }
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(drop, func(d string) bool { return same(name, d) }) ||
			slices.ContainsFunc(set, func(s string) bool { n, _, _ := strings.Cut(s, "="); return same(name, n) }) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, set...)
}

// Runner runs git commands: one resolved git, its shim options and the
// environment every command gets. It is safe for concurrent use.
type Runner struct {
	res  discovery.Resolution
	shim shim.Options
	env  []string
}

// New resolves git on the PATH (and PATHEXT) of env (nil: this process's)
// with goos's rules, and returns a Runner whose commands get Env(env,
// goos == "windows").
//
// The error is discovery's, unchanged: a cancelled or timed-out resolution
// (failure.Cancelled, failure.Timeout), or git not found, for which Missing
// reports true and which the caller maps to its own meaning.
func New(ctx context.Context, env []string, goos string) (*Runner, error) {
	if env == nil {
		env = os.Environ()
	}
	denv := discovery.EnvFromOS()
	denv.GOOS = goos
	denv.Path, denv.PathExt = childenv.Lookup(env, "PATH", goos), childenv.Lookup(env, "PATHEXT", goos)
	res, err := discovery.Resolve(ctx, discovery.Candidate{Value: "git", Source: discovery.SourcePath}, denv, discovery.OSFS())
	if err != nil {
		return nil, err
	}
	opts := shim.OptionsFromOS()
	opts.GOOS = goos
	return &Runner{res: res, shim: opts, env: Env(env, goos == "windows")}, nil
}

// Missing reports whether err, from New, means git could not be resolved:
// any error but a cancelled or timed-out resolution. False for nil.
func Missing(err error) bool {
	if err == nil {
		return false
	}
	switch failure.KindOf(err) {
	case failure.Cancelled, failure.Timeout:
		return false
	}
	return true
}

// Result is one git command's answer.
type Result struct {
	Out       []byte // stdout, at most the limit given to Run
	Size      int64  // every stdout byte git printed
	Truncated bool   // Out holds less than git printed
	ExitCode  int
	Stderr    string // the last StderrTail bytes of stderr
}

// Run runs git with Config(), then args, in dir, killing its tree after
// timeout, keeping at most limit bytes of stdout: lines with their endings,
// the one crossing the limit cut there, a line longer than limit skipped
// whole; Truncated says either happened. A run that did not end with an exit code is an error, named
// after the first argument not starting with '-' ("git rev-parse ..."):
// not launchable (shim's kind), killed by a signal (failure.Died),
// cancelled (failure.Cancelled), out of time (failure.Timeout), not started
// (spawn's kind, failure.Setup for a vanished program), any other
// supervision error (failure.Process). The exit code is the caller's to
// judge; r holds what was read in every case.
func (g *Runner) Run(ctx context.Context, dir string, timeout time.Duration, limit int, args ...string) (r Result, err error) {
	what := "git"
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			what = "git " + a
			break
		}
	}
	plan, err := shim.Build(g.res, append(Config(), args...), g.shim)
	if err != nil {
		return Result{}, failure.Wrap(failure.KindOf(err), err, "%s cannot be launched", what)
	}
	var out bytes.Buffer
	truncated := false
	o, runErr := supervise.Run(ctx, plan, supervise.Options{
		Dir:             dir,
		Env:             g.env,
		TotalTimeout:    timeout,
		MaxLineBytes:    max(limit, 1),
		StderrTailBytes: StderrTail,
		Lines:           supervise.KeepEndings,
		OnLine: func(line []byte) error {
			if out.Len()+len(line) > limit {
				truncated = true
				out.Write(line[:max(limit-out.Len(), 0)])
				return nil
			}
			out.Write(line)
			return nil
		},
		OnOversizedLine: func(int64) { truncated = true },
	})
	r = Result{Out: out.Bytes(), Size: o.Bytes, Truncated: truncated, ExitCode: o.ExitCode, Stderr: o.StderrTail}
	switch o.Ending {
	case supervise.Exited:
		if o.Signal != 0 {
			return r, failure.New(failure.Died, "%s was killed by signal %d", what, o.Signal)
		}
		return r, nil
	case supervise.Cancelled:
		return r, failure.Wrap(failure.Cancelled, runErr, "%s was cancelled", what)
	case supervise.TotalTimeout, supervise.FirstLineTimeout, supervise.IdleTimeout:
		return r, failure.New(failure.Timeout, "%s did not finish within %s; its process tree was killed", what, timeout)
	case supervise.SpawnFailed:
		kind := failure.KindOf(runErr)
		if kind == failure.MissingCLI {
			// A git that vanished between resolution and start is the
			// machine's setup, not the agent CLI missing.
			kind = failure.Setup
		}
		return r, failure.Wrap(kind, runErr, "git could not be started")
	}
	if runErr == nil {
		return r, nil
	}
	return r, failure.Wrap(failure.Process, runErr, "%s failed", what)
}

// Why is a bounded reason from git's stderr: its last "fatal:" or
// "error:" line, else its last non-blank line, else "exit N".
func (r Result) Why() string {
	pick, last := "", ""
	for _, l := range strings.Split(r.Stderr, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		last = l
		if strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:") {
			pick = l
		}
	}
	if pick == "" {
		pick = last
	}
	if pick == "" {
		return "exit " + strconv.Itoa(r.ExitCode)
	}
	return detail.Bound(pick)
}
