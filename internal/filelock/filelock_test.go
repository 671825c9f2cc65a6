package filelock_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/filelock"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// deadline bounds every wait of these tests.
const deadline = 20 * time.Second

func TestMain(m *testing.M) {
	testkit.RunIfChild(testkit.Role{Name: "hold", Run: func(args []string) int {
		if _, err := filelock.TryAcquire(os.Getenv("FILELOCK_PATH")); err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Printf("ready %d\n", os.Getpid())
		testkit.SleepForever()
		return 0
	}})
	os.Exit(m.Run())
}

func TestTwoHoldersExcludeEachOther(t *testing.T) {
	path := filepath.Join(testkit.TempDir(t), "a.lock")
	first, err := filelock.TryAcquire(path)
	require.NoError(t, err)
	_, err = filelock.TryAcquire(path)
	require.ErrorIs(t, err, filelock.ErrBusy)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = filelock.Acquire(ctx, path)
	require.ErrorIs(t, err, filelock.ErrBusy)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	require.NoError(t, first.Release())
	second, err := filelock.TryAcquire(path)
	require.NoError(t, err)
	require.NoError(t, second.Release())
}

func TestMissingDirectory(t *testing.T) {
	_, err := filelock.TryAcquire(filepath.Join(testkit.TempDir(t), "nope", "a.lock"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestAcquireSerializes: holders that each increment a counter read and
// written outside any Go synchronization never overlap.
func TestAcquireSerializes(t *testing.T) {
	path := filepath.Join(testkit.TempDir(t), "a.lock")
	var inside, overlaps atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				l, err := filelock.Acquire(ctx, path)
				cancel()
				if !assert.NoError(t, err) {
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				inside.Add(-1)
				assert.NoError(t, l.Release())
			}
		})
	}
	wg.Wait()
	assert.Zero(t, overlaps.Load())
}

// TestAKilledHolderReleases: kill -9 (TerminateProcess) of a holder leaves
// no stale lock.
func TestAKilledHolderReleases(t *testing.T) {
	path := filepath.Join(testkit.TempDir(t), "a.lock")
	exe, err := os.Executable()
	require.NoError(t, err)
	w := testkit.NewWatch(t)
	cmd := exec.Command(exe)
	cmd.Env = testkit.ChildEnv("hold", "FILELOCK_PATH="+path)
	pid, err := testkit.StartReady(cmd, deadline)
	require.NoError(t, err)
	w.Add(pid)
	_, err = filelock.TryAcquire(path)
	require.ErrorIs(t, err, filelock.ErrBusy, "the child holds it")

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	l, err := filelock.Acquire(ctx, path)
	require.NoError(t, err)
	require.NoError(t, l.Release())
}
