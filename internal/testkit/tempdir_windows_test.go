package testkit_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// Windows refuses to delete the image of a running process: a survivor of a
// test is reported, not hidden, and once it is gone the removal succeeds.
func TestRemovalReportsARunningImage(t *testing.T) {
	dir, err := os.MkdirTemp("", "cursorkit-testkit-running-*")
	require.NoError(t, err)
	cmd, closeStdin := startLeaky(t, testkit.Install(t, dir, "child", "stdin"))

	assert.Error(t, testkit.RemoveAll(dir, 200*time.Millisecond), "the running image cannot be removed")
	_, err = os.Stat(dir)
	assert.NoError(t, err, "the directory stays while its image runs")

	closeStdin()
	require.NoError(t, cmd.Wait())
	assert.NoError(t, testkit.RemoveAll(dir, 10*time.Second))
}
