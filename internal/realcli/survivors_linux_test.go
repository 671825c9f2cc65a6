package realcli

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestSurvivorsFindsARunsProcesses(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command("sleep", "60")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	require.NoError(t, cmd.Start())
	// The new program's environment shows in /proc a moment after its
	// exec returned to us.
	testkit.Eventually(t, "the child's environment in /proc", 10*time.Second, func() bool {
		pids, _ := Survivors(home)
		return len(pids) > 0
	})
	pids, ok := Survivors(home)
	require.True(t, ok)
	assert.Equal(t, []int{cmd.Process.Pid}, pids)
	other, _ := Survivors(home + "x")
	assert.Empty(t, other, "another home's processes")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	pids, _ = Survivors(home)
	assert.Empty(t, pids)
}
