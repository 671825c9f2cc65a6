package review

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// repo is a temporary git repository for one test.
type repo struct {
	t   *testing.T
	dir string
	env []string
}

// testEnv is this process's environment without the user's git
// configuration, plus variables Collect must neutralize: an external diff
// that does not exist, another repository, a pager that would block.
func testEnv(t *testing.T) []string {
	t.Helper()
	global := filepath.Join(testkit.TempDir(t), "gitconfig")
	require.NoError(t, os.WriteFile(global, []byte("[diff]\n\tnoprefix = true\n\texternal = /nonexistent/difftool\n[core]\n\tpager = /nonexistent/pager\n"), 0o600))
	return append(os.Environ(),
		"GIT_CONFIG_GLOBAL="+global, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_EXTERNAL_DIFF=/nonexistent/difftool", "GIT_PAGER=/nonexistent/pager",
		"GIT_DIR=/nonexistent/gitdir",
	)
}

// needGit skips under Wine only (it has no git.exe); elsewhere git is
// required.
func needGit(t *testing.T) {
	t.Helper()
	testkit.SkipIfWine(t, "prefix has no git.exe")
	_, err := exec.LookPath("git")
	require.NoError(t, err, "the review tests need git on PATH")
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	needGit(t)
	r := &repo{t: t, dir: filepath.Join(testkit.TempDir(t), "repo"), env: testEnv(t)}
	require.NoError(t, os.Mkdir(r.dir, 0o755))
	r.git("init", "-q", "-b", "main")
	return r
}

// git runs a setup command (tests may use os/exec; the package may not).
func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	var env []string
	for _, kv := range r.env {
		if !strings.HasPrefix(kv, "GIT_DIR=") && !strings.HasPrefix(kv, "GIT_EXTERNAL_DIFF=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func (r *repo) write(name, content string) {
	r.t.Helper()
	path := filepath.Join(r.dir, filepath.FromSlash(name))
	require.NoError(r.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(r.t, os.WriteFile(path, []byte(content), 0o644))
}

func (r *repo) commit(name, content, msg string) {
	r.t.Helper()
	r.write(name, content)
	r.git("add", "--", name)
	r.git("commit", "-q", "-m", msg)
}

// base is a repository on main with one commit and a .gitignore.
func base(t *testing.T) *repo {
	r := newRepo(t)
	r.write(".gitignore", "*.log\nbuild/\n")
	r.commit("main.go", "package main\n\nfunc main() {}\n", "initial")
	r.git("add", ".gitignore")
	r.git("commit", "-q", "-m", "ignore logs")
	return r
}

func collect(t *testing.T, r *repo, dir string, scope Scope, baseRef string) (Diff, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return collectWith(ctx, r.env, runtime.GOOS, dir, scope, baseRef)
}

func TestCollect(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(r *repo)
		sub       string // the directory under the repository to collect in
		scope     Scope
		base      string
		wantScope Scope
		wantBase  string
		wantFrom  string
		wantFiles []string
		contains  []string
		excludes  []string
		wantKind  failure.Kind
		wantMsg   string
	}{
		{name: "clean tree and no branch commits", scope: ScopeAuto,
			wantKind: failure.Input, wantMsg: "nothing to review: the working tree is clean and HEAD has no commits beyond main (main)"},
		{name: "clean tree, working-tree scope", scope: ScopeWorkingTree,
			wantKind: failure.Input, wantMsg: "nothing to review: the working tree is clean"},
		{name: "staged", scope: ScopeAuto, setup: func(r *repo) {
			r.write("main.go", "package main\n\nfunc main() { println(1) }\n")
			r.git("add", "main.go")
		}, wantScope: ScopeWorkingTree, wantBase: "HEAD", wantFiles: []string{"main.go"},
			contains: []string{"diff --git a/main.go b/main.go", "+func main() { println(1) }"}},
		{name: "unstaged, from a subdirectory", sub: "pkg", scope: ScopeAuto, setup: func(r *repo) {
			r.commit("pkg/a.go", "package pkg\n", "pkg")
			r.write("main.go", "package main\n\n// changed\nfunc main() {}\n")
		}, wantScope: ScopeWorkingTree, wantBase: "HEAD", wantFiles: []string{"main.go"},
			contains: []string{"+// changed"}},
		{name: "staged, unstaged and untracked together", scope: ScopeWorkingTree, setup: func(r *repo) {
			r.write("staged.txt", "staged\n")
			r.git("add", "staged.txt")
			r.write("main.go", "package main\n")
			r.write("dir/new file.txt", "hello untracked\n")
			r.write("ünïcode.txt", "unicode\n")
		}, wantScope: ScopeWorkingTree, wantBase: "HEAD",
			wantFiles: []string{"dir/new file.txt", "main.go", "staged.txt", "ünïcode.txt"},
			contains:  []string{"+staged", "+hello untracked", "diff --git a/dir/new file.txt b/dir/new file.txt", "new file mode", "b/ünïcode.txt"}},
		{name: "ignored files are not reviewed", scope: ScopeAuto, setup: func(r *repo) {
			r.write("debug.log", "secret log\n")
			r.write("build/out.txt", "built\n")
			r.write("kept.txt", "kept\n")
		}, wantScope: ScopeWorkingTree, wantFiles: []string{"kept.txt"}, wantBase: "HEAD",
			contains: []string{"+kept"}, excludes: []string{"secret log", "built", "debug.log"}},
		{name: "only ignored changes: clean", scope: ScopeWorkingTree, setup: func(r *repo) {
			r.write("debug.log", "x\n")
		}, wantKind: failure.Input, wantMsg: "the working tree is clean"},
		{name: "binary files are named, not shown", scope: ScopeAuto, setup: func(r *repo) {
			r.write("image.bin", "\x00\x01\x02PNGDATA\x00\xff")
			r.commit("tracked.bin", "\x00old\x00", "bin")
			r.write("tracked.bin", "\x00new BINARYPAYLOAD\x00")
		}, wantScope: ScopeWorkingTree, wantBase: "HEAD", wantFiles: []string{"image.bin", "tracked.bin"},
			contains: []string{"Binary files /dev/null and b/image.bin differ", "Binary files a/tracked.bin and b/tracked.bin differ"},
			excludes: []string{"PNGDATA", "BINARYPAYLOAD"}},
		{name: "branch with commits, default base main", scope: ScopeAuto, setup: func(r *repo) {
			r.git("checkout", "-q", "-b", "feature")
			r.commit("feature.go", "package main\n\nfunc feature() {}\n", "feature")
			r.commit("main.go", "package main\n\nfunc main() { feature() }\n", "call it")
		}, wantScope: ScopeBranch, wantBase: "main", wantFrom: BaseFromMain,
			wantFiles: []string{"feature.go", "main.go"}, contains: []string{"+func feature() {}", "+func main() { feature() }"}},
		{name: "branch scope ignores a dirty tree", scope: ScopeBranch, setup: func(r *repo) {
			r.git("checkout", "-q", "-b", "feature")
			r.commit("feature.go", "package main\n", "feature")
			r.write("dirty.txt", "dirty\n")
		}, wantScope: ScopeBranch, wantBase: "main", wantFrom: BaseFromMain,
			wantFiles: []string{"feature.go"}, excludes: []string{"dirty"}},
		{name: "explicit base", scope: ScopeBranch, base: "HEAD~1", setup: func(r *repo) {
			r.commit("a.txt", "a\n", "a")
			r.commit("b.txt", "b\n", "b")
		}, wantScope: ScopeBranch, wantBase: "HEAD~1", wantFrom: BaseFromFlag, wantFiles: []string{"b.txt"}},
		{name: "upstream is the default base", scope: ScopeBranch, setup: func(r *repo) {
			r.git("branch", "release")
			r.git("checkout", "-q", "-b", "feature")
			r.git("branch", "--set-upstream-to=release")
			r.commit("f.txt", "f\n", "f")
		}, wantScope: ScopeBranch, wantBase: "release", wantFrom: BaseFromUpstream, wantFiles: []string{"f.txt"}},
		{name: "master when there is no main", scope: ScopeBranch, setup: func(r *repo) {
			r.git("branch", "-m", "main", "master")
			r.git("checkout", "-q", "-b", "topic")
			r.commit("t.txt", "t\n", "t")
		}, wantScope: ScopeBranch, wantBase: "master", wantFrom: BaseFromMaster, wantFiles: []string{"t.txt"}},
		{name: "no base at all", scope: ScopeBranch, setup: func(r *repo) {
			r.git("branch", "-m", "main", "trunk")
		}, wantKind: failure.Input, wantMsg: "no base to compare the branch with"},
		{name: "bad base", scope: ScopeBranch, base: "no-such-branch",
			wantKind: failure.Input, wantMsg: `base "no-such-branch" is not a commit in this repository`},
		{name: "base that is not a commit", scope: ScopeBranch, base: "HEAD:main.go",
			wantKind: failure.Input, wantMsg: `is not a commit in this repository`},
		{name: "base like an option", scope: ScopeBranch, base: "--output=/tmp/x",
			wantKind: failure.Input, wantMsg: "bad base ref"},
		{name: "unknown scope", scope: "everything", wantKind: failure.Input, wantMsg: `unknown review scope "everything"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base(t)
			if tt.setup != nil {
				tt.setup(r)
			}
			dir := r.dir
			if tt.sub != "" {
				dir = filepath.Join(r.dir, tt.sub)
			}
			d, err := collect(t, r, dir, tt.scope, tt.base)
			if tt.wantKind != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantKind, failure.KindOf(err), "%v", err)
				assert.Contains(t, err.Error(), tt.wantMsg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantScope, d.Scope)
			assert.Equal(t, tt.scope, d.Requested)
			assert.Equal(t, tt.wantBase, d.Base)
			assert.Equal(t, tt.wantFrom, d.BaseSource)
			assert.Equal(t, tt.wantFiles, d.Files)
			assert.Equal(t, r.dir, filepath.FromSlash(d.Root))
			assert.Equal(t, r.git("rev-parse", "HEAD"), d.Head)
			assert.Equal(t, int64(len(d.Text)), d.Size)
			assert.False(t, d.Truncated)
			for _, s := range tt.contains {
				assert.Contains(t, d.Text, s)
			}
			for _, s := range tt.excludes {
				assert.NotContains(t, d.Text, s)
			}
			if d.Scope == ScopeBranch {
				assert.Equal(t, r.git("merge-base", d.Base, "HEAD"), d.MergeBase)
			}
		})
	}
}

// TestCollectOriginHEAD: a clone's branch without an upstream is compared
// with origin's default branch.
func TestCollectOriginHEAD(t *testing.T) {
	origin := base(t)
	r := &repo{t: t, dir: filepath.Join(testkit.TempDir(t), "clone"), env: origin.env}
	(&repo{t: t, dir: filepath.Dir(r.dir), env: origin.env}).git("clone", "-q", origin.dir, r.dir)
	r.git("checkout", "-q", "--no-track", "-b", "work", "origin/main")
	r.git("branch", "-D", "main")
	r.commit("w.txt", "w\n", "w")
	d, err := collect(t, r, r.dir, ScopeAuto, "")
	require.NoError(t, err)
	assert.Equal(t, ScopeBranch, d.Scope)
	assert.Equal(t, "origin/main", d.Base)
	assert.Equal(t, BaseFromOrigin, d.BaseSource)
	assert.Equal(t, []string{"w.txt"}, d.Files)
}

func TestCollectWithoutCommits(t *testing.T) {
	r := newRepo(t)
	_, err := collect(t, r, r.dir, ScopeAuto, "")
	require.Error(t, err)
	assert.Equal(t, failure.Input, failure.KindOf(err))

	r.write("first.txt", "first\n")
	r.write("staged.txt", "staged\n")
	r.git("add", "staged.txt")
	d, err := collect(t, r, r.dir, ScopeAuto, "")
	require.NoError(t, err)
	assert.Equal(t, ScopeWorkingTree, d.Scope)
	assert.Empty(t, d.Base)
	assert.Empty(t, d.Head)
	assert.Equal(t, []string{"first.txt", "staged.txt"}, d.Files)
	assert.Contains(t, d.Text, "+first")
	assert.Contains(t, d.Text, "+staged")

	_, err = collect(t, r, r.dir, ScopeBranch, "")
	require.Error(t, err)
	assert.Equal(t, failure.Input, failure.KindOf(err))
	assert.Contains(t, err.Error(), "HEAD has no commits yet")
}

func TestCollectNotARepository(t *testing.T) {
	needGit(t)
	dir := testkit.TempDir(t)
	_, err := collectWith(context.Background(), testEnv(t), runtime.GOOS, dir, ScopeAuto, "")
	require.Error(t, err)
	assert.Equal(t, failure.Input, failure.KindOf(err))
	assert.Contains(t, err.Error(), "not a git work tree: "+dir)
	assert.Contains(t, err.Error(), "fatal: not a git repository")
	assert.Less(t, len(err.Error()), 600, "bounded")

	_, err = collectWith(context.Background(), testEnv(t), runtime.GOOS, filepath.Join(dir, "missing"), ScopeAuto, "")
	require.Error(t, err)
	assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
}

// TestCollectTruncated: collection keeps maxCollectBytes and says so.
func TestCollectUntrackedContentBounded(t *testing.T) {
	r := base(t)
	big := strings.Repeat("0123456789abcdef\n", (maxCollectBytes/17)+1000)
	r.write("big.txt", big)
	r.write("small.txt", "small\n")
	d, err := collect(t, r, r.dir, ScopeWorkingTree, "")
	require.NoError(t, err)
	assert.True(t, d.Truncated)
	assert.LessOrEqual(t, len(d.Text), maxCollectBytes)
	assert.Greater(t, d.Size, int64(maxCollectBytes))
	assert.Equal(t, []string{"big.txt", "small.txt"}, d.Files, "every file is named")
	p := NewPrompt(d, "")
	assert.True(t, p.Cut)
	assert.Contains(t, p.Text, "[diff cut: ")
	assert.Contains(t, p.NotShown, "big.txt")
	assert.Contains(t, p.NotShown, "small.txt")
}

// TestCollectWithoutGit: no git on PATH is setup (the machine), not
// missing_cli (which says the agent CLI is absent). It runs in both lanes.
func TestCollectWithoutGit(t *testing.T) {
	empty := testkit.TempDir(t)
	env := []string{"PATH=" + empty}
	if runtime.GOOS == "windows" {
		env = append(env, "PATHEXT=.COM;.EXE;.BAT;.CMD")
	}
	_, err := collectWith(context.Background(), env, runtime.GOOS, empty, ScopeAuto, "")
	require.Error(t, err)
	assert.Equal(t, failure.Setup, failure.KindOf(err))
	assert.Contains(t, err.Error(), "review needs git, and git was not found on PATH")
	assert.NotContains(t, err.Error(), empty, "PATH is never echoed")
}

func TestCollectCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := collectWith(ctx, nil, runtime.GOOS, ".", ScopeAuto, "")
	require.Error(t, err)
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
}

func TestParseScope(t *testing.T) {
	tests := []struct {
		in   string
		want Scope
		ok   bool
	}{
		{"", ScopeAuto, true},
		{"auto", ScopeAuto, true},
		{" working-tree ", ScopeWorkingTree, true},
		{"branch", ScopeBranch, true},
		{"Branch", "", false},
		{"staged", "", false},
		{"x\x1b[31m", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseScope(tt.in)
			if !tt.ok {
				require.Error(t, err)
				assert.Equal(t, failure.Input, failure.KindOf(err))
				assert.NotContains(t, err.Error(), "\x1b")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
