package testkit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestTempDirIsEmptyAndRemovedWithItsTree(t *testing.T) {
	var dir string
	t.Run("user", func(t *testing.T) {
		dir = testkit.TempDir(t)
		require.True(t, filepath.IsAbs(dir))
		real, err := filepath.EvalSymlinks(dir)
		require.NoError(t, err)
		assert.Equal(t, dir, real, "symlinks resolved")
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries)
		assert.True(t, strings.HasPrefix(filepath.Base(dir), "cursorkit-TestTempDirIsEmpty"), "named after the test: %s", dir)

		deep := filepath.Join(dir, "Program Files (x86)", "a b", "c")
		require.NoError(t, os.MkdirAll(deep, 0o755))
		for _, p := range []string{filepath.Join(dir, "top.txt"), filepath.Join(deep, "leaf.txt")} {
			require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
		}
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "empty"), 0o755))
	})
	_, err := os.Lstat(dir)
	assert.True(t, os.IsNotExist(err), "the directory is gone after the subtest: %v", err)
}

func TestTempDirGivesEachCallItsOwnDirectory(t *testing.T) {
	a, b := testkit.TempDir(t), testkit.TempDir(t)
	assert.NotEqual(t, a, b)
}

func TestRemovingAMissingDirectoryIsDone(t *testing.T) {
	missing := filepath.Join(testkit.TempDir(t), "never-made")
	assert.NoError(t, testkit.RemoveAll(missing, 0))
}

// A test that killed a process started from its directory can still have
// the directory removed: on Windows the image stays locked a moment after
// the process is gone, which the retries cover.
func TestTempDirGoesAfterKillingAProcessStartedFromIt(t *testing.T) {
	var dir string
	t.Run("user", func(t *testing.T) {
		dir = testkit.TempDir(t)
		cmd, _ := startChild(t, testkit.Install(t, filepath.Join(dir, "bin dir"), "child", "stdin"))
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait() // killed: the exit status says so
	})
	_, err := os.Lstat(dir)
	assert.True(t, os.IsNotExist(err), "the directory is gone after the subtest: %v", err)
}
