package task

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestWorkspace(t *testing.T) {
	root := testkit.TempDir(t)
	require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	sub := filepath.Join(root, "pkg")
	require.NoError(t, os.Mkdir(sub, 0o755))
	file := filepath.Join(root, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	plain := testkit.TempDir(t)

	for _, tc := range []struct {
		name, cwd, dir string
		want           string
		kind           failure.Kind
	}{
		{name: "explicit root", cwd: plain, dir: root, want: root},
		{name: "explicit subdirectory is allowed", cwd: plain, dir: sub, want: sub},
		{name: "implicit root", cwd: root, want: root},
		{name: "implicit subdirectory of a repository", cwd: sub, kind: failure.Input},
		{name: "implicit outside any repository", cwd: plain, want: plain},
		{name: "missing", cwd: plain, dir: filepath.Join(root, "nope"), kind: failure.Input},
		{name: "a file", cwd: plain, dir: file, kind: failure.Input},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(tc.cwd)
			got, err := Workspace(tc.dir)
			if tc.kind != "" {
				assert.Equal(t, tc.kind, failure.KindOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.True(t, samePath(tc.want, got), "%s != %s", got, tc.want)
			assert.True(t, filepath.IsAbs(got))
		})
	}
}

func TestGitDirs(t *testing.T) {
	plain := testkit.TempDir(t)
	require.NoError(t, os.Mkdir(filepath.Join(plain, ".git"), 0o755))
	g, c := GitDirs(plain)
	assert.Equal(t, filepath.Join(plain, ".git"), g)
	assert.Equal(t, g, c)

	// A linked worktree, as git worktree add lays it out.
	own := filepath.Join(plain, ".git", "worktrees", "wt")
	require.NoError(t, os.MkdirAll(own, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(own, "commondir"), []byte("../..\n"), 0o644))
	wt := testkit.TempDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+own+"\n"), 0o644))
	g, c = GitDirs(wt)
	assert.Equal(t, own, g)
	assert.Equal(t, filepath.Join(plain, ".git"), c)

	g, c = GitDirs(testkit.TempDir(t))
	assert.Empty(t, g+c)
	bad := testkit.TempDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(bad, ".git"), []byte("nonsense"), 0o644))
	g, c = GitDirs(bad)
	assert.Empty(t, g+c)
}
