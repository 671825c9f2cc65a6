package main

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"
)

// execTreeKinds are the grandchildren of the cancel test; the job holds
// them all, the detached one included.
var execTreeKinds = []string{"group", "detached"}

func execGrandchildAttr(cmd *exec.Cmd, kind string) {
	if kind == "detached" {
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS}
	}
}

func execKillSelf() int { return 1 }

// assertExecTreeGone checks every PID is gone: it cannot be opened any
// more, or it can and has exited.
func assertExecTreeGone(t *testing.T, _ string, pids []int) {
	t.Helper()
	limit := time.Now().Add(execWait)
	for _, pid := range pids {
		h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
		if err != nil {
			continue
		}
		ev, err := windows.WaitForSingleObject(h, uint32(time.Until(limit).Milliseconds()))
		_ = windows.CloseHandle(h)
		require.NoError(t, err)
		require.Equal(t, uint32(windows.WAIT_OBJECT_0), ev, "process %d of the tree survived", pid)
	}
}
