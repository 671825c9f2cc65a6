//go:build unix && !linux

package proctest

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Tree watches processes by PID (there is no /proc to scan here).
type Tree struct{ pids []int }

// Watch fails t unless each of pids is alive now; the marker is not used.
func Watch(t testing.TB, _ string, pids []int) *Tree {
	t.Helper()
	for _, pid := range pids {
		require.NoError(t, syscall.Kill(pid, 0), "process %d", pid)
	}
	return &Tree{pids: pids}
}

// Gone reports whether every watched PID is gone.
func (w *Tree) Gone() bool { return GoneAfter("", w.pids) }

func (w *Tree) String() string { return fmt.Sprintf("watched PIDs %v", w.pids) }

// GoneAfter reports whether every one of pids is gone.
func GoneAfter(_ string, pids []int) bool {
	for _, pid := range pids {
		if !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return false
		}
	}
	return true
}
