package review

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
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
)

// Bounds of one git command (docs/contract.md, "Review").
const (
	// gitTimeout bounds each git command; on it the command's tree is
	// killed at once.
	gitTimeout = 60 * time.Second
	// gitStderrTail is the stderr kept for a message (then bounded again
	// by detail.Bound).
	gitStderrTail = 4 << 10
)

// gitConfig returns the -c settings every git command gets: paths printed as
// they are, no filesystem monitor (a hook command the repository's
// configuration could name), no colour.
func gitConfig() []string {
	return []string{
		"-c", "core.quotepath=off",
		"-c", "core.fsmonitor=false",
		"-c", "color.ui=false",
		"--no-pager",
	}
}

// gitEnvDrop returns the variables a child git never inherits: the external
// diff and pager commands, and everything that would point git at another
// repository than the one at the directory under review.
func gitEnvDrop() []string {
	return []string{
		"GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER", "PAGER",
		"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
		"GIT_PREFIX", "GIT_CEILING_DIRECTORIES",
	}
}

// gitEnvSet returns added to every git command's environment: never prompt,
// never page, take no optional locks (a review does not write the index),
// and print messages in English for the few that are read.
func gitEnvSet() []string {
	return []string{
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_OPTIONAL_LOCKS=0",
		"LC_ALL=C",
	}
}

// gitEnv returns env without gitEnvDrop() and with gitEnvSet().
func gitEnv(env []string, foldCase bool) []string {
	drop, set := gitEnvDrop(), gitEnvSet()
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if slices.ContainsFunc(drop, func(d string) bool {
			return name == d || foldCase && strings.EqualFold(name, d)
		}) || slices.ContainsFunc(set, func(s string) bool {
			n, _, _ := strings.Cut(s, "=")
			return name == n || foldCase && strings.EqualFold(name, n)
		}) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, set...)
}

// git runs git commands in one directory the way cursorkit runs every
// child (docs/contract.md, "Supervision"): the program resolved by
// discovery as the bare name git, planned by shim, started and supervised
// by supervise under a total deadline with the tree killed at once, stdout
// bounded and stderr kept as a short tail.
type git struct {
	res  discovery.Resolution
	shim shim.Options
	env  []string
	dir  string
}

// gitResult is one git command's answer.
type gitResult struct {
	out       []byte
	size      int64 // every stdout byte git printed
	truncated bool  // out holds less than size
	exitCode  int
	stderr    string
}

// newGit resolves git on the PATH of env (nil: this process's).
func newGit(ctx context.Context, env []string, goos string) (*git, error) {
	if env == nil {
		env = os.Environ()
	}
	denv := discovery.EnvFromOS()
	denv.GOOS = goos
	denv.Path, denv.PathExt = lookup(env, "PATH", goos), lookup(env, "PATHEXT", goos)
	res, err := discovery.Resolve(ctx, discovery.Candidate{Value: "git", Source: discovery.SourcePath}, denv, discovery.OSFS())
	if err != nil {
		switch failure.KindOf(err) {
		case failure.Cancelled, failure.Timeout:
			return nil, err
		}
		// A missing git is the machine's setup, not the agent CLI missing:
		// missing_cli tells an orchestrator that Cursor is absent.
		return nil, &failure.Error{Kind: failure.Setup, Err: err,
			Message: "review needs git, and git was not found on PATH: install git or put it on PATH"}
	}
	opts := shim.OptionsFromOS()
	opts.GOOS = goos
	return &git{res: res, shim: opts, env: gitEnv(env, goos == "windows")}, nil
}

// lookup returns the value of name in env (case-insensitively on Windows).
func lookup(env []string, name, goos string) string {
	val := ""
	for _, kv := range env {
		n, v, ok := strings.Cut(kv, "=")
		if ok && (n == name || goos == "windows" && strings.EqualFold(n, name)) {
			val = v
		}
	}
	return val
}

// run runs git with args (after the common -c settings) in g.dir, keeping
// at most limit bytes of stdout. A run that did not end with an exit code
// (not started, timed out, cancelled, killed) is an error; the exit code
// is the caller's to judge.
func (g *git) run(ctx context.Context, limit int, args ...string) (gitResult, error) {
	argv := append(slices.Clone(gitConfig()), args...)
	plan, err := shim.Build(g.res, argv, g.shim)
	if err != nil {
		return gitResult{}, failure.Wrap(failure.KindOf(err), err, "git %s cannot be launched", args[0])
	}
	var out bytes.Buffer
	truncated := false
	o := supervise.Run(ctx, plan, supervise.Options{
		Dir:             g.dir,
		Env:             g.env,
		TotalTimeout:    gitTimeout,
		MaxLineBytes:    max(limit, 1),
		StderrTailBytes: gitStderrTail,
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
	r := gitResult{out: out.Bytes(), size: o.Bytes, truncated: truncated, exitCode: o.ExitCode, stderr: o.StderrTail}
	switch o.Ending {
	case supervise.Exited:
		if o.Signal != 0 {
			return r, failure.New(failure.Died, "git %s was killed by signal %d", args[0], o.Signal)
		}
		return r, nil
	case supervise.Cancelled:
		return r, failure.Wrap(failure.Cancelled, o.Err, "git %s was cancelled", args[0])
	case supervise.TotalTimeout, supervise.FirstLineTimeout, supervise.IdleTimeout:
		return r, failure.New(failure.Timeout, "git %s did not finish within %s; its process tree was killed", args[0], gitTimeout)
	case supervise.SpawnFailed:
		kind := failure.KindOf(o.Err)
		if kind == failure.MissingCLI {
			kind = failure.Setup
		}
		return r, failure.Wrap(kind, o.Err, "git could not be started")
	}
	if o.Err == nil {
		return r, nil
	}
	return r, failure.Wrap(failure.Process, o.Err, "git %s failed", args[0])
}

// short runs a command whose answer is small (a ref, a commit id).
func (g *git) short(ctx context.Context, args ...string) (gitResult, error) {
	return g.run(ctx, 64<<10, args...)
}

// why is a bounded reason from git's stderr: its last "fatal:" or
// "error:" line, else its last line, else the exit code.
func (r gitResult) why() string {
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	pick := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:") {
			pick = l
		}
	}
	if pick == "" && len(lines) > 0 {
		pick = strings.TrimSpace(lines[len(lines)-1])
	}
	if pick == "" {
		return "exit " + strconv.Itoa(r.exitCode)
	}
	return detail.Bound(pick)
}

// failed is the error of a git command that exited with an unexpected code.
func (r gitResult) failed(what string) error {
	return failure.New(failure.Process, "git %s failed (exit %d)", what, r.exitCode).WithDetail(r.why())
}
