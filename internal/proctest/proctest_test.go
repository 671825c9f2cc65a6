package proctest_test

import (
	"bufio"
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

// childEnv makes the test binary a child that reports "ready" and stays
// alive until its stdin closes; os.Args[1] is its marker.
const childEnv = "PROCTEST_TEST_CHILD"

const waitLimit = 20 * time.Second

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Stdout.WriteString("ready\n")
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func newMarker() string {
	return fmt.Sprintf("proctest-marker-%d-%d", os.Getpid(), time.Now().UnixNano())
}

// startChild starts this test binary as a child carrying marker and waits
// until it is ready.
func startChild(t *testing.T, marker string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, marker)
	cmd.Env = append(os.Environ(), childEnv+"=1", "GORACE=atexit_sleep_ms=0")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.TrimSpace(line)
	}()
	select {
	case line := <-ready:
		require.Equal(t, "ready", line)
	case <-time.After(waitLimit):
		t.Fatal("timed out waiting for the child to start")
	}
	return cmd
}

func TestWatchSeesAKilledProcessGo(t *testing.T) {
	marker := newMarker()
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
	marker := newMarker()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, marker)
	cmd.Env = append(os.Environ(), childEnv+"=1", "GORACE=atexit_sleep_ms=0")
	cmd.Stdin = strings.NewReader("") // exits once it read its empty stdin
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "ready\n", string(out))
	assert.True(t, proctest.GoneAfter(marker, []int{cmd.Process.Pid}))
}
