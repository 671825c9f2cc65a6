package launch

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// waitChild waits for the root, this process's child, to exit without reaping it (waitid with
// WNOWAIT), so its PID, the group ID, stays reserved until release. The
// wait parks on the runtime's poller through a pidfd, which becomes
// readable when the child exits, so a waiting Process holds no OS thread;
// where pidfds cannot be polled it blocks a thread in waitid instead.
func (p *Process) waitChild() (ExitStatus, error) {
	if status, err, ok := p.waitExitPolled(); ok {
		return status, err
	}
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

// waitExitPolled waits on a non-blocking pidfd registered with the
// runtime's poller; ok is false when that is not possible here.
func (p *Process) waitExitPolled() (status ExitStatus, err error, ok bool) {
	fd, perr := unix.PidfdOpen(p.root.Pid, unix.PIDFD_NONBLOCK)
	if perr != nil {
		return ExitStatus{}, nil, false
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, perr := f.SyscallConn()
	if perr != nil {
		return ExitStatus{}, nil, false
	}
	var waitErr error
	exited := false
	rerr := rc.Read(func(uintptr) bool {
		for {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PID, p.root.Pid, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
			switch {
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil:
				waitErr = err
				return true
			case childPid(&info) == 0:
				return false // still running: park until the pidfd is readable
			}
			status, exited = childStatus(&info), true
			return true
		}
	})
	switch {
	case waitErr != nil:
		return ExitStatus{}, failure.Wrap(failure.Process, waitErr, "cannot wait for the child"), true
	case exited:
		return status, nil, true
	}
	// The pidfd could not be polled (rerr says why): wait blocking instead.
	_ = rerr
	return ExitStatus{}, nil, false
}

// releaseChild reaps the root (through os/exec, which also frees its
// pidfd). Called with p.mu held, after Wait returned.
func (p *Process) releaseChild() error {
	if p.sys.reaped.Swap(true) {
		return nil
	}
	err := p.sys.cmd.Wait()
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

// siginfoUnion is the offset of siginfo_t's union: it follows the three
// int header fields at pointer alignment.
const siginfoUnion = (3*4 + unsafe.Sizeof(uintptr(0)) - 1) &^ (unsafe.Sizeof(uintptr(0)) - 1)

// childPid returns si_pid of a siginfo_t filled by waitid: 0 when WNOHANG
// found no exited child.
func childPid(info *unix.Siginfo) int {
	raw := (*[unsafe.Sizeof(unix.Siginfo{})]byte)(unsafe.Pointer(info))
	return int(*(*int32)(unsafe.Pointer(&raw[siginfoUnion])))
}

// childStatus decodes the SIGCHLD members of a siginfo_t filled by waitid:
// si_code, then si_status after si_pid and si_uid at the start of the union.
func childStatus(info *unix.Siginfo) ExitStatus {
	raw := (*[unsafe.Sizeof(unix.Siginfo{})]byte)(unsafe.Pointer(info))
	code := *(*int32)(unsafe.Pointer(&raw[siginfoCodeOffset]))
	status := int(*(*int32)(unsafe.Pointer(&raw[siginfoUnion+8])))
	switch code {
	case cldKilled, cldDumped:
		return ExitStatus{Code: -1, Signal: status, Signaled: true}
	}
	return ExitStatus{Code: status}
}
