package launch

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// waitExit waits for the root to exit without reaping it (waitid with
// WNOWAIT), so its PID, the group ID, stays reserved until release.
func (p *Process) waitExit() (ExitStatus, error) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.root.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return ExitStatus{}, failure.Wrap(failure.Process, err, "cannot wait for the child")
		}
		return childStatus(&info), nil
	}
}

// release reaps the root (through os/exec, which also frees its pidfd).
// Called with p.mu held, after Wait returned.
func (p *Process) release() error {
	if p.sys.reaped.Swap(true) {
		return nil
	}
	err := p.cmd.Wait()
	var exitErr interface{ ExitCode() int }
	if err != nil && !errors.As(err, &exitErr) {
		return failure.Wrap(failure.Process, err, "cannot reap the child")
	}
	return nil
}

// SIGCHLD codes of siginfo_t.si_code.
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)

// childStatus decodes the SIGCHLD members of a siginfo_t filled by waitid:
// si_code, then si_pid, si_uid and si_status at the start of the union,
// which follows the three int header fields at pointer alignment.
func childStatus(info *unix.Siginfo) ExitStatus {
	raw := (*[unsafe.Sizeof(unix.Siginfo{})]byte)(unsafe.Pointer(info))
	code := *(*int32)(unsafe.Pointer(&raw[siginfoCodeOffset]))
	union := (3*4 + unsafe.Sizeof(uintptr(0)) - 1) &^ (unsafe.Sizeof(uintptr(0)) - 1)
	status := int(*(*int32)(unsafe.Pointer(&raw[union+8])))
	switch code {
	case cldKilled, cldDumped:
		return ExitStatus{Code: -1, Signal: status, Signaled: true}
	case cldExited:
		return ExitStatus{Code: status}
	}
	return ExitStatus{Code: status}
}
