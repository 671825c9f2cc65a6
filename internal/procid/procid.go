// Package procid identifies a process by its PID and creation time, so that
// a PID the system reused for another process is never mistaken for the
// one that was recorded, and acts on a process only after that check.
//
// It is generic mechanism: it knows no agent and imports nothing of this
// module but failure. Creation times come from github.com/shirou/gopsutil/v4
// (Linux: the start time in clock ticks since boot from /proc/<pid>/stat
// plus the boot time; Windows: GetProcessTimes; macOS and the BSDs: the
// kernel's process table), at the millisecond gopsutil reports.
//
// Precision, and so how two creation times are compared (Matches):
//
//   - Windows: the creation time is a fixed 100 ns FILETIME stamp; gopsutil
//     and OfHandle both truncate it to the millisecond, so the same process
//     always reads the same value and Matches compares exactly at the
//     millisecond.
//   - Linux: the kernel's stamp is exact (clock ticks since boot, usually
//     10 ms), but the boot time gopsutil adds to it is whole seconds and,
//     in a container (docker, lxc), computed as now minus /proc/uptime and
//     truncated, so two reads of the same process, in one program or two,
//     can differ by up to a second. Matches therefore accepts creation
//     times up to 1 s + 10 ms apart (the slack; 0 on Windows). A reused PID passes only if the recorded
//     process exited and the PID came round again within that second of its
//     creation; the act path (Signal, Kill) then still pins the process
//     with a pidfd before it verifies, so no signal reaches a process that
//     was not verified.
//   - Elsewhere (macOS, the BSDs): microseconds or better from the kernel,
//     compared with the same slack as Linux.
//
// A wall-clock step (NTP, a manual change) between the recording and the
// check moves Linux's computed creation time with it; a step over the slack
// makes the process look gone (a false "not alive", never a signal to a
// wrong process).
package procid

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/cursorkit/cursorkit/failure"
)

// Identity is one process: its PID and when it was created. Its JSON
// members are "pid" and "created" (RFC 3339, UTC, at the millisecond).
type Identity struct {
	PID     int       `json:"pid"`
	Created time.Time `json:"created"`
}

// ErrGone is wrapped by every error that says the process no longer runs:
// no process has its PID, or it has exited (a zombie not yet reaped counts
// as exited). The failure kind is failure.Died.
var ErrGone = errors.New("process is gone")

// ErrMismatch is wrapped by every error that says the PID now names another
// process: its creation time differs from the recorded one, so the
// recorded process is gone and the PID was reused. The failure kind is
// failure.Died; nothing was done to the process at the PID.
var ErrMismatch = errors.New("process identity does not match: the PID was reused")

// String renders the identity as "pid 123 created 2006-01-02T15:04:05.000Z".
func (id Identity) String() string {
	return fmt.Sprintf("pid %d created %s", id.PID, id.Created.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
}

// Of reads the identity of the process at pid. Errors: failure.Input for a
// PID that cannot name a process (0 or less), failure.Died wrapping ErrGone
// when no process has it, failure.Setup wrapping fs.ErrPermission when its
// creation time may not be read, failure.Cancelled when ctx ended first,
// failure.Process otherwise.
func Of(ctx context.Context, pid int) (Identity, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return Identity{}, failure.New(failure.Input, "pid %d cannot name a process", pid)
	}
	if err := ctx.Err(); err != nil {
		return Identity{}, failure.Wrap(failure.Cancelled, err, "reading the identity of pid %d cancelled", pid)
	}
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return Identity{}, classify(err, pid)
	}
	ms, err := p.CreateTimeWithContext(ctx)
	if err != nil {
		return Identity{}, classify(err, pid)
	}
	if ms <= 0 {
		return Identity{}, failure.New(failure.Process, "pid %d has no creation time", pid)
	}
	return Identity{PID: pid, Created: time.UnixMilli(ms).UTC()}, nil
}

// Parent returns the PID of the parent of the process at pid. Errors as
// Of's.
func Parent(ctx context.Context, pid int) (int, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return 0, failure.New(failure.Input, "pid %d cannot name a process", pid)
	}
	p, err := process.NewProcessWithContext(ctx, int32(pid))
	if err != nil {
		return 0, classify(err, pid)
	}
	ppid, err := p.PpidWithContext(ctx)
	if err != nil {
		return 0, classify(err, pid)
	}
	return int(ppid), nil
}

// Self returns the identity of this process.
func Self() (Identity, error) { return Of(context.Background(), os.Getpid()) }

// Matches reports whether other is the same process as id: the same PID and
// creation times at most the slack apart, both taken at the millisecond. An
// identity without a creation time matches nothing.
func (id Identity) Matches(other Identity) bool {
	if id.PID != other.PID || id.PID <= 0 || id.Created.IsZero() || other.Created.IsZero() {
		return false
	}
	d := id.Created.Truncate(time.Millisecond).Sub(other.Created.Truncate(time.Millisecond))
	return d.Abs() <= slack
}

// Alive reports whether the process id names still runs: a process has the
// PID, its creation time matches, and it has not exited (a zombie is not
// alive). A reused PID is not alive. The error is nil whenever the answer
// is known; it is failure.Input for an identity without a PID or creation
// time, failure.Setup when the process may not be inspected, failure.Process
// or failure.Cancelled otherwise.
func (id Identity) Alive(ctx context.Context) (bool, error) {
	err := id.verify(ctx)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrGone), errors.Is(err, ErrMismatch):
		return false, nil
	}
	return false, err
}

// Kill forcefully ends the process id names, after verifying it (as Signal
// with os.Kill). It does not wait for the process to exit.
func (id Identity) Kill(ctx context.Context) error { return id.Signal(ctx, os.Kill) }

// Signal sends sig to the process id names only after verifying, right
// before sending, that the process at the PID is id (Alive's check): a
// mismatched PID is never touched. Errors: failure.Died wrapping ErrGone or
// ErrMismatch (nothing was sent), failure.Input for an unusable identity or
// a signal the OS cannot send (Windows: only os.Kill), failure.Setup
// wrapping fs.ErrPermission when the process may not be signalled,
// failure.Process otherwise.
//
// The window between verifying and sending: Linux opens a pidfd first,
// verifies, then signals through the pidfd, so the signal can only reach
// the verified process (closed). Windows opens a handle, reads the creation
// time through that handle and terminates through it (closed). Where a
// pidfd is unavailable (Linux before 5.3, a seccomp filter) and on macOS and
// the BSDs, the PID is verified and then signalled with kill(2): the
// process could exit and its PID be reused in between, which needs the PID
// space to wrap in microseconds (open, documented).
func (id Identity) Signal(ctx context.Context, sig os.Signal) error {
	if err := id.usable(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return failure.Wrap(failure.Cancelled, err, "signalling %s cancelled", id)
	}
	return id.signal(ctx, sig)
}

// usable checks that id can be verified at all.
func (id Identity) usable() error {
	if id.PID <= 0 || id.PID > math.MaxInt32 {
		return failure.New(failure.Input, "identity has no usable pid (%d)", id.PID)
	}
	if id.Created.IsZero() {
		return failure.New(failure.Input, "identity of pid %d has no creation time", id.PID)
	}
	return nil
}

// verify checks that the process at id.PID is id and still runs.
func (id Identity) verify(ctx context.Context) error {
	if err := id.usable(); err != nil {
		return err
	}
	now, err := Of(ctx, id.PID)
	if err != nil {
		return err
	}
	if !id.Matches(now) {
		return mismatch(id, now)
	}
	return exited(ctx, id.PID)
}

func gone(pid int, err error) error {
	if err == nil {
		err = ErrGone
	} else {
		err = errors.Join(ErrGone, err)
	}
	return &failure.Error{Kind: failure.Died, Message: fmt.Sprintf("pid %d is gone", pid), Err: err}
}

func mismatch(want, got Identity) error {
	return failure.Wrap(failure.Died, ErrMismatch, "pid %d was reused: created %s, recorded %s", want.PID,
		got.Created.UTC().Format(time.RFC3339Nano), want.Created.UTC().Format(time.RFC3339Nano))
}

func permission(pid int, err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		err = errors.Join(fs.ErrPermission, err)
	}
	return failure.Wrap(failure.Setup, err, "not permitted to act on pid %d", pid)
}

// classify turns a gopsutil error into a failure.
func classify(err error, pid int) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return failure.Wrap(failure.Cancelled, err, "reading the identity of pid %d cancelled", pid)
	case errors.Is(err, process.ErrorProcessNotRunning), errors.Is(err, fs.ErrNotExist), isGone(err):
		return gone(pid, nil)
	case errors.Is(err, fs.ErrPermission):
		return permission(pid, err)
	}
	return failure.Wrap(failure.Process, err, "cannot read the identity of pid %d", pid)
}
