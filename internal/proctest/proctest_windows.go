package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// Tree holds a handle to every watched process, opened while it was alive,
// so its exit is observed without any PID reuse question.
type Tree struct {
	pids    []int
	handles []windows.Handle
}

// Watch opens a handle to each of pids (the marker is not used: Windows has
// no cheap argv scan) and fails t unless each process is alive now. The
// handles are closed when t finishes.
func Watch(t testing.TB, _ string, pids []int) *Tree {
	t.Helper()
	w := &Tree{pids: pids}
	t.Cleanup(func() {
		for _, h := range w.handles {
			_ = windows.CloseHandle(h)
		}
	})
	for _, pid := range pids {
		h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
		require.NoError(t, err, "process %d", pid)
		w.handles = append(w.handles, h)
		ev, err := windows.WaitForSingleObject(h, 0)
		require.NoError(t, err)
		require.Equal(t, uint32(windows.WAIT_TIMEOUT), ev, "process %d is gone before the stop", pid)
	}
	return w
}

// Gone reports whether every watched process has exited.
func (w *Tree) Gone() bool {
	for _, h := range w.handles {
		ev, err := windows.WaitForSingleObject(h, 0)
		if err != nil || ev != uint32(windows.WAIT_OBJECT_0) {
			return false
		}
	}
	return true
}

func (w *Tree) String() string { return fmt.Sprintf("watched PIDs %v", w.pids) }

// GoneAfter reports, without a prior Watch, whether every one of pids is
// gone: it cannot be opened any more, or it can and has exited.
func GoneAfter(_ string, pids []int) bool {
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

// CmdExe returns a command that runs exe with one argument (a marker: it is
// not quoted) through cmd.exe, so that a tree holds a cmd.exe too.
func CmdExe(exe, arg string) *exec.Cmd {
	cmdPath := filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	cmd := exec.Command(cmdPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: fmt.Sprintf(`"%s" /d /s /c ""%s" %s"`, cmdPath, exe, arg)}
	return cmd
}
