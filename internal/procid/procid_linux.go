package procid

import (
	"context"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// signal pins the process with a pidfd, verifies the process at the PID,
// and signals through the pidfd: the signal reaches the verified process
// or nothing (it exited: ESRCH). Without pidfds it falls back to
// killVerified.
func (id Identity) signal(ctx context.Context, sig os.Signal) error {
	s, err := unixSignal(sig)
	if err != nil {
		return err
	}
	fd, err := unix.PidfdOpen(id.PID, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return gone(id.PID, err)
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM), errors.Is(err, unix.EINVAL):
		// No pidfds here (old kernel, seccomp): verify, then kill(2).
		return id.killVerified(ctx, s)
	case err != nil:
		return signalError(id.PID, err)
	}
	defer unix.Close(fd)
	// The pidfd names the process that had the PID when it was opened. If
	// that was not id, or id exited and the PID was reused since, the
	// process at the PID now is not id and verify refuses.
	if err := id.verify(ctx); err != nil {
		return err
	}
	return signalError(id.PID, unix.PidfdSendSignal(fd, s, nil, 0))
}
