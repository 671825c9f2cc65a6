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
	pids, err := proctest.StartMember(cmd, "cmd", waitLimit)
	require.NoError(t, err)
	require.Len(t, pids, 2)
	assert.Equal(t, cmd.Process.Pid, pids[0], "cmd.exe is watched too")
	assert.NotEqual(t, pids[0], pids[1], "the child reports its own PID, not cmd.exe's")

	w := proctest.Watch(t, marker, pids)
	require.NoError(t, stdin.Close()) // the child exits, then cmd.exe
	require.NoError(t, cmd.Wait())
	w.AssertGone(t, waitLimit)
}
