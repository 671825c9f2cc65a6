package launch

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/failure"
)

// waitChild waits for the root, this process's child, to exit without
// reaping it (waitid with WNOWAIT), so its PID, the group ID, stays
// reserved until release. It parks on the runtime's poller through a pidfd,
// holding no OS thread; where pidfds cannot be polled it blocks a thread.
func (p *Process) waitChild() (ExitStatus, error) {
	if status, err, ok := p.waitExitPolled(); ok {
		return status, err
	}
	var info unix.Siginfo
	if err := waitid(p.root.Pid, &info, 0); err != nil {
		return ExitStatus{}, failure.Wrap(failure.Process, err, "cannot wait for the child")
	}
	return childStatus(&info), nil
}

// ignoringEINTR calls f again for as long as it fails with EINTR.
func ignoringEINTR(f func() error) error {
	for {
		if err := f(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// waitid peeks at pid's exit (WNOWAIT), retrying on EINTR.
func waitid(pid int, info *unix.Siginfo, options int) error {
	return ignoringEINTR(func() error { return unix.Waitid(unix.P_PID, pid, info, unix.WEXITED|unix.WNOWAIT|options, nil) })
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
	var info unix.Siginfo
	var waitErr error
	_ = rc.Read(func(uintptr) bool {
		waitErr = waitid(p.root.Pid, &info, unix.WNOHANG)
		return waitErr != nil || childPid(&info) != 0 // else park until the pidfd is readable
	})
	switch {
	case waitErr != nil:
		return ExitStatus{}, failure.Wrap(failure.Process, waitErr, "cannot wait for the child"), true
	case childPid(&info) != 0:
		return childStatus(&info), nil, true
	}
	return ExitStatus{}, nil, false // the pidfd could not be polled: block instead
}

// releaseChild reaps the root through os/exec, which also frees its pidfd;
// with p.mu held, after Wait returned.
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

// SIGCHLD codes of siginfo_t.si_code for a signal's death.
const (
	cldKilled = 2
	cldDumped = 3
)

// siginfoUnion is the offset of siginfo_t's union: it follows the three
// int header fields at pointer alignment.
const siginfoUnion = (3*4 + unsafe.Sizeof(uintptr(0)) - 1) &^ (unsafe.Sizeof(uintptr(0)) - 1)

// childPid returns si_pid of a waitid siginfo_t: 0 when WNOHANG found none.
func childPid(info *unix.Siginfo) int {
	raw := (*[unsafe.Sizeof(unix.Siginfo{})]byte)(unsafe.Pointer(info))
	return int(*(*int32)(unsafe.Pointer(&raw[siginfoUnion])))
}

// childStatus decodes the SIGCHLD members of a siginfo_t filled by waitid:
// si_code (where each architecture puts it), then si_status after si_pid
// and si_uid at the start of the union.
func childStatus(info *unix.Siginfo) ExitStatus {
	raw := (*[unsafe.Sizeof(unix.Siginfo{})]byte)(unsafe.Pointer(info))
	status := int(*(*int32)(unsafe.Pointer(&raw[siginfoUnion+8])))
	switch info.Code {
	case cldKilled, cldDumped:
		return ExitStatus{Code: -1, Signal: status, Signaled: true}
	}
	return ExitStatus{Code: status}
}
