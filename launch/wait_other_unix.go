//go:build unix && !linux

package launch

import (
	"errors"
	"os"
	"syscall"

	"github.com/cursorkit/cursorkit/failure"
)

// waitChild waits for the root through os/exec, which reaps it: outside Linux
// there is no portable wait-without-reap, so group signals after this point
// are guarded by a process-table check instead (see groupSignalSafe).
func (p *Process) waitChild() (ExitStatus, error) {
	err := p.sys.cmd.Wait()
	p.sys.reaped.Store(true)
	if p.sys.cmd.ProcessState != nil {
		return exitStatusOf(p.sys.cmd.ProcessState), nil
	}
	var exitErr interface{ ExitCode() int }
	if errors.As(err, &exitErr) {
		return ExitStatus{Code: exitErr.ExitCode()}, nil
	}
	return ExitStatus{}, failure.Wrap(failure.Process, err, "cannot wait for the child")
}

// releaseChild has nothing left to reap once Wait returned.
func (p *Process) releaseChild() error { return nil }

func exitStatusOf(ps *os.ProcessState) ExitStatus {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitStatus{Code: -1, Signal: int(ws.Signal()), Signaled: true}
	}
	return ExitStatus{Code: ps.ExitCode()}
}
