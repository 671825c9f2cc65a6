// Package filelock is an exclusive lock between processes on one file:
// flock(2) on POSIX, LockFileEx on Windows. The operating system drops the
// lock when its holder exits, however it exits, so a kill -9 never leaves
// a stale lock behind (unlike a lock file or directory whose existence is
// the lock).
//
// The lock is advisory: it only excludes other holders of the same lock,
// never a reader or writer that does not ask for it. Two opens of the same
// path in one process are two holders and exclude each other.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// ErrBusy is returned by TryAcquire when another holder has the lock.
var ErrBusy = errors.New("the lock is held by another holder")

// Lock is a held lock. Release it once; the file stays.
type Lock struct {
	f *os.File
}

// TryAcquire takes the lock of path without waiting, creating the file
// (mode 0600) when it is missing. ErrBusy means another holder has it.
func TryAcquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := tryLock(f); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f}, nil
}

// Acquire takes the lock of path, retrying while another holder has it
// until ctx is done; the error then wraps ErrBusy and ctx's cause.
// Holders are expected to keep it for milliseconds, so the retries start
// at 1 ms and back off to 20 ms.
func Acquire(ctx context.Context, path string) (*Lock, error) {
	wait := time.Millisecond
	for {
		l, err := TryAcquire(path)
		if !errors.Is(err, ErrBusy) {
			return l, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w: %w", ErrBusy, context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// Release drops the lock and closes the file.
func (l *Lock) Release() error {
	uerr := unlock(l.f)
	cerr := l.f.Close()
	return errors.Join(uerr, cerr)
}
