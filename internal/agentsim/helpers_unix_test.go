//go:build !windows

package agentsim_test

import (
	"os/exec"
	"syscall"
)

// configureCmd gives the simulator its own process group, as a supervisor
// would, so tests can signal the group.
func configureCmd(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
