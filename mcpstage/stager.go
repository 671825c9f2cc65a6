package mcpstage

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
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

	DefaultKeyPrefix = "cursorkit-tools-" // starts every server key cursorkit stages
)

// A lease heartbeats every HeartbeatEvery and is dropped when its last
// heartbeat is older than LeaseTTL (at once when its owner here is gone).
const (
	HeartbeatEvery = 5 * time.Minute
	LeaseTTL       = 15 * time.Minute
)

// Options configure a Stager. The zero value is cursorkit's own.
type Options struct {
	KeyPrefix string // starts the server keys (DefaultKeyPrefix when "")
	// OwnerPID is the process whose life a lease follows (0: this one):
	// a command-line stage names its caller's job (CallerOwner), which
	// outlives it.
	OwnerPID int
	Now      func() time.Time // the clock (nil: time.Now)
	// fault, set by tests only (export_test.go), is called at every
	// named step of the protocol.
	fault func(point string)
}

// Stager stages MCP server entries into one worktree's config. Its
// methods may be called from many processes at once: every change is
// made under the worktree's lock and journalled.
type Stager struct {
	opts   Options
	prefix string
	shape  gitShape

	cursorDir, configPath, statePath, lockPath string
}

// Lease is one staged entry: its id (for Heartbeat and Release) and the
// server key Cursor sees.
type Lease struct {
	ID  string `json:"lease"`
	Key string `json:"serverKey"`
}

// New returns the Stager of the worktree holding dir (a plain repository,
// a linked worktree, or no git at all).
func New(ctx context.Context, dir string, opts Options) (*Stager, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, failure.Wrap(failure.Input, err, "the directory is unusable")
	}
	if info, err := os.Stat(abs); err != nil || !info.IsDir() {
		return nil, failure.New(failure.Input, "%s is not a directory", abs)
	}
	shape, err := resolveGit(ctx, nil, runtime.GOOS, abs)
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Stager{opts: opts, prefix: cmp.Or(opts.KeyPrefix, DefaultKeyPrefix), shape: shape}
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

func (s *Stager) at(point string) {
	if s.opts.fault != nil {
		s.opts.fault(point)
	}
}

// checkWritable refuses a .cursor/ or config that is a symbolic link, or
// something else than a directory (a regular file).
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
		return notRegular(s.configPath, info)
	}
	return nil
}

// bootstrap is everything before the main lock, which lives in .cursor/:
// the tracked-config refusal, the exclusion block, and .cursor/ (created
// reports that this call made it).
func (s *Stager) bootstrap(ctx context.Context) (created bool, err error) {
	if err := s.checkWritable(); err != nil {
		return false, err
	}
	if s.shape.Kind != gitNone {
		rel := filepath.ToSlash(filepath.Join(ConfigDir, ConfigFile))
		tracked, err := isTracked(ctx, nil, runtime.GOOS, s.shape, rel)
		if err != nil {
			return false, err
		}
		if tracked {
			return false, failure.New(failure.Setup, "%s is tracked by git: cursorkit never stages into a committed config (untrack it, or stage elsewhere)", rel)
		}
		if err := ensureExclusion(ctx, s.shape); err != nil {
			return false, err
		}
		s.at("bootstrap-excluded")
	}
	made := false
	if s.shape.Kind == gitNone {
		made, err = s.mkdirCursorDir()
		created = made
	} else {
		// created stays false: the exclusion block is the record.
		made, err = s.makeMarkedCursorDir(ctx)
	}
	if err != nil {
		return false, err
	}
	if made {
		s.at("bootstrap-created-dir")
	}
	// Looked at again: a link or file put there meanwhile is refused.
	return created, s.checkWritable()
}

// mkdirCursorDir makes .cursor/ unless it exists; created reports that
// this call made it (EEXIST-safe: whoever's mkdir succeeds made it).
func (s *Stager) mkdirCursorDir() (created bool, err error) {
	switch err := os.Mkdir(s.cursorDir, 0o755); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	default:
		return false, failure.Wrap(failure.Setup, err, "creating %s", s.cursorDir)
	}
}

// makeMarkedCursorDir makes .cursor/ in git unless it exists (made: this
// call made it), under the bootstrap lock, its "made" line (and worktree
// line) written first, so that the record of who made it lives outside it
// from before it exists.
// A .cursor/ made meanwhile by someone else (an operator: peers make it
// under this lock) takes the line away again.
func (s *Stager) makeMarkedCursorDir(ctx context.Context) (made bool, err error) {
	if _, err := os.Lstat(s.cursorDir); !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	err = withExcludeLock(ctx, s.shape, func(x lockedExclude) error {
		if _, err := os.Lstat(s.cursorDir); !errors.Is(err, fs.ErrNotExist) {
			return nil // a peer made it while this one waited
		}
		if err := x.edit(markMade(s.shape.Root)); err != nil {
			return err
		}
		s.at("bootstrap-marked")
		made, err = s.mkdirCursorDir()
		if err != nil || !made {
			// A line left without its directory goes at the next cleanup.
			return errors.Join(err, x.edit(unmarkMade(s.shape.Root)))
		}
		return nil
	})
	return made, err
}

// bootstrapTries bounds how often a stage bootstraps again after the
// .cursor/ it found or made went before its lock: each time, a last
// release or a reconcile removed it while it was empty.
const bootstrapTries = 3

// bootstrapAndLock is a stage's way into the main lock: bootstrap, the
// dead owners judged (goneOwners), the lock, and all of it again when the
// lock's directory vanished meanwhile. created is bootstrap's.
func (s *Stager) bootstrapAndLock(ctx context.Context) (created bool, gone []LeaseOwner, l *dirLock, err error) {
	for try := 1; ; try++ {
		made, err := s.bootstrap(ctx)
		if err != nil {
			return false, nil, nil, err
		}
		created = created || made
		gone = s.goneOwners(ctx)
		l, err = s.lock(ctx)
		if err == nil || try == bootstrapTries || isDir(s.cursorDir) {
			return created, gone, l, err
		}
		s.at("cursor-dir-vanished")
	}
}

// lock takes the worktree's main lock and sweeps internal/safefile's
// temporary files of the config and the manifest: every write of them
// happens under this lock, so any such file now is a dead writer's.
func (s *Stager) lock(ctx context.Context) (*dirLock, error) {
	l, err := acquireDirLock(ctx, s.lockPath, mainLockPolicy(), s.opts.Now)
	if err != nil {
		return nil, err
	}
	s.at("locked")
	for _, base := range []string{ConfigFile, StateFile} {
		left, _ := filepath.Glob(filepath.Join(s.cursorDir, "."+base+".*.tmp"))
		for _, f := range left {
			_ = os.Remove(f)
		}
	}
	return l, nil
}

// lockOrTry takes the main lock, or with try makes the one attempt of
// the exit backstop (never waiting nor taking over).
func (s *Stager) lockOrTry(ctx context.Context, try bool) (*dirLock, error) {
	if try {
		return tryDirLock(s.lockPath, s.opts.Now)
	}
	return s.lock(ctx)
}

// recover brings the journal to a decision against the config's bytes
// now: a pending write that is on disk is promoted, one that is not is
// discarded; bytes matching neither are an operator's edit, latched and
// kept; unparsable bytes quarantine the worktree. It returns the config.
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
		// An operator's edit becomes the baseline, so the last release
		// leaves the operator's latest bytes, never an older version.
		st.OperatorEdit = true
		seq := int64(0)
		if st.Confirmed != nil {
			seq = st.Confirmed.Seq
		}
		st.Confirmed = &confirmed{content: cur, Seq: seq}
		st.Baseline = new(cur)
	}
	st.Pending = nil
	// The quarantine lifts once the config is gone (no bytes: no keys) or
	// is valid JSON with none of cursorkit's keys.
	switch keys, err := ourKeys(cur.Raw, s.prefix); {
	case err != nil && st.Quarantine == nil:
		st.Quarantine = &quarantine{Since: s.opts.Now(), Reason: oneLine(err.Error())}
	case err == nil && len(keys) == 0:
		st.Quarantine = nil
	}
	return cur, nil
}

// recovery says how an operator lifts a quarantine, what being the
// config's name or "the file".
func (s *Stager) recovery(what string) string {
	return fmt.Sprintf("repair the JSON and remove every %s* server, or delete %s; then run `cursorkit mcp reconcile --cwd %s`", s.prefix, what, s.shape.Root)
}

// goneOwners returns the lease owners on this host whose process is gone,
// from the manifest read without the lock (it is only ever replaced
// whole). Asking the OS about every owner takes a while, which the lock
// would make every waiting peer wait too; a process that is gone stays
// gone, so the judgement still holds in the lock a moment later.
func (s *Stager) goneOwners(ctx context.Context) []LeaseOwner {
	st, err := readState(s.statePath)
	if err != nil || st == nil {
		return nil // the read in the lock reports it
	}
	host, _ := os.Hostname()
	var seen, gone []LeaseOwner
	for _, l := range st.Leases {
		if slices.ContainsFunc(seen, l.Owner.same) {
			continue
		}
		seen = append(seen, l.Owner)
		if alive, known := l.Owner.alive(ctx, host); known && !alive {
			gone = append(gone, l.Owner)
		}
	}
	return gone
}

// dropDead removes leases whose owner is one of gone (goneOwners), or
// whose heartbeat is older than LeaseTTL. It returns the ids dropped,
// sorted.
func (s *Stager) dropDead(st *state, gone []LeaseOwner) []string {
	var dropped []string
	for id, l := range st.Leases {
		if s.lapsed(l) || slices.ContainsFunc(gone, l.Owner.same) {
			delete(st.Leases, id)
			dropped = append(dropped, id)
		}
	}
	slices.Sort(dropped)
	return dropped
}

// lapsed reports whether l's last heartbeat is older than LeaseTTL.
func (s *Stager) lapsed(l *leaseRecord) bool {
	return s.opts.Now().Sub(l.HeartbeatAt) > LeaseTTL
}

// entries are the live leases' entries, oldest first (then by key).
func entries(st *state) []keyedEntry {
	ls := slices.SortedFunc(maps.Values(st.Leases), func(a, b *leaseRecord) int {
		return cmp.Or(a.AcquiredAt.Compare(b.AcquiredAt), strings.Compare(a.Key, b.Key))
	})
	out := make([]keyedEntry, 0, len(ls))
	for _, l := range ls {
		out = append(out, keyedEntry{Key: l.Key, Entry: l.Entry})
	}
	return out
}

// errRaced: the config changed between the read a change was decided on
// and the write (an operator's save, which takes no lock); maxRaces bounds
// the retries.
var errRaced = errors.New("the config changed while cursorkit was writing it")

const maxRaces = 5

// mutate journals next, replaces the config with it (or removes it), and
// promotes the journal record in st: the caller's next write of the state
// puts the promotion on disk, or the state's removal when nothing is left.
// A crash at any point leaves bytes that recover tells apart: a journal
// record whose write is on disk is promoted there.
// The config is read again right before it is replaced: bytes other than
// was (an operator saved meanwhile) are errRaced and nothing is replaced,
// so a change decided on older bytes never overwrites an operator's edit
// (the window left is the rename).
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
	return nil
}

// sync makes the config hold the live leases' entries over the operator's
// content, writing only when the bytes differ; with no lease left, the
// baseline (the config before cursorkit, or the operator's latest edit,
// cursorkit's keys stripped: the only case its bytes are re-laid out). An
// operator's save that overtakes a change is read (and latched) and the
// change decided again, at most maxRaces times.
func (s *Stager) sync(st *state, cur content) error {
	for attempt := 1; ; attempt++ {
		err := s.syncOnce(st, cur)
		if !errors.Is(err, errRaced) {
			return err
		}
		if attempt == maxRaces {
			return failure.Wrap(failure.Resource, err, "%s kept changing while cursorkit wrote it; try again", s.configPath)
		}
		if cur, err = s.recover(st); err != nil {
			return err
		}
	}
}

func (s *Stager) syncOnce(st *state, cur content) error {
	if st.Quarantine != nil || len(st.Leases) == 0 && st.Baseline == nil {
		return nil // quarantined, or nothing was ever written here
	}
	var target content
	kind, err := kindWrite, error(nil)
	switch {
	case len(st.Leases) > 0:
		target.Present = true
		target.Raw, err = compose(cur.Raw, s.prefix, entries(st))
	case !st.Baseline.Present:
		kind = kindDelete
	default:
		target, kind = *st.Baseline, kindRestore
		var keys []string
		if keys, err = ourKeys(target.Raw, s.prefix); err == nil && len(keys) > 0 {
			target.Raw, err = compose(target.Raw, s.prefix, nil)
		}
	}
	if err != nil || cur.same(target) {
		return err
	}
	return s.mutate(st, kind, cur, target)
}

// Stage adds entry to the worktree's config under a new lease and
// returns it. The caller heartbeats it (HeartbeatEvery) and releases it.
func (s *Stager) Stage(ctx context.Context, entry Entry) (Lease, error) {
	if err := checkEntry(entry); err != nil {
		return Lease{}, err
	}
	pid := cmp.Or(s.opts.OwnerPID, os.Getpid())
	self, err := procid.Of(ctx, pid)
	if err != nil {
		return Lease{}, failure.Wrap(failure.Input, err, "the lease's owner process %d", pid)
	}
	host, _ := os.Hostname()
	created, gone, l, err := s.bootstrapAndLock(ctx)
	if err != nil {
		return Lease{}, err
	}
	defer l.release()
	// A last release may have removed the exclusion line (its last step in
	// the lock) since this bootstrap: looked at again inside the lock.
	if err := ensureExclusion(ctx, s.shape); err != nil {
		return Lease{}, err
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
	if q := st.Quarantine; q != nil {
		if err := writeState(s.statePath, st); err != nil {
			return Lease{}, err
		}
		return Lease{}, failure.New(failure.Setup, "%s is quarantined since %s (%s): cursorkit writes no config here. To recover: %s",
			s.configPath, q.Since.UTC().Format(time.RFC3339), q.Reason, s.recovery("the file"))
	}
	s.dropDead(st, gone)
	if st.Baseline == nil {
		// Stored before any config byte is written (with the first journal
		// record, or alone when no write follows).
		st.Baseline = new(cur)
		s.at("baseline")
	}
	id := newID()
	now := s.opts.Now()
	lease := Lease{ID: id, Key: s.prefix + id}
	st.Leases[id] = &leaseRecord{Key: lease.Key, Entry: entry, AcquiredAt: now, HeartbeatAt: now,
		Owner: LeaseOwner{PID: self.PID, Created: self.Created, Hostname: host}}
	err = s.sync(st, cur)
	if err == nil {
		err = writeState(s.statePath, st)
	}
	if err != nil {
		// Not staged: the lease must not linger in the manifest (a journal
		// record left is settled by the next recovery, a server of the
		// lease already in the config removed by the next locked step).
		delete(st.Leases, id)
		_ = writeState(s.statePath, st)
		return Lease{}, err
	}
	s.at("state-written")
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

// withState runs fn under the main lock (tryDirLock when try) on the
// recovered state and the owners found gone before the lock (goneOwners),
// then saves the state, or cleans up (finish) when nothing is left in it.
// Without .cursor/ or a state, fn is not called and ok is false.
func (s *Stager) withState(ctx context.Context, try bool, fn func(st *state, cur content, gone []LeaseOwner) error) (ok bool, err error) {
	if err := s.checkWritable(); err != nil {
		return false, err
	}
	if _, err := os.Lstat(s.cursorDir); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	gone := s.goneOwners(ctx)
	l, err := s.lockOrTry(ctx, try)
	if err != nil {
		return false, err
	}
	release := sync.OnceValue(l.release) // finish releases it early
	defer release()
	st, err := readState(s.statePath)
	if err != nil || st == nil {
		return false, err
	}
	cur, err := s.recover(st)
	if err != nil {
		return true, err
	}
	if err := fn(st, cur, gone); err != nil {
		return true, err
	}
	// A journal record left (an operator's saves kept overtaking a change)
	// keeps the state for the next locked step.
	if len(st.Leases) > 0 || st.Quarantine != nil || st.Pending != nil {
		if err := writeState(s.statePath, st); err != nil {
			return true, err
		}
		s.at("state-written")
		return true, nil
	}
	return true, s.finish(ctx, st, release, try)
}

// finish is the last cleanup, under the main lock, the config already
// back: the state goes, the exclusion line is the last removal in the
// lock, the lock is released, and only then a .cursor/ cursorkit created
// is removed. try (the exit backstop) never waits for the bootstrap lock:
// the exclusion line then stays for reconcile.
func (s *Stager) finish(ctx context.Context, st *state, release func() error, try bool) error {
	if err := os.Remove(s.statePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return failure.Wrap(failure.Setup, err, "removing the staging state")
	}
	s.at("state-removed")
	// The lease is released once the state is gone: an exclusion line
	// that cannot be removed now is left to a later reconcile.
	if s.shape.Kind != gitNone && !try {
		if _, err := removeExclusion(ctx, s.shape); err == nil {
			s.at("unexcluded")
		}
	}
	if err := release(); err != nil {
		return err
	}
	s.at("unlocked")
	s.removeCreatedDir(ctx, st.CreatedDir, try)
	return nil
}

// peerStepWait bounds how long the last release waits for a peer's lock
// to leave .cursor/ (a locked step takes milliseconds); retryGap paces it.
const (
	peerStepWait = time.Second
	retryGap     = 5 * time.Millisecond
)

// removeCreatedDir removes the .cursor/ cursorkit made, if empty. Made
// means recorded: the exclusion block's "made" line (in git), or the
// manifest's record (recorded). The line goes once the directory is gone, or once it holds an operator's
// file (it is the operator's then); a peer staging in it keeps the line
// for its own last cleanup. With try (the exit backstop, which must not
// wait for the bootstrap lock) the line stays for reconcile. Outside git
// the manifest's record is passed to that peer (passCreatedDir).
func (s *Stager) removeCreatedDir(ctx context.Context, recorded, try bool) {
	marked := false
	if s.shape.Kind != gitNone {
		marked, _ = hasMadeMark(s.shape)
	}
	if !recorded && !marked {
		return
	}
	gone := s.rmdirCursorDir(ctx, try)
	switch {
	case marked && !try:
		if dropped, err := unmarkUnlessStaging(ctx, s.shape, s.cursorDir, s.cursorDirHoldsStaging); err == nil && dropped {
			s.at("unmarked")
		}
	case !marked && !gone:
		s.passCreatedDir(ctx, try)
	}
}

// rmdirCursorDir removes .cursor/ if empty and reports that it is gone.
// A peer that took the main lock just after the last release let it go
// keeps it non-empty for its step: while that lock is all there is in it (or nothing), the rmdir
// is tried again for at most peerStepWait from its first look (never with
// try, which must not wait): one retry always comes, however slow the
// first rmdir was.
func (s *Stager) rmdirCursorDir(ctx context.Context, try bool) bool {
	var limit time.Time
	for {
		err := os.Remove(s.cursorDir)
		if err == nil {
			s.at("cursor-dir-removed")
			return true
		}
		if errors.Is(err, fs.ErrNotExist) {
			return true
		}
		if try {
			return false
		}
		s.at("cursor-dir-kept")
		// An empty .cursor/ counts: the peer's step that made the rmdir
		// fail may have ended before this look.
		left, err := os.ReadDir(s.cursorDir)
		if limit.IsZero() {
			limit = time.Now().Add(peerStepWait)
		}
		onlyALock := err == nil && (len(left) == 0 || len(left) == 1 && left[0].Name() == LockDir)
		if !onlyALock || ctx.Err() != nil || time.Now().After(limit) {
			return false
		}
		s.at("cursor-dir-locked")
		time.Sleep(retryGap) // a retry pace: the peer's step ends by itself
	}
}

// cursorDirHoldsStaging reports whether everything in .cursor/ is
// cursorkit's staging: the lock, the manifest, their temporary files, and
// a config beside a manifest (a peer staging). Anything else is an
// operator's. A directory that cannot be read counts as staging: the
// line stays.
func (s *Stager) cursorDirHoldsStaging() bool {
	entries, err := os.ReadDir(s.cursorDir)
	if err != nil {
		return true
	}
	staged := slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == StateFile })
	for _, e := range entries {
		if (e.Name() == ConfigFile && !staged) || !isStagingName(e.Name()) {
			return false
		}
	}
	return true
}

// isDir reports whether path is a directory (a link is not followed).
func isDir(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.IsDir()
}

// isStagingName reports whether name is one of the names in .cursor/ the
// exclusion patterns list: cursorkit's while it stages.
func isStagingName(name string) bool {
	for _, p := range exclusionPatterns() {
		if ok, _ := path.Match(path.Base(strings.TrimSuffix(p, "/")), name); ok {
			return true
		}
	}
	return false
}

// passCreatedDir gives a peer that staged between the last release's
// unlock and its rmdir the record that cursorkit made .cursor/: the peer's
// bootstrap found .cursor/ there, so its manifest says it did not, and
// without the record nobody would remove .cursor/ once empty. The peer's
// last cleanup (its release, or the reconcile that drops its lease) then
// removes it. Without a manifest there is nobody to give it to: an
// operator's file keeps .cursor/, as its own.
func (s *Stager) passCreatedDir(ctx context.Context, try bool) {
	if _, err := os.Lstat(s.statePath); err != nil {
		return
	}
	l, err := s.lockOrTry(ctx, try)
	if err != nil {
		return
	}
	defer l.release()
	if st, err := readState(s.statePath); err == nil && st != nil && !st.CreatedDir {
		st.CreatedDir = true
		_ = writeState(s.statePath, st)
	}
}

// Heartbeat renews lease id. An unknown lease (released, or dropped as
// dead) is failure.Input: its entry is no longer staged. So is a lapsed
// one (its last heartbeat older than LeaseTTL), which a heartbeat does
// not make live again: the next stage, release or reconcile drops it.
func (s *Stager) Heartbeat(ctx context.Context, id string) error {
	return s.onLease(ctx, id, false, func(st *state) error {
		l := st.Leases[id]
		if s.lapsed(l) {
			return failure.New(failure.Input, "the lease %q in %s lapsed (no heartbeat for over %s): it is not renewed, and the next step removes its entry", id, s.shape.Root, LeaseTTL)
		}
		l.HeartbeatAt = s.opts.Now()
		return nil
	})
}

// Release removes lease id's entry; the last release puts the config back
// as it was (or, after an operator's edit, leaves the operator's content
// without cursorkit's keys) and removes everything cursorkit made.
func (s *Stager) Release(ctx context.Context, id string) error {
	return s.onLease(ctx, id, false, func(st *state) error { delete(st.Leases, id); return nil })
}

// ReleaseOnExit is the process-exit backstop for lease id: one attempt at
// the main lock, never waiting, taking over or bootstrapping; while a peer
// holds the lock it returns the resource error and leaves the lease to
// reconcile, which drops it once this process is gone.
func (s *Stager) ReleaseOnExit(id string) error {
	return s.onLease(context.Background(), id, true, func(st *state) error { delete(st.Leases, id); return nil })
}

// onLease applies change to lease id under the main lock, drops dead
// leases and syncs the config; an unknown lease is failure.Input, and a
// change that fails leaves the manifest as it was. A config an operator
// kept saving over does not fail the lease change, which the manifest
// holds: the next locked step writes the config.
func (s *Stager) onLease(ctx context.Context, id string, try bool, change func(*state) error) error {
	quoted := id
	if len(quoted) > 80 {
		quoted = quoted[:80] + "…"
	}
	unknown := failure.New(failure.Input, "no lease %q in %s", quoted, s.shape.Root)
	ok, err := s.withState(ctx, try, func(st *state, cur content, gone []LeaseOwner) error {
		if st.Leases[id] == nil {
			return unknown
		}
		if err := change(st); err != nil {
			return err
		}
		s.dropDead(st, gone)
		if err := s.sync(st, cur); !errors.Is(err, errRaced) {
			return err
		}
		return nil
	})
	if err == nil && !ok {
		return unknown
	}
	return err
}

// Report is what a reconcile did.
type Report struct {
	Dropped     []string `json:"dropped"`     // leases removed as dead
	Quarantined bool     `json:"quarantined"` // the worktree stays quarantined
	Cleaned     bool     `json:"cleaned"`     // no lease left, everything cursorkit made gone
	Unexcluded  bool     `json:"unexcluded"`  // an exclusion line without a state was removed
	RemovedDir  bool     `json:"removedDir"`  // the .cursor/ cursorkit made went with this reconcile
}

// Reconcile is the crash-recovery owner: it settles the journal, drops
// dead leases, rewrites the config to the live ones, and with none left
// cleans up as the last release would; an exclusion line left without a
// state (a crash after the state went) is removed, and so is a .cursor/
// that cursorkit made (the exclusion block says so) once it is empty.
func (s *Stager) Reconcile(ctx context.Context) (r Report, err error) {
	existed := isDir(s.cursorDir)
	defer func() { r.RemovedDir = existed && !isDir(s.cursorDir) }()
	ok, err := s.withState(ctx, false, func(st *state, cur content, gone []LeaseOwner) error {
		r.Dropped = s.dropDead(st, gone)
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
	r.Cleaned = true
	removed, err := removeExclusion(ctx, s.shape)
	if err != nil {
		return r, err
	}
	r.Unexcluded = removed
	s.removeCreatedDir(ctx, false, false)
	return r, nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
