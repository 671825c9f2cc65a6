package testdir_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testdir"
)

// Windows refuses to delete the image of a running process: a survivor of a
// test is reported, not hidden, and once it is gone the removal succeeds.
func TestRemoveReportsARunningImage(t *testing.T) {
	dir, err := os.MkdirTemp("", "cursorkit-testdir-running-*")
	require.NoError(t, err)
	cmd, stdin := startCopy(t, dir)

	assert.Error(t, testdir.Remove(dir, 200*time.Millisecond), "the running image cannot be removed")
	_, err = os.Stat(dir)
	assert.NoError(t, err, "the directory stays while its image runs")

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	assert.NoError(t, testdir.Remove(dir, 10*time.Second))
}
