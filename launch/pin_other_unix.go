//go:build unix && !linux

package launch

import (
	"syscall"
	"time"
)

// pin holds a victim between its identity check and its signal. Without
// pidfds the check and the kill are two steps; the window between them is a
// few microseconds.
type pin struct{ proc proc }

// pinProcess pins v if it still exists with v's start time. A nil pin with
// mismatch set means the PID now names another process.
func pinProcess(v proc) (pn *pin, mismatch bool) {
	st, err := startTimeOf(v.Pid)
	if err != nil || st != v.StartTime {
		return nil, err == nil
	}
	return &pin{proc: v}, false
}

func (pn *pin) signal(sig syscall.Signal) bool { return syscall.Kill(pn.proc.Pid, sig) == nil }

func (pn *pin) awaitExit(time.Time) bool { return true }

func (pn *pin) release() {}
