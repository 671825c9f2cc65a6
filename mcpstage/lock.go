package mcpstage

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
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
// The owner file is put in place by a move that never replaces a name
// (placeNew): of the processes that write one into a directory (its maker,
// and reclaimers of a stale or ownerless lock) exactly one holds it.

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

// lockPolicy is how long a contender waits and when it may reclaim.
type lockPolicy struct {
	// TTL bounds a critical section: an owner that acquired the lock
	// longer ago, or a directory without an owner file that has not
	// changed for longer, may be reclaimed.
	TTL time.Duration
	// Wait is how long a contender keeps trying while the lock does not
	// change hands (one holder, or no owner file, or one it cannot read).
	// Each change of hands starts it afresh, so a queue that moves never
	// fails its tail as busy however long it is: only the caller's
	// context bounds a wait in all (Run's releases: ReleaseTimeout).
	Wait time.Duration
	// The waits between tries are random, up to FirstGap at first and
	// doubling up to MaxGap: contenders that collided spread out, and a
	// long queue polls (and asks the OS about the owner) rarely.
	FirstGap, MaxGap time.Duration
}

// mainLockPolicy is the main lock's: its critical sections are one
// journal step each (milliseconds; up to a second on a loaded machine's
// slow disk), so one holder for 10 s is stuck (its contenders fail) and
// for 30 s stuck or gone (it may be reclaimed).
func mainLockPolicy() lockPolicy {
	return lockPolicy{TTL: 30 * time.Second, Wait: 10 * time.Second, FirstGap: 2 * time.Millisecond, MaxGap: 50 * time.Millisecond}
}

// bootstrapLockPolicy is the bootstrap lock's: one info/exclude rewrite,
// only when a worktree's line is missing or goes.
func bootstrapLockPolicy() lockPolicy {
	return lockPolicy{TTL: 10 * time.Second, Wait: 5 * time.Second, FirstGap: 2 * time.Millisecond, MaxGap: 20 * time.Millisecond}
}

// lockOwner is the content of a lock's owner file.
type lockOwner struct {
	PID      int       `json:"pid"`
	Created  time.Time `json:"created"` // process creation time (procid), zero if unknown
	Hostname string    `json:"hostname"`
	Acquired time.Time `json:"acquiredAt"`
	// Token is random for each holding: a clock that stands still or
	// ticks coarsely (Options.Now) must not make two holdings by one
	// process look like one. An owner file without one is still read.
	Token string `json:"token,omitempty"`
}

// same reports whether o and other record the same holding, even one
// reclaimed by its own process.
func (o lockOwner) same(other lockOwner) bool {
	return o.PID == other.PID && o.Acquired.Equal(other.Acquired) && o.Hostname == other.Hostname && o.Token == other.Token
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
// trying with random gaps between tries until the lock has not changed
// hands for p.Wait (on the real clock) or ctx is done, reclaiming a stale
// or ownerless lock. Errors: failure.Resource when the lock stays with one
// holder, without an owner file, or with one cursorkit cannot read (the
// error says which), failure.Setup when dir cannot be a lock (missing
// parent, not a directory, no permission), failure.Cancelled.
func acquireDirLock(ctx context.Context, dir string, p lockPolicy, now func() time.Time) (*dirLock, error) {
	me := whoAmI()
	var holder lockOwner // the last one seen; zero: none, or no owner file
	deadline := time.Now().Add(p.Wait)
	ceiling := p.FirstGap
	for {
		if err := ctx.Err(); err != nil {
			return nil, failure.Wrap(failure.Cancelled, err, "taking the lock %s cancelled", dir)
		}
		l, seen, err := tryLock(ctx, dir, me, now, &p)
		if err == nil || !failure.Is(err, failure.Resource) {
			return l, err
		}
		if !seen.same(holder) {
			holder, deadline = seen, time.Now().Add(p.Wait)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, failure.Wrap(failure.Cancelled, context.Cause(ctx), "taking the lock %s cancelled", dir)
		case <-time.After(min(gap(ceiling), left)):
		}
		ceiling = min(2*ceiling, p.MaxGap)
	}
}

// gap returns a random wait in [ceiling/2, ceiling]: contenders that
// collided once should not retry in lockstep.
func gap(ceiling time.Duration) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	return ceiling/2 + mathrand.N(ceiling/2+1)
}

// tryDirLock makes one attempt at dir and never reclaims, for the
// process-exit backstop. Errors as acquireDirLock's.
func tryDirLock(dir string, now func() time.Time) (*dirLock, error) {
	l, _, err := tryLock(context.Background(), dir, whoAmI(), now, nil)
	return l, err
}

// whoAmI is this process as an owner file names it, the acquisition time
// left to own: read before the lock is taken, as it asks the OS.
func whoAmI() lockOwner {
	o := lockOwner{PID: os.Getpid()}
	// Without a creation time the owner is judged by its PID alone (see
	// stale), which is still right unless the PID was reused.
	if self, err := procid.Self(); err == nil {
		o.Created = self.Created
	}
	// Without a hostname no contender ever takes the owner for dead on its
	// own host; the TTL still frees the lock.
	o.Hostname, _ = os.Hostname()
	return o
}

// tryLock is one attempt by me: mkdir, else a look at the owner, reclaimed
// if stale unless p is nil (tryDirLock). When it fails, holder is the
// owner its last look found (zero for none, or none readable).
func tryLock(ctx context.Context, dir string, me lockOwner, now func() time.Time, p *lockPolicy) (*dirLock, lockOwner, error) {
	var holder lockOwner
	var busy error
	for range maxPasses {
		holder = lockOwner{}
		err := os.Mkdir(dir, 0o700)
		switch {
		case err == nil:
			if l, err := own(dir, me, now); l != nil || err != nil {
				return l, lockOwner{}, err
			}
			// A reclaimer of an ownerless lock overtook this mkdir: it
			// judged an older directory at this path, and holds this one.
			busy = failure.New(failure.Resource, "the lock %s changed hands repeatedly", dir)
			continue
		case errors.Is(err, fs.ErrNotExist):
			return nil, lockOwner{}, failure.Wrap(failure.Setup, err, "cannot make the lock %s: its parent directory does not exist", dir)
		case !errors.Is(err, fs.ErrExist):
			return nil, lockOwner{}, failure.Wrap(failure.Setup, err, "cannot make the lock %s", dir)
		}
		ins, err := inspect(dir)
		switch {
		case err != nil:
			return nil, lockOwner{}, err
		case ins.vanished:
			busy = failure.New(failure.Resource, "the lock %s changed hands repeatedly", dir)
			continue
		case ins.ownerless:
			// Between a contender's mkdir and its owner file there is none
			// yet; a kill there, or in a release, leaves none for good. The
			// directory changes whenever anything is made, renamed or
			// removed in it, so its age bounds how long it has been so.
			age := max(now().Sub(ins.changed), 0).Round(time.Millisecond)
			if p == nil {
				return nil, lockOwner{}, failure.New(failure.Resource, "the lock %s has no owner file (unchanged for %s)", dir, age)
			}
			if age <= p.TTL {
				return nil, lockOwner{}, failure.New(failure.Resource, "the lock %s has no owner file (unchanged for %s; it may be reclaimed after %s)", dir, age, p.TTL)
			}
			if l, err := own(dir, me, now); l != nil || err != nil {
				return l, lockOwner{}, err
			}
			busy = failure.New(failure.Resource, "the lock %s had no owner file for %s, but another process reclaimed it", dir, age)
			continue
		case !ins.ok:
			// Never stolen, however old: a directory with something else
			// in it than an owner file of ours is not one of ours.
			return nil, lockOwner{}, failure.New(failure.Resource, "the lock %s has no owner file cursorkit can read: if no cursorkit process uses this worktree, remove it", dir)
		}
		holder = ins.owner
		t := now()
		if p == nil {
			return nil, holder, failure.New(failure.Resource, "the lock %s is held by %s", dir, ins.owner.describe(t))
		}
		why, err := stale(ctx, ins.owner, p.TTL, t)
		if err != nil {
			return nil, holder, err
		}
		if why == "" {
			return nil, holder, failure.New(failure.Resource, "the lock %s is held by %s (it may be reclaimed when its process is gone or after %s)", dir, ins.owner.describe(t), p.TTL)
		}
		if l, err := reclaim(dir, ins.raw, me, now); l != nil || err != nil {
			return l, lockOwner{}, err
		}
		busy = failure.New(failure.Resource, "the lock %s is held by %s, who %s, but another process is reclaiming it", dir, ins.owner.describe(t), why)
	}
	return nil, holder, busy
}

// own puts me's owner file into dir, made or reclaimed by this process.
// A nil lock and error: another process put its owner file there first
// (or removed the directory), so this one holds nothing.
func own(dir string, me lockOwner, now func() time.Time) (*dirLock, error) {
	me.Acquired, me.Token = now().UTC(), rand.Text()
	data, err := json.Marshal(me)
	published := false
	if err == nil {
		published, err = writeOwner(dir, append(data, '\n'))
	}
	if err != nil {
		// No owner file of ours: an empty directory goes at once rather
		// than waiting out the TTL (an rmdir never takes a peer's owner
		// file with it).
		_ = os.Remove(dir)
		return nil, failure.Wrap(failure.Setup, err, "writing the owner file of the lock %s", dir)
	}
	if !published {
		return nil, nil
	}
	return &dirLock{dir: dir, owner: me}, nil
}

// inspection is what a look inside a lock directory found.
type inspection struct {
	vanished  bool      // the directory is gone: mkdir again
	ownerless bool      // no owner file,
	changed   time.Time // and the directory's modification time
	ok        bool      // a valid owner file
	owner     lockOwner // when ok
	raw       []byte    // the owner file's bytes, when ok
}

// inspect reads the owner of the lock directory dir. failure.Setup for a
// dir that is not a directory (a symbolic link is never followed) or
// cannot be read.
func inspect(dir string) (inspection, error) {
	info, vanished, err := lstatLock(dir)
	switch {
	case err != nil || vanished:
		return inspection{vanished: vanished}, err
	case !info.IsDir():
		return inspection{}, failure.New(failure.Setup, "the lock %s is not a directory (%s): remove it", dir, info.Mode().Type())
	}
	raw, err := safefile.Read(filepath.Join(dir, ownerFile), maxOwnerBytes)
	if errors.Is(err, fs.ErrNotExist) { // no owner file, or no directory any more
		// Looked at after the read: an owner file made since changed it.
		info, vanished, err := lstatLock(dir)
		if err != nil || vanished {
			return inspection{vanished: vanished}, err
		}
		return inspection{ownerless: true, changed: info.ModTime()}, nil
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

// lstatLock is os.Lstat of the lock directory dir: vanished when it is
// gone, failure.Setup when it cannot be looked at.
func lstatLock(dir string) (info fs.FileInfo, vanished bool, err error) {
	info, err = os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, true, nil
	case err != nil:
		return nil, false, failure.Wrap(failure.Setup, err, "cannot inspect the lock %s", dir)
	}
	return info, false, nil
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
// The claimer checks the claimed file is the one it judged stale, puts its
// own owner file in place and drops the claim. A directory without an
// owner file is reclaimed only once unchanged for the TTL, which the
// claim's rename just reset, and an owner file is only ever put in place
// without replacing one (placeNew), so whoever got one in first holds the
// lock. A nil lock and error leave the
// next pass to decide (the file, if any, put back).
//
// Renaming the directory itself to a tombstone would not do: a reclaimer
// overtaken between its read and its rename by another that reclaimed the
// same owner and took the lock afresh would move that fresh lock, and
// both would hold it. The owner file pins its directory; a path does not.
func reclaim(dir string, raw []byte, me lockOwner, now func() time.Time) (*dirLock, error) {
	claimed, ok := claim(dir, "reclaim")
	if !ok {
		return nil, nil
	}
	if got, err := safefile.Read(claimed, maxOwnerBytes); err != nil || !bytes.Equal(got, raw) {
		unclaim(dir, claimed)
		return nil, nil
	}
	// The stale owner's file goes, whoever holds the lock next. One that
	// cannot be removed now is harmless: release removes everything in
	// the directory.
	_ = os.Remove(claimed)
	return own(dir, me, now)
}

// claim renames the owner file of dir to a unique name beside it; false
// when that failed (no owner file).
func claim(dir, why string) (string, bool) {
	claimed := filepath.Join(dir, ownerFile+"."+why+"-"+rand.Text())
	if err := os.Rename(filepath.Join(dir, ownerFile), claimed); err != nil {
		return "", false
	}
	return claimed, true
}

// unclaim puts a claimed owner file back. Nothing writes a new owner file
// meanwhile: only a mkdir winner does, into the directory it made, or a
// reclaimer of a directory unchanged for the TTL, which the claim's rename
// just changed. Should the rename fail, the lock is left without an owner
// file, reclaimed once the TTL has passed.
func unclaim(dir, claimed string) {
	_ = os.Rename(claimed, filepath.Join(dir, ownerFile))
}

// writeOwner puts the owner file in place whole unless dir has one
// (published false): a temporary file, moved to the owner file's name by
// placeNew, which never replaces a name. A kill before that leaves no
// owner file, which the lock's rules cover; the temporary file goes with
// the directory. Where placeNew fails otherwise (a file system without
// hard links, FAT or some network shares; on Windows a sharing
// violation) the owner file is renamed into place when it has none yet,
// which leaves two reclaimers of one ownerless lock a moment to both take
// it there. The file is not synced to the disk: a lock lives for
// milliseconds and means nothing after a reboot.
func writeOwner(dir string, data []byte) (published bool, err error) {
	tmp, err := os.CreateTemp(dir, "."+ownerFile+".*.tmp")
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // the directory went: a releaser's, in the end
	}
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	target := filepath.Join(dir, ownerFile)
	switch err := placeNew(tmp.Name(), target); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil // another writer's owner file won
	}
	if _, serr := os.Lstat(dir); errors.Is(serr, fs.ErrNotExist) {
		return false, nil // the directory went: a releaser's, in the end
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return false, err
	}
	return true, nil
}

// removeLockDir removes the lock directory dir, released, with everything
// in it (the claimed owner file, temporary files a kill left) but an owner
// file: a reclaimer that judged the directory ownerless long before may
// have put its own in since the release's claim, and holds the lock
// then. A dir already gone is removed.
func removeLockDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range entries {
		if e.Name() != ownerFile {
			errs = append(errs, safefile.RemoveAll(filepath.Join(dir, e.Name())))
		}
	}
	err = os.Remove(dir)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, serr := os.Lstat(filepath.Join(dir, ownerFile)); serr == nil {
		return nil // the reclaimer's lock now
	}
	return errors.Join(append(errs, err)...)
}

// release gives the lock up: it claims the owner file (as a reclaimer
// does, so a concurrent reclaim and this release cannot both act on it),
// then removes the directory (removeLockDir); one already gone is
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
	// The removal is retried a few times: Windows keeps a deleted file's
	// name until the last handle to it closes, so a contender that was
	// reading the owner file makes the directory look non-empty for a
	// moment.
	delay := time.Millisecond
	for attempt := 0; ; attempt++ {
		err := removeLockDir(l.dir)
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
