package main

import (
	"os/exec"
	"syscall"

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
