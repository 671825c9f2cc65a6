package testkit_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestStartReadyRejectsWhatIsNotAReadyLine(t *testing.T) {
	tests := []struct {
		name, role string
		args       []string
		want       string
	}{
		{"another line", "say", []string{"hello"}, `reported "hello"`},
		{"a bad PID", "say", []string{"ready soon"}, "invalid syntax"},
		{"no line at all", "exit", nil, "no ready line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(self(t), tt.args...)
			cmd.Env = testkit.ChildEnv(tt.role)
			_, err := testkit.StartReady(cmd, waitLimit)
			assert.ErrorContains(t, err, tt.want)
			_ = cmd.Wait()
		})
	}
}

func TestStartReadyGivesUpOnASilentChild(t *testing.T) {
	cmd := exec.Command(self(t))
	cmd.Env = testkit.ChildEnv("stdin")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	// The limit is shorter than any start: the ready line cannot come first.
	_, err = testkit.StartReady(cmd, time.Nanosecond)
	assert.ErrorContains(t, err, "did not report ready")
	_ = cmd.Wait()
}

func TestStartMemberReturnsThePIDsToWatch(t *testing.T) {
	t.Run("plain", func(t *testing.T) {
		cmd := exec.Command(self(t))
		cmd.Env = testkit.ChildEnv("stdin")
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		pids, err := testkit.StartMember(cmd, "group", waitLimit)
		require.NoError(t, err)
		assert.Equal(t, []int{cmd.Process.Pid}, pids)
		require.NoError(t, stdin.Close())
		require.NoError(t, cmd.Wait())
	})
	t.Run("daemon intermediate", func(t *testing.T) {
		// It reports a daemon (here this process) and exits.
		cmd := exec.Command(self(t), fmt.Sprintf("ready %d", os.Getpid()))
		cmd.Env = testkit.ChildEnv("say")
		pids, err := testkit.StartMember(cmd, "daemon", waitLimit)
		require.NoError(t, err)
		assert.Equal(t, []int{os.Getpid()}, pids)
		assert.NotNil(t, cmd.ProcessState, "the intermediate was reaped")
	})
	t.Run("no ready line", func(t *testing.T) {
		cmd := exec.Command(self(t))
		cmd.Env = testkit.ChildEnv("exit")
		_, err := testkit.StartMember(cmd, "daemon", waitLimit)
		assert.ErrorContains(t, err, "daemon member: no ready line")
		_ = cmd.Wait()
	})
}

func TestEventually(t *testing.T) {
	n := 0
	testkit.Eventually(t, "the third try", waitLimit, func() bool { n++; return n == 3 })
	assert.Equal(t, 3, n)

	var inner fakeT
	func() {
		defer func() { recover() }()
		testkit.Eventually(&inner, "nothing", time.Millisecond, func() bool { return false })
	}()
	assert.True(t, inner.Failed())
	assert.Contains(t, inner.messages(), "timed out after 1ms waiting for nothing")
}
