//go:build unix && !linux

package launch_test

import (
	"errors"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// treeWatch checks a tree's processes are gone, by PID (no /proc here).
type treeWatch struct {
	pids []int
}

func watchTree(t *testing.T, _ string, pids []int) *treeWatch {
	t.Helper()
	for _, pid := range pids {
		require.NoError(t, syscall.Kill(pid, 0))
	}
	return &treeWatch{pids: pids}
}

func (w *treeWatch) assertGone(t *testing.T) {
	t.Helper()
	eventually(t, "the tree's processes to be gone", func() bool {
		for _, pid := range w.pids {
			if !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
				return false
			}
		}
		return true
	})
}
