package review

import (
	"context"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/gitexec"
)

// gitTimeout bounds each git command (docs/contract.md, "Review"); on it
// the command's tree is killed at once.
const gitTimeout = 60 * time.Second

// git runs git commands in one directory through internal/gitexec, each
// under gitTimeout.
type git struct {
	runner *gitexec.Runner
	dir    string
}

// newGit resolves git on the PATH of env (nil: this process's) with goos's
// rules. git not on PATH is failure.Setup.
func newGit(ctx context.Context, env []string, goos string) (*git, error) {
	r, err := gitexec.New(ctx, env, goos)
	if gitexec.Missing(err) {
		// A missing git is the machine's setup, not the agent CLI missing:
		// missing_cli tells an orchestrator that Cursor is absent.
		return nil, &failure.Error{Kind: failure.Setup, Err: err,
			Message: "review needs git, and git was not found on PATH: install git or put it on PATH"}
	}
	if err != nil {
		return nil, err
	}
	return &git{runner: r}, nil
}

// run runs git with args in g.dir, keeping at most limit bytes of stdout
// (gitexec.Runner.Run: a run that did not end with an exit code is an
// error; the exit code is the caller's to judge).
func (g *git) run(ctx context.Context, limit int, args ...string) (gitexec.Result, error) {
	return g.runner.Run(ctx, g.dir, gitTimeout, limit, args...)
}

// short runs a command whose answer is small (a ref, a commit id).
func (g *git) short(ctx context.Context, args ...string) (gitexec.Result, error) {
	return g.run(ctx, 64<<10, args...)
}

// failed is the error of git command what that exited with an unexpected
// code.
func failed(r gitexec.Result, what string) error {
	return failure.New(failure.Process, "git %s failed (exit %d)", what, r.ExitCode).WithDetail(r.Why())
}
