//go:build unix

package main

import (
	"os/exec"
	"syscall"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// execTreeKinds are the grandchildren of the cancel test: one in the
// group, one setsid escapee.
var execTreeKinds = []string{"group", "setsid"}

func execGrandchildAttr(cmd *exec.Cmd, kind string) {
	if kind == "setsid" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
}

func execKillSelf() int {
	_ = syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
	testkit.SleepForever()
	return 1
}
