package mcpstage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/internal/gitexec"
)

// Bounds of one git command, run through internal/gitexec as package
// review runs git (the -c settings, the environment rules, discovery, shim
// and supervise).
const (
	// gitTimeout bounds each git command; on it the command's tree is
	// killed at once. Staging asks git small questions only.
	gitTimeout = 10 * time.Second
	// gitOutLimit is the stdout kept of a command (paths, a few lines).
	gitOutLimit = 64 << 10
)

// gitKind is the git shape of a directory.
type gitKind int

// The shapes: plain repository, linked worktree, no git at all.
const (
	gitNone     gitKind = iota // not in a git work tree (or git absent and no .git above)
	gitRepo                    // the main work tree of a repository
	gitWorktree                // a linked worktree (git worktree add)
)

// String names the kind for messages and status.
func (k gitKind) String() string {
	switch k {
	case gitNone:
		return "none"
	case gitRepo:
		return "repository"
	case gitWorktree:
		return "worktree"
	}
	return "gitKind(" + strconv.Itoa(int(k)) + ")"
}

// gitShape is where a directory stands in git.
type gitShape struct {
	Kind gitKind
	// Root is the work tree's top level as git prints it (absolute,
	// cleaned, the OS's separators); the directory itself (absolute,
	// cleaned, as given: symbolic links not resolved) when Kind is
	// gitNone. Staging happens at Root.
	Root string
	// GitDir is the absolute git directory of this work tree: the
	// repository's .git, or <common dir>/worktrees/<name> for a linked
	// worktree; "" for gitNone.
	GitDir string
	// ExcludePath is the absolute path of the info/exclude file git reads
	// for this work tree (`git rev-parse --git-path info/exclude`: the
	// common directory's for a linked worktree); "" for gitNone.
	ExcludePath string
}

// gitRunner runs git commands through internal/gitexec, each under
// gitTimeout with at most gitOutLimit bytes of stdout kept.
type gitRunner struct{ r *gitexec.Runner }

// newGitRunner resolves git on the PATH of env (nil: this process's) with
// goos's rules. found is false, with no error, when git is not on PATH;
// only a cancelled or timed-out resolution is an error.
func newGitRunner(ctx context.Context, env []string, goos string) (g *gitRunner, found bool, err error) {
	r, err := gitexec.New(ctx, env, goos)
	if gitexec.Missing(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return &gitRunner{r: r}, true, nil
}

// run runs git with args in dir (gitexec.Runner.Run: a run that did not
// end with an exit code is an error, named after the first argument that
// is not an option; the exit code is the caller's to judge).
func (g *gitRunner) run(ctx context.Context, dir string, args ...string) (gitexec.Result, error) {
	return g.r.Run(ctx, dir, gitTimeout, gitOutLimit, args...)
}

// resolveGit returns the git shape of dir (which may be a subdirectory of a
// work tree), asking git once: `git rev-parse --show-toplevel --git-dir
// --git-common-dir --git-path info/exclude`. Relative answers are relative
// to the directory git ran in and are joined to it; absolute ones are used
// as they are. A git directory that differs from the common directory is a
// linked worktree.
//
// gitNone is no work tree: git says "not a git repository", or git is not
// on PATH; either way only when no .git entry exists in dir or above it.
// With a .git there, git's refusal (a broken worktree link, a filesystem
// boundary) and git's absence are failure.Setup: cursorkit could not keep
// its files out of that repository's status. Other errors: failure.Input
// for a dir that is not a directory, failure.Setup for any other git
// refusal (the inside of a .git directory, a bare repository, dubious
// ownership), failure.Cancelled/Timeout, failure.Process.
func resolveGit(ctx context.Context, dir string) (gitShape, error) {
	return resolveGitWith(ctx, nil, runtime.GOOS, dir)
}

// resolveGitWith is resolveGit with the environment git is found and runs
// in (nil: this process's) and the OS whose rules find it.
func resolveGitWith(ctx context.Context, env []string, goos, dir string) (gitShape, error) {
	if err := ctx.Err(); err != nil {
		return gitShape{}, failure.Wrap(failure.Cancelled, err, "git shape of %s: cancelled", detail.Bound(dir))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return gitShape{}, failure.Wrap(failure.Input, err, "bad directory %s", detail.Bound(dir))
	}
	info, err := os.Stat(abs)
	if err != nil || !info.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return gitShape{}, failure.Wrap(failure.Input, err, "not a directory: %s", detail.Bound(abs))
	}
	// git runs in the real directory; a relative answer is relative to it
	// (joined to a path through a symbolic link, "../.git" would be wrong).
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return gitShape{}, failure.Wrap(failure.Setup, err, "cannot resolve %s", detail.Bound(abs))
	}
	none := gitShape{Kind: gitNone, Root: abs}
	g, found, err := newGitRunner(ctx, env, goos)
	if err != nil {
		return gitShape{}, err
	}
	if !found {
		if dotGit, ok := findDotGit(real); ok {
			return gitShape{}, failure.New(failure.Setup,
				"%s is in a git work tree (%s) but git is not installed: cursorkit cannot exclude its files; install git or put it on PATH",
				detail.Bound(abs), detail.Bound(dotGit))
		}
		return none, nil
	}
	r, err := g.run(ctx, real, "rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir", "--git-path", "info/exclude")
	if err != nil {
		return gitShape{}, err
	}
	if r.ExitCode != 0 {
		if r.ExitCode == 128 && strings.Contains(r.Stderr, "not a git repository") {
			if dotGit, ok := findDotGit(real); ok {
				return gitShape{}, failure.New(failure.Setup,
					"git does not take %s for a git work tree, yet %s is there: cursorkit cannot exclude its files; repair the repository or run elsewhere",
					detail.Bound(abs), detail.Bound(dotGit)).WithDetail(r.Why())
			}
			return none, nil
		}
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
	return gitShape{Kind: kind, Root: root, GitDir: gitDir, ExcludePath: exclude}, nil
}

// samePath reports whether a and b name one directory: equal cleaned
// paths (case-insensitively on Windows), else one file by os.SameFile (a
// path through a symbolic link and git's resolved one).
func samePath(a, b, goos string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if a == b || goos == "windows" && strings.EqualFold(a, b) {
		return true
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// findDotGit returns the first .git entry (directory, file or link) in dir
// or a directory above it.
func findDotGit(dir string) (string, bool) {
	for d := filepath.Clean(dir); ; {
		p := filepath.Join(d, ".git")
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return p, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// isTracked reports whether git tracks rel (a path relative to the work
// tree's root; slashes or the OS's separators) in shape's index: `git
// ls-files --error-unmatch -- rel` run in shape.Root, pathspec magic off.
// A staged but uncommitted file is tracked. False for gitNone.
func isTracked(ctx context.Context, shape gitShape, rel string) (bool, error) {
	return isTrackedWith(ctx, nil, runtime.GOOS, shape, rel)
}

// isTrackedWith is isTracked with git's environment and OS (resolveGitWith).
func isTrackedWith(ctx context.Context, env []string, goos string, shape gitShape, rel string) (bool, error) {
	if shape.Kind == gitNone {
		return false, nil
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if rel == "" || filepath.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return false, failure.New(failure.Input, "not a path inside the work tree: %s", detail.Bound(rel))
	}
	g, found, err := newGitRunner(ctx, env, goos)
	if err != nil {
		return false, err
	}
	if !found {
		return false, failure.New(failure.Setup, "%s is a git work tree but git is not installed: cursorkit cannot check what git tracks; install git or put it on PATH", detail.Bound(shape.Root))
	}
	r, err := g.run(ctx, shape.Root, "--literal-pathspecs", "ls-files", "--error-unmatch", "--", filepath.ToSlash(clean))
	if err != nil {
		return false, err
	}
	switch {
	case r.ExitCode == 0:
		return true, nil
	case r.ExitCode == 1 && strings.Contains(r.Stderr, "did not match"):
		return false, nil
	}
	return false, failure.New(failure.Process, "git ls-files failed (exit %d) in %s", r.ExitCode, detail.Bound(shape.Root)).WithDetail(r.Why())
}
