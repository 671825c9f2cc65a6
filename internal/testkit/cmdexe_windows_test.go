package testkit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// A child run through cmd.exe reports its own PID, not cmd.exe's, and the
// watch covers both until they exit.
func TestCmdExeRunsTheChildUnderCmd(t *testing.T) {
	w := testkit.NewWatch(t)
	cmd := testkit.CmdExe(self(t), w.Marker())
	cmd.Env = testkit.ChildEnv("stdin")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	pids, err := testkit.StartMember(cmd, "cmd", waitLimit)
	require.NoError(t, err)
	require.Len(t, pids, 2)
	assert.Equal(t, cmd.Process.Pid, pids[0], "cmd.exe is watched too")
	assert.NotEqual(t, pids[0], pids[1], "the child reports its own PID, not cmd.exe's")

	w.Add(pids...)
	assert.Len(t, w.Alive(), 2)
	require.NoError(t, stdin.Close()) // the child exits, then cmd.exe
	require.NoError(t, cmd.Wait())
	w.RequireGone(waitLimit)
}
