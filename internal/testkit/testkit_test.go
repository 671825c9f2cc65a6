package testkit_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// waitLimit bounds every wait for something that must happen (a loaded
// machine under Wine can take seconds to start a process); it is never
// slept.
const waitLimit = 60 * time.Second

func TestMain(m *testing.M) {
	testkit.RunIfChild(roles...)
	os.Exit(m.Run())
}

// roles are the children these tests start.
var roles = []testkit.Role{
	// stdin reports ready and stays until its stdin closes.
	{Name: "stdin", Run: func([]string) int {
		fmt.Printf("ready %d\n", os.Getpid())
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	}},
	// say writes its first argument as a line.
	{Name: "say", Run: func(args []string) int {
		fmt.Println(args[0])
		return 0
	}},
	{Name: "exit", Run: func([]string) int { return 3 }},
	// gorace writes the GORACE it runs with.
	{Name: "gorace", Run: func([]string) int {
		fmt.Println(os.Getenv("GORACE"))
		return 0
	}},
}

// self is this test binary.
func self(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

// startChild starts exe (this test binary or an installed copy) playing
// "stdin" with args and returns once it reported ready; it exits when t
// finishes, or earlier when its stdin is closed (the returned func) or it
// is killed.
func startChild(t testing.TB, exe string, args ...string) (cmd *exec.Cmd, closeStdin func()) {
	t.Helper()
	cmd, closeStdin = startLeaky(t, exe, args...)
	t.Cleanup(func() {
		closeStdin()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, closeStdin
}

// startLeaky is startChild without the cleanup: the child lives until its
// stdin is closed or it is killed.
func startLeaky(t testing.TB, exe string, args ...string) (cmd *exec.Cmd, closeStdin func()) {
	t.Helper()
	cmd = exec.Command(exe, args...)
	cmd.Env = testkit.ChildEnv("stdin")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	pid, err := testkit.StartReady(cmd, waitLimit)
	require.NoError(t, err)
	require.Equal(t, cmd.Process.Pid, pid)
	return cmd, func() { _ = stdin.Close() }
}
