package launch_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// treeWatch holds a handle to every process of a tree, opened while they
// are alive, so their exit is observed without any PID reuse question.
type treeWatch struct {
	handles []windows.Handle
}

func watchTree(t *testing.T, _ string, pids []int) *treeWatch {
	t.Helper()
	w := &treeWatch{}
	for _, pid := range pids {
		h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
		require.NoError(t, err, "grandchild %d", pid)
		w.handles = append(w.handles, h)
	}
	t.Cleanup(func() {
		for _, h := range w.handles {
			windows.CloseHandle(h)
		}
	})
	for _, h := range w.handles {
		ev, err := windows.WaitForSingleObject(h, 0)
		require.NoError(t, err)
		require.Equal(t, uint32(windows.WAIT_TIMEOUT), ev, "grandchild already gone before the kill")
	}
	return w
}

// assertGone waits on each handle until it is signalled.
func (w *treeWatch) assertGone(t *testing.T) {
	t.Helper()
	limit := time.Now().Add(deadline)
	for _, h := range w.handles {
		left := time.Until(limit)
		if left < 0 {
			left = 0
		}
		ev, err := windows.WaitForSingleObject(h, uint32(left.Milliseconds()))
		require.NoError(t, err)
		require.Equal(t, uint32(windows.WAIT_OBJECT_0), ev, "a process of the tree survived")
	}
}
