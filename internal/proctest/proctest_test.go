package proctest_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/proctest"
)

// modeEnv makes the test binary act as a child; see runChild.
const modeEnv = "PROCTEST_TEST_MODE"

const waitLimit = 20 * time.Second

func TestMain(m *testing.M) {
	proctest.RunIfChild(modeEnv, runChild)
	os.Exit(m.Run())
}

func runChild(mode string, args []string) int {
	switch mode {
	case "stdin": // report ready, stay until stdin closes
		fmt.Printf("ready %d\n", os.Getpid())
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "say": // args: the first line to write
		fmt.Println(args[0])
		return 0
	case "exit":
		return 3
	}
	return 2
}

// startChild starts this test binary as a child carrying marker in its
// argv and returns once it is ready; it is killed when t finishes.
func startChild(t *testing.T, marker string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, marker)
	cmd.Env = proctest.Env(modeEnv, "stdin")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	pid, err := proctest.StartReady(cmd, waitLimit)
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	require.NoError(t, err)
	require.Equal(t, cmd.Process.Pid, pid)
	return cmd
}

func TestWatchSeesAKilledProcessGo(t *testing.T) {
	marker := proctest.Marker("proctest")
	cmd := startChild(t, marker)
	pids := []int{cmd.Process.Pid}

	w := proctest.Watch(t, marker, pids)
	assert.False(t, w.Gone(), "the child is alive")
	assert.False(t, proctest.GoneAfter(marker, pids), "the child is alive")

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait() // killed: the exit status says so
	w.AssertGone(t, waitLimit)
	assert.True(t, w.Gone())
	assert.True(t, proctest.GoneAfter(marker, pids))
}

func TestAnExitedProcessIsGone(t *testing.T) {
	marker := proctest.Marker("proctest")
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, marker)
	cmd.Env = proctest.Env(modeEnv, "stdin")
	cmd.Stdin = strings.NewReader("") // it exits once it read its empty stdin
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("ready %d\n", cmd.Process.Pid), strings.ReplaceAll(string(out), "\r\n", "\n"))
	assert.True(t, proctest.GoneAfter(marker, []int{cmd.Process.Pid}))
}

func TestStartReadyRejectsWhatIsNotAReadyLine(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	tests := []struct {
		name, mode string
		args       []string
		want       string
	}{
		{"another line", "say", []string{"hello"}, `reported "hello"`},
		{"a bad PID", "say", []string{"ready soon"}, "invalid syntax"},
		{"no line at all", "exit", nil, "no ready line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(self, tt.args...)
			cmd.Env = proctest.Env(modeEnv, tt.mode)
			_, err := proctest.StartReady(cmd, waitLimit)
			assert.ErrorContains(t, err, tt.want)
			_ = cmd.Wait()
		})
	}
}

func TestStartReadyGivesUpOnASilentChild(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self)
	cmd.Env = proctest.Env(modeEnv, "stdin")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	// The limit is shorter than any start: the ready line cannot come first.
	_, err = proctest.StartReady(cmd, time.Nanosecond)
	assert.ErrorContains(t, err, "did not report ready")
	_ = cmd.Wait()
}

func TestEnvSetsTheModeAndQuietsTheRaceExit(t *testing.T) {
	t.Setenv(modeEnv, "stale")
	t.Setenv("GORACE", "halt_on_error=1")
	env := proctest.Env(modeEnv, "fresh")
	assert.Contains(t, env, modeEnv+"=fresh")
	assert.NotContains(t, env, modeEnv+"=stale")
	assert.Contains(t, env, "GORACE=atexit_sleep_ms=0")
	assert.NotContains(t, env, "GORACE=halt_on_error=1")
}

func TestMarkersDiffer(t *testing.T) {
	a, b := proctest.Marker("x"), proctest.Marker("x")
	assert.NotEqual(t, a, b)
	assert.True(t, strings.HasPrefix(a, "x-marker-"), a)
}

func TestStartMemberReturnsThePIDsToWatch(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)

	t.Run("plain", func(t *testing.T) {
		cmd := exec.Command(self)
		cmd.Env = proctest.Env(modeEnv, "stdin")
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		pids, err := proctest.StartMember(cmd, "group", waitLimit)
		require.NoError(t, err)
		assert.Equal(t, []int{cmd.Process.Pid}, pids)
		require.NoError(t, stdin.Close())
		require.NoError(t, cmd.Wait())
	})
	t.Run("daemon intermediate", func(t *testing.T) {
		// It reports a daemon (here this process) and exits.
		cmd := exec.Command(self, fmt.Sprintf("ready %d", os.Getpid()))
		cmd.Env = proctest.Env(modeEnv, "say")
		pids, err := proctest.StartMember(cmd, "daemon", waitLimit)
		require.NoError(t, err)
		assert.Equal(t, []int{os.Getpid()}, pids)
		assert.NotNil(t, cmd.ProcessState, "the intermediate was reaped")
	})
	t.Run("no ready line", func(t *testing.T) {
		cmd := exec.Command(self)
		cmd.Env = proctest.Env(modeEnv, "exit")
		_, err := proctest.StartMember(cmd, "daemon", waitLimit)
		assert.ErrorContains(t, err, "daemon member: no ready line")
		_ = cmd.Wait()
	})
}
