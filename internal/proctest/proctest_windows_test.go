package proctest_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/proctest"
)

// A child run through cmd.exe reports its own PID, not cmd.exe's, and the
// watch covers both until they exit.
func TestCmdExeRunsTheChildUnderCmd(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	marker := proctest.Marker("proctest")
	cmd := proctest.CmdExe(self, marker)
	cmd.Env = proctest.Env(modeEnv, "stdin")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	pid, err := proctest.StartReady(cmd, waitLimit)
	require.NoError(t, err)
	assert.NotEqual(t, cmd.Process.Pid, pid, "the child is cmd.exe's, not cmd.exe")

	w := proctest.Watch(t, marker, []int{cmd.Process.Pid, pid})
	require.NoError(t, stdin.Close()) // the child exits, then cmd.exe
	require.NoError(t, cmd.Wait())
	w.AssertGone(t, waitLimit)
}
