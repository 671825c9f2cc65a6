//go:build unix && !linux

package launch

import (
	"context"
	"os/exec"
	"syscall"
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// startGuarded has no launch guard to offer: outside Linux no child
// subreaper exists, so the child is always this process's own.
func (p *Process) startGuarded(context.Context, *exec.Cmd) (treeOwner, error) {
	return nil, errNoGuard
}

// waitChild waits for the root through os/exec, which reaps it: outside
// Linux there is no portable wait-without-reap, so group signals after this
// point are guarded by a process-table check instead (see groupSignalSafe).
func (p *Process) waitChild() (ExitStatus, error) {
	err := p.sys.cmd.Wait()
	p.sys.reaped.Store(true)
	if ps := p.sys.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ExitStatus{Code: -1, Signal: int(ws.Signal()), Signaled: true}, nil
		}
		return ExitStatus{Code: ps.ExitCode()}, nil
	}
	return ExitStatus{}, failure.Wrap(failure.Process, err, "cannot wait for the child")
}

func (p *Process) releaseChild() error { return nil }

// pin holds a victim between its identity check and its signal. Without
// pidfds the check and the kill are two steps a few microseconds apart.
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
