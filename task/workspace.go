package task

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// Workspace returns the absolute workspace of a task, its links resolved:
// dir when the caller named one (--cwd), else the current directory. So a
// directory reached through a link and by its real path is one workspace,
// with one set of jobs and sessions to resume. A dir that does not exist
// or is no directory is failure.Input. An implicit working
// directory below the root of its git repository is failure.Input too: the
// agent would see the whole repository through the sandbox's workspace
// while the user meant a part of it; they pass --cwd or run from the root.
// Both are checked before any record is made.
func Workspace(dir string) (string, error) {
	explicit := dir != ""
	if !explicit {
		wd, err := os.Getwd()
		if err != nil {
			return "", failure.Wrap(failure.Input, err, "the current directory is unusable")
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", failure.Wrap(failure.Input, err, "the workspace directory is unusable")
	}
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", failure.New(failure.Input, "the workspace %s does not exist", abs)
	case err != nil:
		return "", failure.Wrap(failure.Input, err, "the workspace %s is unusable", abs)
	case !info.IsDir():
		return "", failure.New(failure.Input, "the workspace %s is not a directory", abs)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", failure.Wrap(failure.Input, err, "the workspace %s is unusable", abs)
	}
	if !explicit {
		if root := gitRoot(resolved); root != "" && !samePath(root, resolved) {
			return "", failure.New(failure.Input, "the current directory is below the root of its git repository (%s): run from the root, or name the workspace with --cwd", root)
		}
	}
	return resolved, nil
}

// gitRoot is the nearest directory at or above dir holding a .git entry
// (a repository's directory or a linked worktree's file), "" when none.
func gitRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// GitDirs returns the git directories of the repository whose root is
// workspace: the worktree's own git dir and the common dir every worktree
// of the repository shares. They are the same directory for a plain
// repository; for a linked worktree (.git is a file "gitdir: PATH") the
// own one is PATH and the common one is named by its "commondir" file.
// Both are "" outside a repository or when .git cannot be read; the files
// read are small and read with a bound.
func GitDirs(workspace string) (gitDir, commonDir string) {
	dotGit := filepath.Join(workspace, ".git")
	info, err := os.Stat(dotGit)
	if err != nil {
		return "", ""
	}
	if info.IsDir() {
		return dotGit, dotGit
	}
	data, err := safefile.Read(dotGit, 4096)
	if err != nil {
		return "", ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	path, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return "", ""
	}
	gitDir = strings.TrimSpace(path)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(workspace, gitDir)
	}
	gitDir = filepath.Clean(gitDir)
	commonDir = gitDir
	if data, err := safefile.Read(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		commonDir = filepath.Clean(c)
	}
	return gitDir, commonDir
}
