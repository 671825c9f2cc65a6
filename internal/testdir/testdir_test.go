package testdir_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/proctest"
	"github.com/cursorkit/cursorkit/internal/testdir"
)

// modeEnv makes the test binary a child that reports ready and stays
// alive until its stdin closes.
const modeEnv = "TESTDIR_TEST_MODE"

func TestMain(m *testing.M) {
	proctest.RunIfChild(modeEnv, func(string, []string) int {
		fmt.Printf("ready %d\n", os.Getpid())
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	})
	os.Exit(m.Run())
}

func TestNewIsEmptyAndRemovedWithItsTree(t *testing.T) {
	var dir string
	t.Run("user", func(t *testing.T) {
		dir = testdir.New(t)
		require.True(t, filepath.IsAbs(dir))
		real, err := filepath.EvalSymlinks(dir)
		require.NoError(t, err)
		assert.Equal(t, dir, real, "symlinks resolved")
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries)
		assert.True(t, strings.HasPrefix(filepath.Base(dir), "cursorkit-TestNewIsEmpty"), "named after the test: %s", dir)

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

func TestNewGivesEachCallItsOwnDirectory(t *testing.T) {
	a, b := testdir.New(t), testdir.New(t)
	assert.NotEqual(t, a, b)
}

func TestRemoveOfAMissingDirectoryIsDone(t *testing.T) {
	missing := filepath.Join(testdir.New(t), "never-made")
	assert.NoError(t, testdir.Remove(missing, 0))
}

// A test that killed a process started from its directory can still have
// the directory removed: on Windows the image stays locked a moment after
// the process is gone, which the retries cover.
func TestRemoveAfterKillingAProcessStartedFromTheDirectory(t *testing.T) {
	var dir string
	t.Run("user", func(t *testing.T) {
		dir = testdir.New(t)
		cmd, stdin := startCopy(t, dir)
		defer stdin.Close()
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait() // killed: the exit status says so
	})
	_, err := os.Lstat(dir)
	assert.True(t, os.IsNotExist(err), "the directory is gone after the subtest: %v", err)
}

// startCopy copies this test binary into dir, starts the copy as a child
// and waits for it to report ready. The child lives until its stdin (the
// returned writer) closes or it is killed.
func startCopy(t *testing.T, dir string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	name := "child"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	exe := filepath.Join(dir, "bin dir", name)
	require.NoError(t, os.MkdirAll(filepath.Dir(exe), 0o755))
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(exe, data, 0o755))

	cmd := exec.Command(exe)
	cmd.Env = proctest.Env(modeEnv, "stdin")
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	_, err = proctest.StartReady(cmd, 20*time.Second)
	require.NoError(t, err)
	return cmd, in
}
