//go:build !linux && !windows

package simtest

import (
	"errors"
	"syscall"
)

// running reports whether pid exists (a zombie still counts here: only
// Linux exposes the state cheaply).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
