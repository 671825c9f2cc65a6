package mcpstage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// The layout in a worktree (docs/contract.md, "MCP staging").
const (
	ConfigDir  = ".cursor"
	ConfigFile = "mcp.json"
	StateFile  = ".cursorkit-mcp-state.json"
	LockDir    = ".cursorkit-mcp.lock"
	// DefaultKeyPrefix starts every server key cursorkit stages.
	DefaultKeyPrefix = "cursorkit-tools-"
)

// Lease timing: a lease heartbeats every HeartbeatEvery and is dropped
// when its last heartbeat is older than LeaseTTL (or at once when its
// owner, on this host, is gone).
const (
	HeartbeatEvery = 5 * time.Minute
	LeaseTTL       = 15 * time.Minute
)

// Options configure a Stager. The zero value is cursorkit's own.
type Options struct {
	// KeyPrefix starts the server keys (DefaultKeyPrefix when "").
	KeyPrefix string
	// OwnerPID is the process whose life a lease follows (0: this one):
	// a command-line stage names its caller, which outlives it. A lease
	// whose owner on this host is gone is dropped.
	OwnerPID int
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// fault, set by tests only (export_test.go), is called at every
	// named step of the protocol: a crash test kills the process there.
	fault func(point string)
}

// Stager stages MCP server entries into one worktree's config. Its
// methods may be called from many processes at once: every change is
// made under the worktree's lock and journalled.
type Stager struct {
	opts   Options
	prefix string
	shape  gitShape
	// Paths in the worktree's root.
	cursorDir, configPath, statePath, lockPath string
}

// Lease is one staged entry: its id (for Heartbeat and Release) and the
// server key Cursor sees.
type Lease struct {
	ID  string `json:"lease"`
	Key string `json:"serverKey"`
}

// New returns the Stager of the worktree holding dir: its git shape is
// resolved (a plain repository, a linked worktree, or no git at all).
func New(ctx context.Context, dir string, opts Options) (*Stager, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, failure.Wrap(failure.Input, err, "the directory is unusable")
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return nil, failure.New(failure.Input, "%s is not a directory", abs)
	}
	shape, err := resolveGit(ctx, abs)
	if err != nil {
		return nil, err
	}
	s := &Stager{opts: opts, prefix: opts.KeyPrefix, shape: shape}
	if s.prefix == "" {
		s.prefix = DefaultKeyPrefix
	}
	if err := checkKeyPrefix(s.prefix); err != nil {
		return nil, err
	}
	s.cursorDir = filepath.Join(shape.Root, ConfigDir)
	s.configPath = filepath.Join(s.cursorDir, ConfigFile)
	s.statePath = filepath.Join(s.cursorDir, StateFile)
	s.lockPath = filepath.Join(s.cursorDir, LockDir)
	return s, nil
}

// checkKeyPrefix refuses a prefix that could take an operator's keys for
// cursorkit's: it must be long enough to be distinctive, and plain.
func checkKeyPrefix(p string) error {
	if len(p) < 4 || len(p) > 64 || strings.ContainsFunc(p, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) {
		return failure.New(failure.Input, "the server key prefix %q must be 4 to 64 ASCII letters, digits, '-' or '_'", p)
	}
	return nil
}

// Root is the worktree's root, where .cursor/ is.
func (s *Stager) Root() string { return s.shape.Root }

func (s *Stager) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

func (s *Stager) at(point string) {
	if s.opts.fault != nil {
		s.opts.fault(point)
	}
}

// checkWritable refuses a .cursor/ or config that cursorkit must not
// write through: a symbolic link, or something else than a directory
// (a regular file) in its place.
func (s *Stager) checkWritable() error {
	if info, err := os.Lstat(s.cursorDir); err == nil {
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			return failure.New(failure.Setup, "%s is a symbolic link: cursorkit does not stage through it", s.cursorDir)
		case !info.IsDir():
			return failure.New(failure.Setup, "%s is not a directory", s.cursorDir)
		}
	}
	if info, err := os.Lstat(s.configPath); err == nil && !info.Mode().IsRegular() {
		return failure.New(failure.Setup, "%s is not a regular file (%s): cursorkit does not stage into it", s.configPath, info.Mode().Type())
	}
	return nil
}

// bootstrap is everything before the main lock, which lives in .cursor/:
// the tracked-config refusal, the exclusion block, and .cursor/ itself,
// created if missing. created reports that this call made .cursor/.
func (s *Stager) bootstrap(ctx context.Context) (created bool, err error) {
	if err := s.checkWritable(); err != nil {
		return false, err
	}
	if s.shape.Kind != gitNone {
		rel := filepath.ToSlash(filepath.Join(ConfigDir, ConfigFile))
		tracked, err := isTracked(ctx, s.shape, rel)
		if err != nil {
			return false, err
		}
		if tracked {
			return false, failure.New(failure.Setup, "%s is tracked by git: cursorkit never stages into a committed config (untrack it, or stage elsewhere)", rel)
		}
		if err := addExclusion(ctx, s.shape); err != nil {
			return false, err
		}
		s.at("bootstrap-excluded")
	}
	// EEXIST-safe: whoever's Mkdir succeeds made it.
	switch err := os.Mkdir(s.cursorDir, 0o755); {
	case err == nil:
		created = true
		s.at("bootstrap-created-dir")
	case errors.Is(err, fs.ErrExist):
	default:
		return false, failure.Wrap(failure.Setup, err, "creating %s", s.cursorDir)
	}
	// Looked at again: a link or file put there meanwhile is refused.
	return created, s.checkWritable()
}

// lock takes the worktree's main lock (.cursor/.cursorkit-mcp.lock) and
// sweeps the temporary files a writer killed mid-write left: every write
// of the config and the manifest happens under this lock, so any such
// file now is a dead writer's.
func (s *Stager) lock(ctx context.Context) (*dirLock, error) {
	l, err := acquireDirLock(ctx, s.lockPath, mainLockPolicy(), s.now)
	if err != nil {
		return nil, err
	}
	s.at("locked")
	s.sweepTemporaries()
	return l, nil
}

// sweepTemporaries removes internal/safefile's leftover temporary files of
// the config and the manifest.
func (s *Stager) sweepTemporaries() {
	for _, base := range []string{ConfigFile, StateFile} {
		left, _ := filepath.Glob(filepath.Join(s.cursorDir, "."+base+".*.tmp"))
		for _, f := range left {
			_ = os.Remove(f)
		}
	}
}

// recover brings the journal to a decision against the config's bytes
// now: a pending write that is on disk is promoted, one that is not is
// discarded; bytes matching neither are an operator's edit, latched and
// kept; unparsable bytes quarantine the worktree. It returns the config
// as it is.
func (s *Stager) recover(st *state) (content, error) {
	cur, err := readConfig(s.configPath)
	if err != nil {
		return content{}, err
	}
	switch {
	case st.Pending != nil && cur.same(st.Pending.content):
		st.Confirmed = &confirmed{content: st.Pending.content, Seq: st.Pending.Seq}
	case st.Pending != nil && st.Confirmed != nil && cur.same(st.Confirmed.content):
		// The write never happened: discarded.
	case st.Pending != nil && st.Confirmed == nil && st.Baseline != nil && cur.same(*st.Baseline):
		// The first write never happened.
	case st.Confirmed != nil && st.Pending == nil && cur.same(st.Confirmed.content):
	case st.Confirmed == nil && st.Pending == nil && (st.Baseline == nil || cur.same(*st.Baseline)):
	default:
		// An operator's edit: it becomes the bytes to go back to (the
		// baseline), so the last release leaves the operator's own latest
		// bytes, never an older version over them.
		st.OperatorEdit = true
		seq := int64(0)
		if st.Confirmed != nil {
			seq = st.Confirmed.Seq
		}
		st.Confirmed = &confirmed{content: cur, Seq: seq}
		edited := cur
		st.Baseline = &edited
	}
	st.Pending = nil
	if cur.Present {
		if _, err := ourKeys(cur.Raw, s.prefix); err != nil && st.Quarantine == nil {
			st.Quarantine = &quarantine{Since: s.now(), Reason: oneLine(err.Error())}
		}
	}
	return cur, nil
}

// clearQuarantine lifts the quarantine once the config is gone or is
// valid JSON with none of cursorkit's keys.
func (s *Stager) clearQuarantine(st *state, cur content) {
	if st.Quarantine == nil {
		return
	}
	if !cur.Present {
		st.Quarantine = nil
		return
	}
	if keys, err := ourKeys(cur.Raw, s.prefix); err == nil && len(keys) == 0 {
		st.Quarantine = nil
	}
}

// quarantineError is what staging into a quarantined worktree returns.
func (s *Stager) quarantineError(st *state) error {
	return failure.New(failure.Setup, "%s is quarantined since %s (%s): cursorkit writes no config here. To recover: repair the JSON and remove every %s* server, or delete the file; then run `cursorkit mcp reconcile --cwd %s`",
		s.configPath, st.Quarantine.Since.UTC().Format(time.RFC3339), st.Quarantine.Reason, s.prefix, s.shape.Root)
}

// dropDead removes leases whose owner on this host is gone, or whose
// heartbeat is older than LeaseTTL. It returns the ids dropped.
func (s *Stager) dropDead(ctx context.Context, st *state) []string {
	host, _ := os.Hostname()
	var dropped []string
	for id, l := range st.Leases {
		dead := s.now().Sub(l.HeartbeatAt) > LeaseTTL
		if !dead && l.Owner.Hostname == host {
			alive, err := procid.Identity{PID: l.Owner.PID, Created: l.Owner.Created}.Alive(ctx)
			dead = err == nil && !alive
		}
		if dead {
			delete(st.Leases, id)
			dropped = append(dropped, id)
		}
	}
	slices.Sort(dropped)
	return dropped
}

// entries are the live leases' entries, oldest lease first (then by key),
// so the composed bytes do not depend on map order.
func entries(st *state) []keyedEntry {
	ls := make([]*leaseRecord, 0, len(st.Leases))
	for _, l := range st.Leases {
		ls = append(ls, l)
	}
	slices.SortFunc(ls, func(a, b *leaseRecord) int {
		if c := a.AcquiredAt.Compare(b.AcquiredAt); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	out := make([]keyedEntry, 0, len(ls))
	for _, l := range ls {
		out = append(out, keyedEntry{Key: l.Key, Entry: l.Entry})
	}
	return out
}

// errRaced: the config changed between the read a change was decided on
// and the write (an operator's save, which takes no lock).
var errRaced = errors.New("the config changed while cursorkit was writing it")

// mutate journals next, replaces the config with it (or removes it), and
// promotes the journal record: a crash at any point leaves bytes that
// recover tells apart. The config is read again right before it is
// replaced: bytes other than was (an operator saved meanwhile) are
// errRaced and nothing is replaced, so an operator's edit is never
// overwritten by a change decided on older bytes (the window left is the
// rename itself).
func (s *Stager) mutate(st *state, kind string, was, next content) error {
	seq := int64(1)
	if st.Confirmed != nil {
		seq = st.Confirmed.Seq + 1
	}
	st.Pending = &pending{Kind: kind, content: next, Seq: seq}
	if err := writeState(s.statePath, st); err != nil {
		return err
	}
	s.at("journalled")
	if now, err := readConfig(s.configPath); err != nil {
		return err
	} else if !now.same(was) {
		return errRaced
	}
	if next.Present {
		if err := safefile.Write(s.configPath, next.Raw, 0o600); err != nil {
			return failure.Wrap(failure.Setup, err, "writing %s", s.configPath)
		}
	} else if err := os.Remove(s.configPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return failure.Wrap(failure.Setup, err, "removing %s", s.configPath)
	}
	s.at("replaced")
	st.Confirmed, st.Pending = &confirmed{content: next, Seq: seq}, nil
	if err := writeState(s.statePath, st); err != nil {
		return err
	}
	s.at("promoted")
	return nil
}

// sync makes the config hold exactly the live leases' entries over the
// operator's content, writing only when the bytes differ. With no lease
// left it puts the baseline back: the config as it was before cursorkit,
// or the operator's latest edit; an edit that kept cursorkit's keys has
// them stripped (the only case the operator's bytes are re-laid out).
func (s *Stager) sync(st *state, cur content) error {
	for attempt := 1; ; attempt++ {
		err := s.syncOnce(st, cur)
		if !errors.Is(err, errRaced) {
			return err
		}
		if attempt == maxRaces {
			return failure.Wrap(failure.Resource, err, "%s kept changing while cursorkit wrote it; try again", s.configPath)
		}
		// The operator's new bytes are read (and latched) and the change
		// decided again on them.
		if cur, err = s.recover(st); err != nil {
			return err
		}
	}
}

// maxRaces bounds the retries of a change an operator's saves keep
// overtaking.
const maxRaces = 5

// caughtUpLater is a heartbeat's or a release's view of a sync error: a
// config an operator kept saving over is not a failure of the lease
// change, which the manifest already holds (its journal record stays, and
// the next locked step writes the config); every other error is.
func caughtUpLater(err error) error {
	if errors.Is(err, errRaced) {
		return nil
	}
	return err
}

func (s *Stager) syncOnce(st *state, cur content) error {
	if st.Quarantine != nil {
		return nil
	}
	es := entries(st)
	if len(es) == 0 {
		if st.Baseline == nil {
			return nil // nothing was ever written here
		}
		target := *st.Baseline
		if target.Present {
			keys, err := ourKeys(target.Raw, s.prefix)
			if err != nil {
				return err
			}
			if len(keys) > 0 {
				out, err := compose(target.Raw, s.prefix, nil)
				if err != nil {
					return err
				}
				target = content{Present: true, Raw: out}
			}
		}
		if cur.same(target) {
			return nil
		}
		kind := kindRestore
		if !target.Present {
			kind = kindDelete
		}
		return s.mutate(st, kind, cur, target)
	}
	var base []byte
	if cur.Present {
		base = cur.Raw
	}
	out, err := compose(base, s.prefix, es)
	if err != nil {
		return err
	}
	next := content{Present: true, Raw: out}
	if cur.same(next) {
		return nil
	}
	return s.mutate(st, kindWrite, cur, next)
}

// Stage adds entry to the worktree's config under a new lease and
// returns it. The caller heartbeats it (HeartbeatEvery) and releases it.
func (s *Stager) Stage(ctx context.Context, entry Entry) (Lease, error) {
	if err := checkEntry(entry); err != nil {
		return Lease{}, err
	}
	pid := s.opts.OwnerPID
	if pid == 0 {
		pid = os.Getpid()
	}
	self, err := procid.Of(ctx, pid)
	if err != nil {
		return Lease{}, failure.Wrap(failure.Input, err, "the lease's owner process %d", pid)
	}
	host, _ := os.Hostname()
	created, err := s.bootstrap(ctx)
	if err != nil {
		return Lease{}, err
	}
	l, err := s.lock(ctx)
	if err != nil {
		return Lease{}, err
	}
	defer l.release()
	// A last release may have removed the exclusion line between this
	// bootstrap and the lock (its removal is the last thing it does in the
	// lock): looked at again, and put back, inside the lock.
	if s.shape.Kind != gitNone {
		if ok, err := hasExclusion(s.shape); err != nil {
			return Lease{}, err
		} else if !ok {
			if err := addExclusion(ctx, s.shape); err != nil {
				return Lease{}, err
			}
		}
	}
	st, err := readState(s.statePath)
	if err != nil {
		return Lease{}, err
	}
	if st == nil {
		st = &state{Version: stateVersion, Leases: map[string]*leaseRecord{}}
	}
	st.CreatedDir = st.CreatedDir || created
	cur, err := s.recover(st)
	if err != nil {
		return Lease{}, err
	}
	s.clearQuarantine(st, cur)
	if st.Quarantine != nil {
		if err := writeState(s.statePath, st); err != nil {
			return Lease{}, err
		}
		return Lease{}, s.quarantineError(st)
	}
	s.dropDead(ctx, st)
	if st.Baseline == nil {
		// Stored before any config byte is written: in the same manifest
		// write as the first journal record (mutate), or here when no
		// write follows.
		base := cur
		st.Baseline = &base
		s.at("baseline")
	}
	id := newID()
	now := s.now()
	lease := Lease{ID: id, Key: s.prefix + id}
	st.Leases[id] = &leaseRecord{Key: lease.Key, Entry: entry, AcquiredAt: now, HeartbeatAt: now,
		Owner: LeaseOwner{PID: self.PID, Created: self.Created, Hostname: host}}
	if err := s.sync(st, cur); err != nil {
		// Not staged: the lease must not linger in the manifest (a
		// journalled write that never happened is discarded by the next
		// recovery either way).
		delete(st.Leases, id)
		_ = writeState(s.statePath, st)
		return Lease{}, err
	}
	return lease, nil
}

// newID is a random UUID (version 4), the lease id and the key's tail.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// withState runs fn under the main lock on the recovered state; a
// worktree without .cursor/ or without a state has nothing to do (fn is
// not called, ok is false).
func (s *Stager) withState(ctx context.Context, try bool, fn func(st *state, cur content) error) (ok bool, err error) {
	if err := s.checkWritable(); err != nil {
		return false, err
	}
	if _, err := os.Lstat(s.cursorDir); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	var l *dirLock
	if try {
		l, err = tryDirLock(s.lockPath, s.now)
	} else {
		l, err = s.lock(ctx)
	}
	if err != nil {
		return false, err
	}
	released := false
	release := func() error {
		if released {
			return nil
		}
		released = true
		return l.release()
	}
	defer release()
	st, err := readState(s.statePath)
	if err != nil || st == nil {
		return false, err
	}
	cur, err := s.recover(st)
	if err != nil {
		return true, err
	}
	s.clearQuarantine(st, cur)
	if err := fn(st, cur); err != nil {
		return true, err
	}
	// A change an operator's saves kept overtaking leaves its journal
	// record: the state is kept (never the last cleanup) and the next
	// locked step brings the config up to date.
	if len(st.Leases) > 0 || st.Quarantine != nil || st.Pending != nil {
		return true, writeState(s.statePath, st)
	}
	return true, s.finish(ctx, st, release, try)
}

// finish is the last cleanup, under the main lock with no lease left and
// no quarantine: the config is already back (sync), the state goes, the
// exclusion block is the last removal in the lock, the lock is released
// at once, and only then the non-recursive rmdir of a .cursor/ cursorkit
// created (removeCreatedDir: it waits out a peer's lock step). A failed
// rmdir (an operator file, a peer that staged anew) is left as it is. try (the exit backstop) never waits for the
// bootstrap lock: the exclusion then stays for reconcile.
func (s *Stager) finish(ctx context.Context, st *state, release func() error, try bool) error {
	if err := os.Remove(s.statePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return failure.Wrap(failure.Setup, err, "removing the staging state")
	}
	s.at("state-removed")
	// The lease is released once the state is gone: an exclusion line
	// that cannot be removed now (the bootstrap lock busy) is left to a
	// later reconcile, which removes a line without a state.
	if s.shape.Kind != gitNone && !try {
		if _, err := removeExclusion(ctx, s.shape); err == nil {
			s.at("unexcluded")
		}
	}
	if err := release(); err != nil {
		return err
	}
	s.at("unlocked")
	if st.CreatedDir {
		s.removeCreatedDir(ctx, try)
	}
	return nil
}

// peerStepWait bounds how long the last release waits for a peer's lock
// to leave .cursor/: a peer's locked step is one journal step
// (milliseconds, mainLockPolicy), and retryGap paces the tries.
const (
	peerStepWait = time.Second
	retryGap     = 5 * time.Millisecond
)

// removeCreatedDir removes the .cursor/ cursorkit created, non-recursively:
// only an empty one goes. A peer that took the main lock just after the
// last release let it go (a heartbeat or release that will find nothing
// staged) keeps .cursor/ from being empty for its step, and then nobody
// would remove .cursor/: while the peer's lock is all there is in it (or
// nothing, its step over), the rmdir is tried again, for at most
// peerStepWait (never with try, which must not wait). Anything else in
// .cursor/ (an operator's file, a peer that staged anew) leaves it where
// it is.
func (s *Stager) removeCreatedDir(ctx context.Context, try bool) {
	limit := time.Now().Add(peerStepWait)
	for {
		err := os.Remove(s.cursorDir)
		if err == nil || errors.Is(err, fs.ErrNotExist) || try {
			return
		}
		s.at("cursor-dir-kept")
		if !s.onlyALock() || ctx.Err() != nil || time.Now().After(limit) {
			return
		}
		s.at("cursor-dir-locked")
		time.Sleep(retryGap) // a retry pace: the peer's step ends by itself
	}
}

// onlyALock reports whether .cursor/ holds nothing but the main lock's
// directory. An empty .cursor/ counts: the peer's step that made the rmdir
// fail may have ended before this look.
func (s *Stager) onlyALock() bool {
	entries, err := os.ReadDir(s.cursorDir)
	return err == nil && (len(entries) == 0 || len(entries) == 1 && entries[0].Name() == LockDir)
}

// Heartbeat renews lease id. An unknown lease (released, or dropped as
// dead) is failure.Input: its entry is no longer staged.
func (s *Stager) Heartbeat(ctx context.Context, id string) error {
	ok, err := s.withState(ctx, false, func(st *state, cur content) error {
		l := st.Leases[id]
		if l == nil {
			return failure.New(failure.Input, "no lease %s in %s", quote(id), s.shape.Root)
		}
		l.HeartbeatAt = s.now()
		s.dropDead(ctx, st)
		return caughtUpLater(s.sync(st, cur))
	})
	if err == nil && !ok {
		err = failure.New(failure.Input, "no lease %s in %s", quote(id), s.shape.Root)
	}
	return err
}

// Release removes lease id's entry; the last release puts the config back
// as it was (or, after an operator's edit, leaves the operator's content
// without cursorkit's keys) and removes everything cursorkit made.
func (s *Stager) Release(ctx context.Context, id string) error {
	return s.release(ctx, id, false)
}

// ReleaseOnExit is the process-exit backstop for lease id: one attempt at
// the main lock, never waiting, never taking over a stale lock, never
// bootstrapping, and never writing while a peer holds the lock (it then
// returns the resource error and leaves the lease to reconcile, which
// drops it once this process is gone).
func (s *Stager) ReleaseOnExit(id string) error {
	return s.release(context.Background(), id, true)
}

func (s *Stager) release(ctx context.Context, id string, try bool) error {
	ok, err := s.withState(ctx, try, func(st *state, cur content) error {
		if st.Leases[id] == nil {
			return failure.New(failure.Input, "no lease %s in %s", quote(id), s.shape.Root)
		}
		delete(st.Leases, id)
		s.dropDead(ctx, st)
		return caughtUpLater(s.sync(st, cur))
	})
	if err == nil && !ok {
		err = failure.New(failure.Input, "no lease %s in %s", quote(id), s.shape.Root)
	}
	return err
}

// Report is what a reconcile did.
type Report struct {
	// Dropped are the leases removed as dead.
	Dropped []string `json:"dropped"`
	// Quarantined: the worktree stays quarantined.
	Quarantined bool `json:"quarantined"`
	// Cleaned: no lease was left and everything cursorkit made is gone.
	Cleaned bool `json:"cleaned"`
	// Unexcluded: an exclusion line without any state was removed.
	Unexcluded bool `json:"unexcluded"`
}

// Reconcile is the crash-recovery owner: it settles the journal, latches
// operator edits, lifts or keeps the quarantine, drops dead leases,
// rewrites the config to the live leases, and with none left cleans up
// as the last release would; an exclusion line left without any state
// (a crash after the state went) is removed.
func (s *Stager) Reconcile(ctx context.Context) (Report, error) {
	var r Report
	ok, err := s.withState(ctx, false, func(st *state, cur content) error {
		r.Dropped = s.dropDead(ctx, st)
		if err := s.sync(st, cur); err != nil {
			return err
		}
		r.Quarantined = st.Quarantine != nil
		r.Cleaned = len(st.Leases) == 0 && st.Quarantine == nil
		return nil
	})
	if err != nil || ok {
		return r, err
	}
	// No state: nothing is staged here; a leftover exclusion line goes.
	r.Cleaned = true
	if s.shape.Kind != gitNone {
		removed, err := removeExclusion(ctx, s.shape)
		if err != nil {
			return r, err
		}
		r.Unexcluded = removed
	}
	return r, nil
}

// quote bounds an id quoted in an error.
func quote(id string) string {
	if len(id) > 80 {
		id = id[:80] + "…"
	}
	return fmt.Sprintf("%q", id)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
