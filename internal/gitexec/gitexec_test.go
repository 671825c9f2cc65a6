package gitexec

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

var set = []string{"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C"}

func TestEnv(t *testing.T) {
	tests := []struct {
		name     string
		env      []string
		foldCase bool
		want     []string
	}{
		{"empty", nil, false, set},
		{
			"drops the diff and pager commands and replaces what it sets",
			[]string{"PATH=/bin", "GIT_EXTERNAL_DIFF=x", "GIT_DIFF_OPTS=-u9", "GIT_PAGER=less", "PAGER=more", "GIT_TERMINAL_PROMPT=1", "GIT_OPTIONAL_LOCKS=1", "LC_ALL=de_DE", "HOME=/h"},
			false,
			append([]string{"PATH=/bin", "HOME=/h"}, set...),
		},
		{
			"drops everything that points at another repository",
			[]string{"GIT_DIR=x", "GIT_WORK_TREE=x", "GIT_INDEX_FILE=x", "GIT_OBJECT_DIRECTORY=x", "GIT_ALTERNATE_OBJECT_DIRECTORIES=x", "GIT_COMMON_DIR=x", "GIT_NAMESPACE=x", "GIT_PREFIX=x", "GIT_CEILING_DIRECTORIES=/", "A=1"},
			false,
			append([]string{"A=1"}, set...),
		},
		{
			"names fold on Windows",
			[]string{"PATH=/bin", "GIT_EXTERNAL_DIFF=x", "git_dir=y", "git_work_tree=y", "Git_Terminal_Prompt=1", "HOME=/h"},
			true,
			append([]string{"PATH=/bin", "HOME=/h"}, set...),
		},
		{
			"names are exact elsewhere",
			[]string{"git_dir=y", "pager=x"},
			false,
			append([]string{"git_dir=y", "pager=x"}, set...),
		},
		{"an entry without '=' is kept", []string{"ODD", "GIT_DIR"}, false, append([]string{"ODD"}, set...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]string(nil), tt.env...)
			assert.Equal(t, tt.want, Env(tt.env, tt.foldCase))
			assert.Equal(t, in, tt.env, "env is not modified")
		})
	}
}

func TestEnvListsAreFresh(t *testing.T) {
	EnvDrop()[0], EnvSet()[0], Config()[0] = "X", "X", "X"
	assert.Equal(t, "GIT_EXTERNAL_DIFF", EnvDrop()[0])
	assert.Equal(t, set, EnvSet())
	assert.Equal(t, []string{"-c", "core.quotepath=off", "-c", "core.fsmonitor=false", "-c", "color.ui=false", "--no-pager"}, Config())
}

func TestWhy(t *testing.T) {
	tests := []struct {
		stderr string
		exit   int
		want   string
	}{
		{"", 3, "exit 3"},
		{" \n\t\n", 128, "exit 128"},
		{"fatal: not a git repository\n", 128, "fatal: not a git repository"},
		{"error: one\nhint: two\nfatal: three\nhint: four\n", 1, "fatal: three"},
		{"warning: a\n  last line  \r\n\n", 1, "last line"},
		{"fatal: a\x1b[31m\n", 1, "fatal: a"},
	}
	for _, tt := range tests {
		got := Result{Stderr: tt.stderr, ExitCode: tt.exit}.Why()
		assert.True(t, strings.HasPrefix(got, tt.want), "%q: %q", tt.stderr, got)
		assert.NotContains(t, got, "\x1b")
	}
}

func TestMissing(t *testing.T) {
	assert.False(t, Missing(nil))
	assert.False(t, Missing(failure.New(failure.Cancelled, "x")))
	assert.False(t, Missing(failure.New(failure.Timeout, "x")))
	assert.True(t, Missing(failure.New(failure.MissingCLI, "x")))

	_, err := New(context.Background(), []string{"PATH=" + testkit.TempDir(t), "PATHEXT=.EXE"}, runtime.GOOS)
	require.Error(t, err)
	assert.True(t, Missing(err), "%v", err)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = New(ctx, nil, runtime.GOOS)
	if err != nil {
		assert.False(t, Missing(err), "a cancelled resolution is not a missing git: %v", err)
	}
}

func needGit(t *testing.T) {
	t.Helper()
	testkit.SkipIfWine(t, "prefix has no git.exe")
	_, err := exec.LookPath("git")
	require.NoError(t, err, "the gitexec tests need git on PATH")
}

func TestRun(t *testing.T) {
	needGit(t)
	dir := filepath.Join(testkit.TempDir(t), "repo")
	require.NoError(t, os.Mkdir(dir, 0o755))
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(dir, "none"))
	g, err := New(context.Background(), env, runtime.GOOS)
	require.NoError(t, err)
	ctx := context.Background()

	r, err := g.Run(ctx, dir, 30*time.Second, 1<<10, "init", "-q")
	require.NoError(t, err)
	require.Equal(t, 0, r.ExitCode, r.Stderr)

	// The environment rules apply: GIT_DIR elsewhere does not move git
	// off the directory it runs in.
	g, err = New(ctx, append(env, "GIT_DIR=/nonexistent/gitdir", "GIT_WORK_TREE=/nonexistent"), runtime.GOOS)
	require.NoError(t, err)
	r, err = g.Run(ctx, dir, 30*time.Second, 1<<10, "rev-parse", "--is-inside-work-tree")
	require.NoError(t, err)
	assert.Equal(t, 0, r.ExitCode, r.Stderr)
	assert.Equal(t, "true", strings.TrimSpace(string(r.Out)))
	assert.False(t, r.Truncated)
	assert.Equal(t, int64(len(r.Out)), r.Size)

	// Stdout is bounded; Size counts every byte. The line crossing the
	// limit is cut; a line longer than the limit is not kept.
	r, err = g.Run(ctx, dir, 30*time.Second, 7, "rev-parse", "--is-inside-work-tree", "--is-bare-repository")
	require.NoError(t, err)
	assert.Equal(t, "true\nfa", string(r.Out))
	assert.True(t, r.Truncated)
	assert.Equal(t, int64(len("true\nfalse\n")), r.Size)
	r, err = g.Run(ctx, dir, 30*time.Second, 3, "--literal-pathspecs", "rev-parse", "--is-inside-work-tree")
	require.NoError(t, err)
	assert.Empty(t, r.Out)
	assert.True(t, r.Truncated)

	// A limit of zero keeps nothing.
	r, err = g.Run(ctx, dir, 30*time.Second, 0, "rev-parse", "--is-inside-work-tree")
	require.NoError(t, err)
	assert.Empty(t, r.Out)
	assert.True(t, r.Truncated)

	// The exit code is the caller's; stderr explains it.
	r, err = g.Run(ctx, dir, 30*time.Second, 1<<10, "rev-parse", "--verify", "--end-of-options", "no-such-ref")
	require.NoError(t, err)
	assert.NotEqual(t, 0, r.ExitCode)
	assert.Contains(t, r.Why(), "fatal:")

	// A run that ends without an exit code is named after its first
	// argument that is not an option.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = g.Run(cancelled, dir, 30*time.Second, 1<<10, "--literal-pathspecs", "ls-files")
	require.Error(t, err)
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
	assert.Contains(t, err.Error(), "git ls-files was cancelled")
}
