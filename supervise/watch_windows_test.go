package supervise

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// treeWatch holds a handle to every process of a tree, opened while they
// are alive, so their exit is observed without any PID reuse question.
type treeWatch struct{ handles []windows.Handle }

func watchTree(t *testing.T, _ string, pids []int) *treeWatch {
	t.Helper()
	w := &treeWatch{}
	for _, pid := range pids {
		h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
		require.NoError(t, err, "process %d", pid)
		w.handles = append(w.handles, h)
	}
	t.Cleanup(func() {
		for _, h := range w.handles {
			_ = windows.CloseHandle(h)
		}
	})
	require.False(t, w.gone(), "the tree is gone before the stop")
	return w
}

// gone reports whether every watched process has exited.
func (w *treeWatch) gone() bool {
	for _, h := range w.handles {
		ev, err := windows.WaitForSingleObject(h, 0)
		if err != nil || ev != uint32(windows.WAIT_OBJECT_0) {
			return false
		}
	}
	return true
}

// goneAfter reports whether every PID of the tree is gone: it cannot be
// opened any more, or it can and has exited.
func goneAfter(_ string, pids []int) bool {
	for _, pid := range pids {
		h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
		if err != nil {
			continue
		}
		ev, _ := windows.WaitForSingleObject(h, 0)
		_ = windows.CloseHandle(h)
		if ev != uint32(windows.WAIT_OBJECT_0) {
			return false
		}
	}
	return true
}
