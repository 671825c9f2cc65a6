package procid

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"

	"github.com/cursorkit/cursorkit/failure"
)

// slack: a FILETIME creation time is fixed, read at the millisecond.
const slack = 0

// isGone recognises "no such process" among gopsutil's errors: OpenProcess
// answers ERROR_INVALID_PARAMETER for a PID nothing has.
func isGone(err error) bool { return errors.Is(err, windows.ERROR_INVALID_PARAMETER) }

// exited: gopsutil's existence check already waits on the process object
// (an exited process with open handles does not exist for it).
func exited(context.Context, int) error { return nil }

// OfHandle reads the identity of the process h is a handle to (it needs
// PROCESS_QUERY_LIMITED_INFORMATION), at the same millisecond as Of. It
// works after the process exited, as long as the handle is open.
func OfHandle(h windows.Handle) (Identity, error) {
	pid, err := windows.GetProcessId(h)
	if err != nil {
		return Identity{}, failure.Wrap(failure.Process, err, "cannot read the pid of a process handle")
	}
	created, err := createdOf(h)
	if err != nil {
		return Identity{}, failure.Wrap(failure.Process, err, "cannot read the creation time of pid %d", pid)
	}
	return Identity{PID: int(pid), Created: created}, nil
}

// createdOf reads the creation time through h, truncated to the
// millisecond as gopsutil does.
func createdOf(h windows.Handle) (time.Time, error) {
	var created, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exit, &kernel, &user); err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(created.Nanoseconds() / int64(time.Millisecond)).UTC(), nil
}

// signal opens a handle, verifies the creation time through that same
// handle and terminates through it: the handle keeps the process object,
// so its PID cannot be reused in between. Only os.Kill can be sent.
func (id Identity) signal(_ context.Context, sig os.Signal) error {
	if sig != os.Kill {
		return failure.New(failure.Input, "only os.Kill can be sent on Windows, not %v", sig)
	}
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE,
		false, uint32(id.PID))
	switch {
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		return gone(id.PID, err)
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return permission(id.PID, err)
	case err != nil:
		return failure.Wrap(failure.Process, err, "cannot open pid %d", id.PID)
	}
	defer windows.CloseHandle(h)
	created, err := createdOf(h)
	if err != nil {
		return failure.Wrap(failure.Process, err, "cannot read the creation time of pid %d", id.PID)
	}
	if now := (Identity{PID: id.PID, Created: created}); !id.Matches(now) {
		return mismatch(id, now)
	}
	if ev, err := windows.WaitForSingleObject(h, 0); err == nil && ev == windows.WAIT_OBJECT_0 {
		return gone(id.PID, errors.New("exited"))
	}
	if err := windows.TerminateProcess(h, 1); err != nil {
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			// Also what TerminateProcess answers for a process that is
			// already exiting.
			if ev, werr := windows.WaitForSingleObject(h, 0); werr == nil && ev == windows.WAIT_OBJECT_0 {
				return gone(id.PID, err)
			}
			return permission(id.PID, err)
		}
		return failure.Wrap(failure.Process, err, "cannot terminate pid %d", id.PID)
	}
	return nil
}
