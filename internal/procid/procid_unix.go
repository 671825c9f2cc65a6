//go:build unix

package procid

import (
	"context"
	"errors"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/cursorkit/cursorkit/failure"
)

// slack: gopsutil's boot time is whole seconds and, in containers, jitters
// by one (see the package comment); plus one clock tick.
const slack = time.Second + 10*time.Millisecond

// isGone recognises "no such process" among gopsutil's errors.
func isGone(err error) bool { return errors.Is(err, syscall.ESRCH) }

// exited reports ErrGone for a process that has exited but is not reaped
// yet (a zombie): it still has its PID and creation time but runs no more.
func exited(ctx context.Context, pid int) error {
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return classify(err, pid)
	}
	status, err := p.StatusWithContext(ctx)
	if err != nil {
		return classify(err, pid)
	}
	if slices.Contains(status, process.Zombie) {
		return gone(pid, errors.New("exited, not yet reaped"))
	}
	return nil
}

// unixSignal checks that sig is a signal kill(2) can send.
func unixSignal(sig os.Signal) (syscall.Signal, error) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return 0, failure.New(failure.Input, "%v is not a POSIX signal", sig)
	}
	return s, nil
}

// killVerified verifies id, then sends sig with kill(2): the window between
// the two stays open (see Signal).
func (id Identity) killVerified(ctx context.Context, sig syscall.Signal) error {
	if err := id.verify(ctx); err != nil {
		return err
	}
	return signalError(id.PID, syscall.Kill(id.PID, sig))
}

func signalError(pid int, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ESRCH):
		return gone(pid, err)
	case errors.Is(err, syscall.EPERM):
		return permission(pid, err)
	}
	return failure.Wrap(failure.Process, err, "cannot signal pid %d", pid)
}
