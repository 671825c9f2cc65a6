package mcpstage

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io/fs"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// A directory lock: mkdir is the acquisition (atomic on every OS and file
// system, network ones included, unlike O_EXCL files or flock), and an
// owner file written right after says who holds it, so a contender can
// tell a dead or overdue owner (which the OS does not drop) from a live one.

const (
	ownerFile     = "owner.json" // in a lock directory
	maxOwnerBytes = 4 << 10      // bounds an owner file read: ours are ~150 bytes
	// maxPasses bounds the mkdir passes of one attempt (again at once after
	// a reclaim, or a directory that vanished before the look inside): one
	// that keeps changing hands is busy, left to the next attempt.
	maxPasses = 3
	// missingOwnerTries bounds how often release looks again for a missing
	// owner file: a contender's claim holds it for microseconds.
	missingOwnerTries = 8
)

// lockPolicy is how a contender tries and when it may reclaim.
type lockPolicy struct {
	TTL            time.Duration // an owner older than this may be reclaimed
	Attempts       int           // tries before failing
	MinGap, MaxGap time.Duration // random wait between tries (uniform)
}

// mainLockPolicy is the main lock's: its critical sections are one
// journal step each (milliseconds), so 30 s means the owner is stuck or
// gone, and a brief randomised retry lets a peer's section end.
func mainLockPolicy() lockPolicy {
	return lockPolicy{TTL: 30 * time.Second, Attempts: 5, MinGap: 8 * time.Millisecond, MaxGap: 19 * time.Millisecond}
}

// bootstrapLockPolicy is the bootstrap lock's (one info/exclude rewrite).
func bootstrapLockPolicy() lockPolicy {
	return lockPolicy{TTL: 10 * time.Second, Attempts: 5, MinGap: 10 * time.Millisecond, MaxGap: 10 * time.Millisecond}
}

// lockOwner is the content of a lock's owner file.
type lockOwner struct {
	PID      int       `json:"pid"`
	Created  time.Time `json:"created"` // process creation time (procid), zero if unknown
	Hostname string    `json:"hostname"`
	Acquired time.Time `json:"acquiredAt"`
}

// same reports whether o and other record the same acquisition (a PID
// and an acquisition time name one holding, even reclaimed by itself).
func (o lockOwner) same(other lockOwner) bool {
	return o.PID == other.PID && o.Acquired.Equal(other.Acquired) && o.Hostname == other.Hostname
}

// describe names the owner for an error message.
func (o lockOwner) describe(now time.Time) string {
	return fmt.Sprintf("pid %d on %s, acquired %s ago", o.PID, cmp.Or(o.Hostname, "an unknown host"), now.Sub(o.Acquired).Round(time.Millisecond))
}

// dirLock is a held directory lock.
type dirLock struct {
	dir   string
	owner lockOwner

	ownerGone bool  // release claimed the owner file; only the rmdir is left
	done      bool  // release finished,
	result    error // with this outcome, returned again by later calls
}

// acquireDirLock takes the lock directory dir (its parent must exist),
// trying p.Attempts times a random gap apart, reclaiming a stale owner.
// Errors: failure.Resource when the lock stays held (naming the owner, or
// saying there is no owner file), failure.Setup when dir cannot be a lock
// (missing parent, not a directory, no permission), failure.Cancelled.
func acquireDirLock(ctx context.Context, dir string, p lockPolicy, now func() time.Time) (*dirLock, error) {
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, failure.Wrap(failure.Cancelled, err, "taking the lock %s cancelled", dir)
		}
		l, err := tryLock(ctx, dir, now, &p)
		if err == nil || !failure.Is(err, failure.Resource) || attempt >= max(p.Attempts, 1) {
			return l, err
		}
		select {
		case <-ctx.Done():
			return nil, failure.Wrap(failure.Cancelled, context.Cause(ctx), "taking the lock %s cancelled", dir)
		case <-time.After(gap(p)):
		}
	}
}

// gap returns a uniform random wait in [MinGap, MaxGap]: contenders that
// collided once should not retry in lockstep.
func gap(p lockPolicy) time.Duration {
	if p.MaxGap <= p.MinGap {
		return max(p.MinGap, 0)
	}
	return p.MinGap + mathrand.N(p.MaxGap-p.MinGap+1)
}

// tryDirLock makes one attempt at dir and never reclaims, for the
// process-exit backstop. Errors as acquireDirLock's.
func tryDirLock(dir string, now func() time.Time) (*dirLock, error) {
	return tryLock(context.Background(), dir, now, nil)
}

// tryLock is one attempt: mkdir, else a look at the owner, reclaimed if
// stale unless p is nil (tryDirLock).
func tryLock(ctx context.Context, dir string, now func() time.Time, p *lockPolicy) (*dirLock, error) {
	var busy error
	for range maxPasses {
		err := os.Mkdir(dir, 0o700)
		switch {
		case err == nil:
			return own(dir, now)
		case errors.Is(err, fs.ErrNotExist):
			return nil, failure.Wrap(failure.Setup, err, "cannot make the lock %s: its parent directory does not exist", dir)
		case !errors.Is(err, fs.ErrExist):
			return nil, failure.Wrap(failure.Setup, err, "cannot make the lock %s", dir)
		}
		ins, err := inspect(dir)
		switch {
		case err != nil:
			return nil, err
		case ins.vanished:
			busy = failure.New(failure.Resource, "the lock %s changed hands repeatedly", dir)
			continue
		case !ins.ok:
			// Never stolen, however old: between a contender's mkdir and
			// its owner write there is no owner file yet, and a directory
			// with something else in it is not one of ours.
			return nil, failure.New(failure.Resource, "the lock %s has no owner file: if no cursorkit process uses this worktree, remove it", dir)
		}
		t := now()
		if p == nil {
			return nil, failure.New(failure.Resource, "the lock %s is held by %s", dir, ins.owner.describe(t))
		}
		why, err := stale(ctx, ins.owner, p.TTL, t)
		if err != nil {
			return nil, err
		}
		if why == "" {
			return nil, failure.New(failure.Resource, "the lock %s is held by %s (it may be reclaimed when its process is gone or after %s)", dir, ins.owner.describe(t), p.TTL)
		}
		if l, err := reclaim(dir, ins.raw, now); l != nil || err != nil {
			return l, err
		}
		busy = failure.New(failure.Resource, "the lock %s is held by %s, who %s, but another process is reclaiming it", dir, ins.owner.describe(t), why)
	}
	return nil, busy
}

// own writes the owner file into dir, made or reclaimed by this process.
func own(dir string, now func() time.Time) (*dirLock, error) {
	o := lockOwner{PID: os.Getpid(), Acquired: now().UTC()}
	// Without a creation time the owner is judged by its PID alone (see
	// stale), which is still right unless the PID was reused.
	if self, err := procid.Self(); err == nil {
		o.Created = self.Created
	}
	// Without a hostname no contender ever takes the owner for dead on its
	// own host; the TTL still frees the lock.
	o.Hostname, _ = os.Hostname()
	data, err := json.Marshal(o)
	if err == nil {
		err = writeOwner(dir, append(data, '\n'))
	}
	if err != nil {
		// The directory has no owner file, so nobody would ever reclaim
		// it: remove it (and a temporary file the write may have left).
		_ = removeTree(dir)
		return nil, failure.Wrap(failure.Setup, err, "writing the owner file of the lock %s", dir)
	}
	return &dirLock{dir: dir, owner: o}, nil
}

// inspection is what a look inside a lock directory found.
type inspection struct {
	vanished bool      // the directory is gone: mkdir again
	ok       bool      // a valid owner file
	owner    lockOwner // when ok
	raw      []byte    // the owner file's bytes, when ok
}

// inspect reads the owner of the lock directory dir. failure.Setup for a
// dir that is not a directory (a symbolic link is never followed) or
// cannot be read.
func inspect(dir string) (inspection, error) {
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return inspection{vanished: true}, nil
	case err != nil:
		return inspection{}, failure.Wrap(failure.Setup, err, "cannot inspect the lock %s", dir)
	case !info.IsDir():
		return inspection{}, failure.New(failure.Setup, "the lock %s is not a directory (%s): remove it", dir, info.Mode().Type())
	}
	raw, err := safefile.Read(filepath.Join(dir, ownerFile), maxOwnerBytes)
	if errors.Is(err, fs.ErrNotExist) { // no owner file, or no directory any more
		_, serr := os.Lstat(dir)
		return inspection{vanished: errors.Is(serr, fs.ErrNotExist)}, nil
	}
	if err != nil {
		var tooLarge *safefile.TooLargeError
		var notRegular *safefile.NotRegularError
		if errors.As(err, &tooLarge) || errors.As(err, &notRegular) {
			return inspection{}, nil // not an owner file of ours
		}
		return inspection{}, failure.Wrap(failure.Setup, err, "cannot read the owner of the lock %s", dir)
	}
	o, ok := parseOwner(raw)
	return inspection{ok: ok, owner: o, raw: raw}, nil
}

// parseOwner decodes an owner file. Owner files are written whole, so one
// that does not decode, or lacks a PID or an acquisition time, was not
// torn by a crash: it is foreign (false).
func parseOwner(raw []byte) (lockOwner, bool) {
	var o lockOwner
	if err := json.Unmarshal(raw, &o); err != nil || o.PID <= 0 || o.Acquired.IsZero() {
		return lockOwner{}, false
	}
	return o, true
}

// stale returns why owner may be reclaimed ("" when it may not): it was
// acquired more than ttl before now, or it is on this host and its
// process is gone. An owner whose liveness cannot be told is alive.
func stale(ctx context.Context, owner lockOwner, ttl time.Duration, now time.Time) (string, error) {
	if age := now.Sub(owner.Acquired); age > ttl {
		return fmt.Sprintf("has held it longer than %s", ttl), nil
	}
	host, err := os.Hostname()
	if err != nil || host == "" || owner.Hostname != host {
		return "", nil // another host's process cannot be checked from here
	}
	// With a creation time a reused PID counts as gone; without one only a
	// PID no process has does.
	alive := true
	if !owner.Created.IsZero() {
		alive, err = procid.Identity{PID: owner.PID, Created: owner.Created}.Alive(ctx)
	} else if _, err = procid.Of(ctx, owner.PID); errors.Is(err, procid.ErrGone) {
		alive, err = false, nil
	}
	switch {
	case err != nil && failure.Is(err, failure.Cancelled):
		return "", err
	case err == nil && !alive:
		return "is gone", nil
	}
	return "", nil
}

// reclaim takes over the stale lock dir, whose owner file read raw, by
// claiming the owner file: of several reclaimers only one rename succeeds.
// A directory without an owner file is touched by nobody, so the claimer
// owns this directory instance: it checks the claimed file is the one it
// judged stale, writes its own owner file and drops the claim. A nil lock
// and error leave the next pass to decide (the file, if any, put back).
//
// Renaming the directory itself to a tombstone would not do: a reclaimer
// overtaken between its read and its rename by another that reclaimed the
// same owner and took the lock afresh would move that fresh lock, and
// both would hold it. The owner file pins its directory; a path does not.
func reclaim(dir string, raw []byte, now func() time.Time) (*dirLock, error) {
	claimed, ok := claim(dir, "reclaim")
	if !ok {
		return nil, nil
	}
	if got, err := safefile.Read(claimed, maxOwnerBytes); err != nil || !bytes.Equal(got, raw) {
		unclaim(dir, claimed)
		return nil, nil
	}
	l, err := own(dir, now)
	if err != nil {
		return nil, err // own removed dir, claim and all
	}
	// A claim file that cannot be removed now is harmless: release
	// removes everything in the directory.
	_ = os.Remove(claimed)
	return l, nil
}

// claim renames the owner file of dir to a unique name beside it; false
// when that failed (no owner file).
func claim(dir, why string) (string, bool) {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	claimed := filepath.Join(dir, ownerFile+"."+why+"-"+hex.EncodeToString(b[:]))
	if err := os.Rename(filepath.Join(dir, ownerFile), claimed); err != nil {
		return "", false
	}
	return claimed, true
}

// unclaim puts a claimed owner file back. Nothing can have written a new
// owner file meanwhile: only a mkdir winner writes one, into the directory
// it made. Should the rename fail, the lock is left without an owner file,
// which nobody steals and whose error tells the operator what to do.
func unclaim(dir, claimed string) {
	_ = os.Rename(claimed, filepath.Join(dir, ownerFile))
}

// writeOwner puts the owner file in place whole (a temporary file renamed:
// a kill between leaves no owner file, which the lock's rules cover). It is
// not synced to the disk: a lock lives for milliseconds and means nothing
// after a reboot.
func writeOwner(dir string, data []byte) error {
	tmp, err := os.CreateTemp(dir, "."+ownerFile+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, ownerFile))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// removeTree removes dir and everything in it, deepest entries first, with
// os.Remove: os.RemoveAll uses an NT call Wine does not implement. A dir
// already gone is removed.
func removeTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if e.IsDir() {
			errs = append(errs, removeTree(path))
		} else if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// release gives the lock up: it claims the owner file (as a reclaimer
// does, so a concurrent reclaim and this release cannot both act on it),
// then removes the directory with everything in it; one already gone is
// released. An owner file that is not this holding's any more (reclaimed
// after the TTL) is put back untouched: failure.Resource. Calling it again
// returns the first call's result.
func (l *dirLock) release() error {
	if l == nil {
		return nil
	}
	if !l.done {
		l.result = l.releaseOnce()
		// A failed removal (Setup) may be retried by calling again.
		l.done = l.result == nil || failure.Is(l.result, failure.Resource)
	}
	return l.result
}

func (l *dirLock) releaseOnce() error {
	takenOver := failure.New(failure.Resource,
		"the lock %s was taken over while this process held it (pid %d, acquired %s): its critical section outlasted the lock's TTL",
		l.dir, l.owner.PID, l.owner.Acquired.Format(time.RFC3339Nano))
	for try := 0; !l.ownerGone; try++ {
		claimed, ok := claim(l.dir, "release")
		if !ok {
			ins, err := inspect(l.dir)
			switch {
			case err != nil:
				return err
			case ins.vanished:
				return nil
			case ins.ok && !ins.owner.same(l.owner), try >= missingOwnerTries:
				return takenOver
			}
			time.Sleep(time.Duration(try+1) * time.Millisecond) // a retry pace: the claimer puts the file back at once
			continue
		}
		raw, err := safefile.Read(claimed, maxOwnerBytes)
		if o, ok := parseOwner(raw); err != nil || !ok || !o.same(l.owner) {
			unclaim(l.dir, claimed)
			return takenOver
		}
		l.ownerGone = true
	}
	// The directory holds no owner file now, so nobody else touches it:
	// everything in it (the claimed owner file) is this holding's. The
	// removal is retried a few times: Windows keeps a deleted file's name
	// until the last handle to it closes, so a contender that was reading
	// the owner file makes the directory look non-empty for a moment.
	delay := time.Millisecond
	for attempt := 0; ; attempt++ {
		err := removeTree(l.dir)
		if err == nil {
			return nil
		}
		if attempt >= 6 {
			return failure.Wrap(failure.Setup, err, "removing the lock %s", l.dir)
		}
		time.Sleep(delay) // a retry pace for a handle another process closes within microseconds
		delay *= 2
	}
}
