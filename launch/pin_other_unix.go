//go:build unix && !linux

package launch

import (
	"syscall"
	"time"
)

// pin holds a victim between its identity check and its signal. Without
// pidfds the check and the kill are two steps; the window between them is a
// few microseconds.
type pin struct{ proc Proc }

func pinProcess(v Proc) (*pin, bool) {
	st, err := startTimeOf(v.Pid)
	if err != nil || st != v.StartTime {
		return nil, false
	}
	return &pin{proc: v}, true
}

func (pn *pin) kill() bool { return syscall.Kill(pn.proc.Pid, syscall.SIGKILL) == nil }

func (pn *pin) awaitExit(time.Time) bool { return true }

// reapIfOrphan never reaps: without a subreaper no orphan is this
// process's child.
func (pn *pin) reapIfOrphan(int) bool { return false }

func (pn *pin) release() {}
