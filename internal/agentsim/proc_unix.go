//go:build !windows

package agentsim

import (
	"os/signal"
	"syscall"
)

// escapeAttr puts a worker in a session of its own, out of the process
// group a supervisor signals.
func escapeAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func ignoreSIGTERM() { signal.Ignore(syscall.SIGTERM) }
