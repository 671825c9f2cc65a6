//go:build unix && !linux

package supervise

import (
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// treeWatch checks that a tree's processes are gone, by PID (no /proc).
type treeWatch struct{ pids []int }

func watchTree(t *testing.T, _ string, pids []int) *treeWatch {
	t.Helper()
	for _, pid := range pids {
		require.NoError(t, syscall.Kill(pid, 0))
	}
	return &treeWatch{pids: pids}
}

func (w *treeWatch) gone() bool {
	for _, pid := range w.pids {
		if !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return false
		}
	}
	return true
}

// goneAfter reports whether every PID of the tree is gone.
func goneAfter(_ string, pids []int) bool { return (&treeWatch{pids: pids}).gone() }
