//go:build unix && !linux && !darwin

package testkit

import (
	"errors"
	"syscall"
	"time"
)

// lookup reports whether pid exists; there is no start time to tell a
// reused PID here (identity 0), and a zombie still counts.
func lookup(pid int) (procID, bool) {
	err := syscall.Kill(pid, 0)
	return 0, err == nil || errors.Is(err, syscall.EPERM)
}

func (procID) started() time.Time { return time.Time{} }

func kill(pid int, _ procID) error { return syscall.Kill(pid, syscall.SIGKILL) }

// carrying finds nothing: there is no /proc to scan here.
func carrying(string) map[int]procID { return nil }
