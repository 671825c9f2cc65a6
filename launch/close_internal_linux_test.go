package launch

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/shim"
)

// shellPlan runs script with /bin/sh.
func shellPlan(script string) shim.Command {
	return shim.Command{Program: "/bin/sh", Args: []string{"sh", "-c", script}}
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

// leftovers is groupHasMembers under p.mu.
func leftovers(p *Process) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.groupHasMembers()
}

// startDirectly is Start without a launch guard: the child is this
// process's own, as where no guard can run.
func startDirectly(t *testing.T, plan shim.Command, opts Options) *Process {
	t.Helper()
	p, cmd, err := prepare(context.Background(), plan, opts)
	require.NoError(t, err)
	require.NoError(t, p.startDirect(context.Background(), cmd, opts.Stdin))
	return p
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
	p := startDirectly(t, shellPlan(script), opts)
	out, err := io.ReadAll(p.Stdout())
	require.NoError(t, err)
	pid := 0
	if line := strings.TrimSpace(string(out)); line != "" {
		pid, err = strconv.Atoi(line)
		require.NoError(t, err)
	}
	return p, pid
}

// TestCloseAfterExitSweepsOnlyWhenSomethingIsLeft covers the cheap check
// Close makes, without a guard, after a child exited by itself: nothing is left after a
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
