package launch

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/shim"
)

// shellPlan runs script with /bin/sh.
func shellPlan(script string) shim.Plan {
	return shim.Plan{Program: "/bin/sh", Args: []string{"sh", "-c", script}}
}

// exitAndReap waits for p's child to exit by itself and reaps it, as Close
// does before closeSweep.
func exitAndReap(t *testing.T, p *Process) {
	t.Helper()
	_, err := p.Wait()
	require.NoError(t, err)
	p.mu.Lock()
	defer p.mu.Unlock()
	require.NoError(t, p.release())
}

// leftovers is mayHaveLeftovers under p.mu.
func leftovers(p *Process) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mayHaveLeftovers()
}

// awaitDeath waits until pid has exited (a zombie counts: a killed group
// member's new parent may reap it at leisure), through a pidfd.
func awaitDeath(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	require.NoError(t, err)
	defer unix.Close(fd)
	pn := &pin{proc: Proc{Pid: pid}, fd: fd}
	require.True(t, pn.awaitExit(time.Now().Add(20*time.Second)), "process %d still runs", pid)
}

// startShell starts script and returns the PID it prints on its first
// line, if any.
func startShell(t *testing.T, script string, opts Options) (*Process, int) {
	t.Helper()
	p, err := Start(context.Background(), shellPlan(script), opts)
	require.NoError(t, err)
	out, err := io.ReadAll(p.Stdout())
	require.NoError(t, err)
	pid := 0
	if line := strings.TrimSpace(string(out)); line != "" {
		pid, err = strconv.Atoi(line)
		require.NoError(t, err)
	}
	return p, pid
}

// withSubreaperMode turns subreaper mode on for one test.
func withSubreaperMode(t *testing.T) {
	t.Helper()
	require.NoError(t, EnableSubreaper())
	t.Cleanup(func() { require.NoError(t, unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)) })
}

// TestCloseAfterExitSweepsOnlyWhenSomethingIsLeft covers the cheap check
// Close makes after a child exited by itself: nothing is left after a
// clean exit; a group member still running is seen, and Close kills it.
func TestCloseAfterExitSweepsOnlyWhenSomethingIsLeft(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   bool
	}{
		{"clean exit", "exit 0", false},
		{"failed exit", "exit 3", false},
		{"a group member lives on", "sleep 600 </dev/null >/dev/null 2>&1 & echo $!", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, member := startShell(t, tc.script, Options{})
			exitAndReap(t, p)
			assert.Equal(t, tc.want, leftovers(p))
			require.NoError(t, p.Close())
			if member != 0 {
				awaitDeath(t, member)
			}
		})
	}
}

// TestOrphansMayRemainInSubreaperMode: a setsid orphan of the tree,
// reparented to this subreaper, keeps the check true until Close killed
// and reaped it; another launch's running child is not taken for one.
func TestOrphansMayRemainInSubreaperMode(t *testing.T) {
	setsid, err := exec.LookPath("setsid")
	require.NoError(t, err, "util-linux setsid")
	withSubreaperMode(t)

	other, err := Start(context.Background(), shellPlan("read line"), Options{Stdin: blockForever(t)})
	require.NoError(t, err)
	defer other.Close()

	clean, err := Start(context.Background(), shellPlan("exit 0"), Options{})
	require.NoError(t, err)
	exitAndReap(t, clean)
	assert.False(t, leftovers(clean), "another launch's child is no orphan of this tree")
	require.NoError(t, clean.Close())

	// The orphan leaves the group and the session, then the shell exits.
	p, orphan := startShell(t, setsid+" sleep 600 </dev/null >/dev/null 2>&1 & echo $!", Options{})
	exitAndReap(t, p)
	// Until it has exec'd sleep, the orphan may still be in the group, or
	// in the middle of an exec, when /proc/<pid>/environ reads empty and
	// its token cannot be seen (a window no sweep can close).
	testkit.Eventually(t, "the orphan to run sleep", 20*time.Second, func() bool {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(orphan) + "/cmdline")
		require.NoError(t, err)
		return strings.HasPrefix(string(cmdline), "sleep\x00")
	})
	// Reparenting happens when the shell exits, before its exit is seen.
	e, err := readProc(orphan)
	require.NoError(t, err)
	require.Equal(t, unix.Getpid(), e.PPid, "the orphan was reparented to this subreaper")
	assert.True(t, leftovers(p), "no group member is left, but an orphan of the tree is")

	require.NoError(t, p.Close())
	_, err = readProc(orphan)
	assert.Error(t, err, "Close killed and reaped the orphan")
	assert.False(t, leftovers(p))
}

// blockForever returns a stdin that never ends before the test does.
func blockForever(t *testing.T) io.Reader {
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	return r
}
