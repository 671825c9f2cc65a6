package mcpstage

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

// gitTestEnv is this process's environment without the user's git
// configuration, with an identity for commits, plus variables the package
// must neutralise: they point git at a repository that does not exist.
func gitTestEnv(t *testing.T) []string {
	t.Helper()
	global := filepath.Join(testkit.TempDir(t), "gitconfig")
	require.NoError(t, os.WriteFile(global, nil, 0o600))
	return append(os.Environ(),
		"GIT_CONFIG_GLOBAL="+global, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_DIR=/nonexistent/gitdir", "GIT_WORK_TREE=/nonexistent/worktree",
		"GIT_INDEX_FILE=/nonexistent/index", "GIT_COMMON_DIR=/nonexistent/common",
	)
}

// needGit skips under Wine only (its prefix has no git.exe, as package
// review's tests say); elsewhere git is required.
func needGit(t *testing.T) {
	t.Helper()
	testkit.SkipIfWine(t, "prefix has no git.exe")
	_, err := exec.LookPath("git")
	require.NoError(t, err, "the mcpstage tests need git on PATH")
}

// outsideRepos is a new temporary directory that is in no git work tree.
func outsideRepos(t *testing.T) string {
	t.Helper()
	dir := testkit.TempDir(t)
	dotGit, found := findDotGit(dir)
	require.False(t, found, "the temporary directory %s must be outside any repository, but %s exists", dir, dotGit)
	return dir
}

// testRepo is a temporary git repository with one commit.
type testRepo struct {
	t   *testing.T
	dir string
	env []string
}

func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	needGit(t)
	r := &testRepo{t: t, dir: filepath.Join(outsideRepos(t), "repo"), env: gitTestEnv(t)}
	require.NoError(t, os.Mkdir(r.dir, 0o755))
	r.git(r.dir, "init", "-q", "-b", "main")
	r.write(r.dir, "README", "hello\n")
	r.git(r.dir, "add", "README")
	r.git(r.dir, "commit", "-q", "-m", "initial")
	return r
}

// git runs a setup command in dir (tests may use os/exec; the package may
// not), without the variables meant for the package only.
func (r *testRepo) git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	for _, kv := range r.env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v: %s", args, out)
	return string(out)
}

func (r *testRepo) write(dir, name, content string) {
	r.t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(r.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(r.t, os.WriteFile(path, []byte(content), 0o644))
}

// worktree adds a linked worktree named name beside the repository.
func (r *testRepo) worktree(name string) string {
	r.t.Helper()
	dir := filepath.Join(filepath.Dir(r.dir), name)
	r.git(r.dir, "worktree", "add", "-q", "-b", name, dir)
	return dir
}

func (r *testRepo) resolve(dir string) (gitShape, error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return resolveGit(ctx, r.env, runtime.GOOS, dir)
}

func (r *testRepo) mustResolve(dir string) gitShape {
	r.t.Helper()
	s, err := r.resolve(dir)
	require.NoError(r.t, err)
	return s
}

func TestResolveGit(t *testing.T) {
	r := newTestRepo(t)
	wt := r.worktree("wt")
	require.NoError(t, os.MkdirAll(filepath.Join(r.dir, "sub", "deeper"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(wt, "sub"), 0o755))
	gitDir := filepath.Join(r.dir, ".git")
	repoShape := gitShape{Kind: gitRepo, Root: r.dir, ExcludePath: filepath.Join(gitDir, "info", "exclude")}
	wtShape := gitShape{Kind: gitWorktree, Root: wt, ExcludePath: filepath.Join(gitDir, "info", "exclude")}
	tests := []struct {
		name string
		dir  string
		want gitShape
	}{
		{"the repository's root", r.dir, repoShape},
		{"a subdirectory", filepath.Join(r.dir, "sub", "deeper"), repoShape},
		{"a relative path to a subdirectory", "", repoShape},
		{"a linked worktree", wt, wtShape},
		{"a linked worktree's subdirectory", filepath.Join(wt, "sub"), wtShape},
	}
	if runtime.GOOS != "windows" {
		link := filepath.Join(filepath.Dir(r.dir), "link")
		require.NoError(t, os.Symlink(filepath.Join(r.dir, "sub"), link))
		tests = append(tests, struct {
			name string
			dir  string
			want gitShape
		}{"a symbolic link to a subdirectory", filepath.Join(link, "deeper"), repoShape})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir
			if dir == "" {
				wd, err := os.Getwd()
				require.NoError(t, err)
				rel, err := filepath.Rel(wd, filepath.Join(r.dir, "sub"))
				require.NoError(t, err)
				dir = rel
			}
			got := r.mustResolve(dir)
			assert.Equal(t, tt.want, got)
			assert.True(t, filepath.IsAbs(got.ExcludePath))
		})
	}
}

func TestResolveGitOutsideAnyRepository(t *testing.T) {
	needGit(t)
	dir := outsideRepos(t)
	got, err := resolveGit(context.Background(), gitTestEnv(t), runtime.GOOS, dir)
	require.NoError(t, err)
	assert.Equal(t, gitShape{Kind: gitNone, Root: dir}, got)
}

// TestResolveGitWithoutGit: no git on PATH is no git at all only where no
// .git is; runs in both lanes.
func TestResolveGitWithoutGit(t *testing.T) {
	empty := outsideRepos(t)
	env := []string{"PATH=" + empty}
	if runtime.GOOS == "windows" {
		env = append(env, "PATHEXT=.COM;.EXE;.BAT;.CMD")
	}
	got, err := resolveGit(context.Background(), env, runtime.GOOS, empty)
	require.NoError(t, err)
	assert.Equal(t, gitShape{Kind: gitNone, Root: empty}, got)

	sub := filepath.Join(empty, "repo", "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(empty, "repo", ".git"), 0o755))
	_, err = resolveGit(context.Background(), env, runtime.GOOS, sub)
	require.Error(t, err)
	assert.Equal(t, failure.Setup, failure.KindOf(err))
	assert.Contains(t, err.Error(), "but git is not installed: cursorkit cannot exclude its files")

	tracked, err := isTracked(context.Background(), env, runtime.GOOS, gitShape{Kind: gitRepo, Root: sub}, ".cursor/mcp.json")
	assert.False(t, tracked)
	assert.Equal(t, failure.Setup, failure.KindOf(err))
}

func TestResolveGitRefusals(t *testing.T) {
	r := newTestRepo(t)
	broken := filepath.Join(outsideRepos(t), "broken")
	require.NoError(t, os.Mkdir(broken, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(broken, ".git"), []byte("gitdir: "+filepath.Join(broken, "missing")+"\n"), 0o644))
	file := filepath.Join(r.dir, "README")
	tests := []struct {
		name, dir string
		kind      failure.Kind
		contains  string
		viaNew    bool // New checks that dir is a directory before resolving it
	}{
		{"a .git git does not take", broken, failure.Setup, "git does not take", false},
		{"the inside of .git", filepath.Join(r.dir, ".git"), failure.Setup, "git cannot tell the work tree", false},
		{"a file", file, failure.Input, "not a directory", true},
		{"a missing directory", filepath.Join(r.dir, "missing"), failure.Input, "not a directory", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.viaNew {
				_, err = New(context.Background(), tt.dir, Options{})
			} else {
				_, err = r.resolve(tt.dir)
			}
			require.Error(t, err)
			assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
			assert.Contains(t, err.Error(), tt.contains)
			assert.Less(t, len(err.Error()), 800, "bounded")
		})
	}
}

func TestResolveGitCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := resolveGit(ctx, nil, runtime.GOOS, ".")
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
}

func TestIsTracked(t *testing.T) {
	r := newTestRepo(t)
	r.write(r.dir, ".cursor/mcp.json", "{}\n")
	r.git(r.dir, "add", ".cursor/mcp.json")
	r.git(r.dir, "commit", "-q", "-m", "tracked config")
	r.write(r.dir, ".cursor/staged.json", "{}\n")
	r.git(r.dir, "add", ".cursor/staged.json")
	r.write(r.dir, ".cursor/untracked.json", "{}\n")
	r.write(r.dir, "odd[1]*.json", "{}\n")
	wt := r.worktree("wt")
	wtShape := r.mustResolve(wt)
	repoShape := r.mustResolve(filepath.Join(r.dir, ".cursor"))
	tests := []struct {
		name  string
		shape gitShape
		rel   string
		want  bool
	}{
		{"a committed config", repoShape, ".cursor/mcp.json", true},
		{"with the OS's separators", repoShape, filepath.Join(".cursor", "mcp.json"), true},
		{"a staged file", repoShape, ".cursor/staged.json", true},
		{"an untracked file", repoShape, ".cursor/untracked.json", false},
		{"a missing file", repoShape, ".cursor/.cursorkit-mcp-state.json", false},
		{"a pathspec is literal", repoShape, "*.json", false},
		{"the linked worktree's config (checked out)", wtShape, ".cursor/mcp.json", true},
		{"no git", gitShape{Kind: gitNone, Root: outsideRepos(t)}, ".cursor/mcp.json", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := isTracked(context.Background(), r.env, runtime.GOOS, tt.shape, tt.rel)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	// In a fresh worktree with an untracked config: not tracked.
	r2 := newTestRepo(t)
	r2.write(r2.dir, ".cursor/mcp.json", "{}\n")
	got, err := isTracked(context.Background(), r2.env, runtime.GOOS, r2.mustResolve(r2.dir), ".cursor/mcp.json")
	require.NoError(t, err)
	assert.False(t, got)

	for _, bad := range []string{"", "..", "../x", "/abs", "."} {
		_, err := isTracked(context.Background(), r.env, runtime.GOOS, repoShape, bad)
		assert.Equal(t, failure.Input, failure.KindOf(err), "%q", bad)
	}
}
