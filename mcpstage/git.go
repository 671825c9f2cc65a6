package mcpstage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/internal/gitexec"
)

// Bounds of one git command (internal/gitexec, as package review runs
// git): staging asks git small questions only.
const (
	gitTimeout  = 10 * time.Second // then the command's tree is killed
	gitOutLimit = 64 << 10         // stdout kept: paths, a few lines
)

// gitKind is the git shape of a directory, named as status shows it.
type gitKind string

const (
	gitNone     gitKind = "none"       // not in a git work tree (or git absent and no .git above)
	gitRepo     gitKind = "repository" // the main work tree of a repository
	gitWorktree gitKind = "worktree"   // a linked worktree (git worktree add)
)

// gitShape is where a directory stands in git, its paths absolute and
// cleaned.
type gitShape struct {
	Kind gitKind
	// Root is the work tree's top level as git prints it; the directory
	// itself (symbolic links not resolved) for gitNone. Staging happens
	// at Root.
	Root string
	// ExcludePath is the info/exclude file git reads for this work tree
	// (the common directory's for a linked worktree); "" for gitNone.
	ExcludePath string
}

// runGit runs git, found on the PATH of env (nil: this process's) with
// goos's rules, with args in dir. found is false, with no error, when git
// is not on PATH; errors are gitexec.Runner.Run's, and the exit code is
// the caller's to judge.
func runGit(ctx context.Context, env []string, goos, dir string, args ...string) (r gitexec.Result, found bool, err error) {
	g, err := gitexec.New(ctx, env, goos)
	if gitexec.Missing(err) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	r, err = g.Run(ctx, dir, gitTimeout, gitOutLimit, args...)
	return r, true, err
}

// resolveGit returns the git shape of the directory dir (New checks that
// it is one) from one `git rev-parse --show-toplevel --git-dir
// --git-common-dir --git-path info/exclude` (env and goos as runGit's),
// relative answers joined to the directory git ran in. A git directory
// other than the common one is a linked worktree. gitNone is git saying
// "not a git repository", or no git on PATH, only when no .git entry is in
// dir or above it; with one, both are failure.Setup (cursorkit could not
// keep its files out of git status), as any other refusal of git is.
func resolveGit(ctx context.Context, env []string, goos, dir string) (gitShape, error) {
	if err := ctx.Err(); err != nil {
		return gitShape{}, failure.Wrap(failure.Cancelled, err, "git shape of %s: cancelled", detail.Bound(dir))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return gitShape{}, failure.Wrap(failure.Input, err, "bad directory %s", detail.Bound(dir))
	}
	// git runs in the real directory; a relative answer is relative to it
	// (joined to a path through a symbolic link, "../.git" would be wrong).
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return gitShape{}, failure.Wrap(failure.Setup, err, "cannot resolve %s", detail.Bound(abs))
	}
	r, found, err := runGit(ctx, env, goos, real, "rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir", "--git-path", "info/exclude")
	switch {
	case err != nil:
		return gitShape{}, err
	case !found || r.ExitCode == 128 && strings.Contains(r.Stderr, "not a git repository"):
		dotGit, ok := findDotGit(real)
		switch {
		case !ok:
			return gitShape{Kind: gitNone, Root: abs}, nil
		case !found:
			return gitShape{}, failure.New(failure.Setup,
				"%s is in a git work tree (%s) but git is not installed: cursorkit cannot exclude its files; install git or put it on PATH",
				detail.Bound(abs), detail.Bound(dotGit))
		}
		return gitShape{}, failure.New(failure.Setup,
			"git does not take %s for a git work tree, yet %s is there: cursorkit cannot exclude its files; repair the repository or run elsewhere",
			detail.Bound(abs), detail.Bound(dotGit)).WithDetail(r.Why())
	case r.ExitCode != 0:
		return gitShape{}, failure.New(failure.Setup, "git cannot tell the work tree of %s (exit %d)", detail.Bound(abs), r.ExitCode).WithDetail(r.Why())
	}
	lines := strings.Split(strings.TrimRight(string(r.Out), "\r\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], "\r")
	}
	if len(lines) != 4 || slices.Contains(lines, "") {
		return gitShape{}, failure.New(failure.Process, "git rev-parse gave %d lines for 4 questions about %s", len(lines), detail.Bound(abs))
	}
	at := func(p string) string {
		p = filepath.FromSlash(p)
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(real, p)
	}
	root, gitDir, common, exclude := filepath.Clean(filepath.FromSlash(lines[0])), at(lines[1]), at(lines[2]), at(lines[3])
	if !filepath.IsAbs(root) {
		return gitShape{}, failure.New(failure.Process, "git printed a relative top level for %s: %s", detail.Bound(abs), detail.Bound(lines[0]))
	}
	kind := gitRepo
	if !samePath(gitDir, common, goos) {
		kind = gitWorktree
	}
	return gitShape{Kind: kind, Root: root, ExcludePath: exclude}, nil
}

// samePath reports whether a and b name one directory: sameRoot, else
// os.SameFile (a path through a symbolic link and git's resolved one).
func samePath(a, b, goos string) bool {
	if sameRoot(a, b, goos) {
		return true
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// findDotGit returns the first .git entry (directory, file or link) in dir
// or a directory above it.
func findDotGit(dir string) (string, bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return p, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// isTracked reports whether rel (relative to the work tree's root, with
// slashes or the OS's separators) is in shape's index, staged files
// included: `git --literal-pathspecs ls-files --error-unmatch -- rel` in
// shape.Root, with env and goos as runGit's. False for gitNone.
func isTracked(ctx context.Context, env []string, goos string, shape gitShape, rel string) (bool, error) {
	if shape.Kind == gitNone {
		return false, nil
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if rel == "" || filepath.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return false, failure.New(failure.Input, "not a path inside the work tree: %s", detail.Bound(rel))
	}
	r, found, err := runGit(ctx, env, goos, shape.Root, "--literal-pathspecs", "ls-files", "--error-unmatch", "--", filepath.ToSlash(clean))
	switch {
	case err != nil:
		return false, err
	case !found:
		return false, failure.New(failure.Setup, "%s is a git work tree but git is not installed: cursorkit cannot check what git tracks; install git or put it on PATH", detail.Bound(shape.Root))
	case r.ExitCode == 0:
		return true, nil
	case r.ExitCode == 1 && strings.Contains(r.Stderr, "did not match"):
		return false, nil
	}
	return false, failure.New(failure.Process, "git ls-files failed (exit %d) in %s", r.ExitCode, detail.Bound(shape.Root)).WithDetail(r.Why())
}
