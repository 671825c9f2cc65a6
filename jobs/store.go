package jobs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/filelock"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// EnvData names the data directory, overriding the per-user default.
const EnvData = "CURSORKIT_DATA"

// maxRecordBytes bounds a record read back: a record is a few kilobytes.
const maxRecordBytes = 1 << 20

// DataDir is where jobs keep their records and runs: EnvData when set
// (it must be an absolute path), else the per-user data directory +
// "cursorkit": $XDG_DATA_HOME or ~/.local/share on Linux and the BSDs,
// ~/Library/Application Support on macOS, %LocalAppData% on Windows.
func DataDir(getenv func(string) string) (string, error) {
	if v := strings.TrimSpace(getenv(EnvData)); v != "" {
		if !filepath.IsAbs(v) {
			return "", failure.New(failure.Input, "%s must be an absolute path", EnvData)
		}
		return filepath.Clean(v), nil
	}
	var base string
	switch runtime.GOOS {
	case "windows":
		base = getenv("LocalAppData")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			base = filepath.Join(h, "Library", "Application Support")
		}
	default:
		base = getenv("XDG_DATA_HOME")
		if !filepath.IsAbs(base) {
			base = ""
			if h := getenv("HOME"); h != "" {
				base = filepath.Join(h, ".local", "share")
			}
		}
	}
	if !filepath.IsAbs(base) {
		return "", failure.New(failure.Setup, "there is no per-user data directory (HOME or LocalAppData is unset); set %s to an absolute directory", EnvData)
	}
	return filepath.Join(base, "cursorkit"), nil
}

// Store keeps job records, their output and their runs' private homes
// under one data directory (DataDir). Any number of processes may use one:
// the writers of a record take turns (Save, Accept, a worker's updates).
type Store struct {
	Dir string
}

// workspaceKey names a workspace's directory of records: its base name
// reduced to at most 40 letters, digits, '.', '_' and '-', a dash, and 16
// hex digits of the SHA-256 of its path (lower case on Windows, where
// paths are case-insensitive), so two workspaces of one name never share
// records.
func workspaceKey(workspace string) string {
	p := filepath.Clean(workspace)
	if runtime.GOOS == "windows" {
		p = strings.ToLower(p)
	}
	sum := sha256.Sum256([]byte(p))
	var name strings.Builder
	for _, r := range filepath.Base(filepath.Clean(workspace)) {
		if name.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			name.WriteRune(r)
		default:
			name.WriteByte('_')
		}
	}
	n := strings.Trim(name.String(), ".")
	if n == "" {
		n = "workspace"
	}
	return n + "-" + hex.EncodeToString(sum[:8])
}

// idTime is the layout of a job id's start time.
const idTime = "20060102T150405Z"

// NewID returns a new job id, as in "task-20261201T180512Z-3f9a1c0b": the
// role, the start time in UTC (ids sort by it within a role) and eight
// random hex digits.
func NewID(role Role, now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return string(role) + "-" + now.UTC().Format(idTime) + "-" + hex.EncodeToString(b[:])
}

// checkID refuses what NewID cannot have made: the id names files, so it
// must never hold a path separator or dot-dot. The error is failure.Input
// and quotes at most 80 bytes of the id.
func checkID(id string) error {
	if _, rest, _ := strings.Cut(id, "-"); idShape(id) {
		if _, err := time.Parse(idTime, rest[:len(idTime)]); err == nil {
			return nil
		}
	}
	q := id
	if len(q) > 80 {
		q = q[:80] + "…"
	}
	return failure.New(failure.Input, "%q is not a job id (want task-YYYYMMDDTHHMMSSZ-xxxxxxxx or review-…)", q)
}

// idShape reports whether id has the shape NewID gives, without
// allocating: listings check every file name with it.
func idShape(id string) bool {
	role, rest, ok := strings.Cut(id, "-")
	if !ok || (role != string(RoleTask) && role != string(RoleReview)) || len(rest) != len("20060102T150405Z-3f9a1c0b") {
		return false
	}
	for i := range len(rest) {
		c := rest[i]
		var ok bool
		switch {
		case i == 8:
			ok = c == 'T'
		case i == 15:
			ok = c == 'Z'
		case i == 16:
			ok = c == '-'
		case i > 16:
			ok = '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
		default:
			ok = '0' <= c && c <= '9'
		}
		if !ok {
			return false
		}
	}
	return true
}

// RemoveRun removes job id's run directory (private home, output file,
// prompt); a missing one is gone. It is for a job whose record was never
// saved: the run of a job with a record goes with prune.
func (s Store) RemoveRun(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	if err := s.removeRunDir(id); err != nil {
		return failure.Wrap(failure.Setup, err, "removing the run directory of job %s", id)
	}
	return nil
}

func (s Store) removeRunDir(id string) error {
	dir := s.runDir(id)
	// The home's plugin and skill directories are read-only.
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(path, 0o700)
		}
		return nil
	})
	return safefile.RemoveAll(dir)
}

// runDir holds what job id keeps besides its record.
func (s Store) runDir(id string) string { return filepath.Join(s.Dir, "runs", id) }

// HomeDir is the private home of job id.
func (s Store) HomeDir(id string) string { return filepath.Join(s.runDir(id), "home") }

// recordPath is where the record of job id of workspace lives.
func (s Store) recordPath(workspace, id string) string {
	return filepath.Join(s.jobsDir(workspaceKey(workspace)), id+".json")
}

// jobsDir holds the records of the workspace whose key is key.
func (s Store) jobsDir(key string) string { return filepath.Join(s.Dir, "state", key, "jobs") }

// ErrFinal is wrapped by the error of a save over a record in a final
// state: a job ends once, and another process may have ended it first.
var ErrFinal = errors.New("the job's record is already final")

// lockWait bounds the wait for a record's lock, which a holder keeps for
// one read and one atomic write, milliseconds.
const lockWait = 10 * time.Second

// Save writes r atomically (internal/safefile): a reader sees the old
// record or the new one, never a torn one, and a crash mid-save leaves the
// old one. Writers of one record take turns (a lock the operating system
// drops when its holder dies, however it dies). Saving over a record in a
// final state is an error wrapping ErrFinal (kind process), unless r is
// that very record (a repeated save).
func (s Store) Save(r *Record) error {
	if err := checkID(r.ID); err != nil {
		return err
	}
	l, err := s.lockRecord(r.Workspace, r.ID)
	if err != nil {
		return err
	}
	defer l.Release()
	if cur, err := s.readRecord(s.recordPath(r.Workspace, r.ID)); err == nil && cur.State.Terminal() &&
		(cur.State != r.State || !cur.UpdatedAt.Equal(r.UpdatedAt)) {
		return failure.Wrap(failure.Process, ErrFinal, "job %s already ended (%s)", r.ID, cur.State)
	}
	return s.write(r)
}

// update changes the record of job id of workspace in one turn of its
// writers: fn gets the record as it is now and says whether to save what
// it made of it. It returns the record as saved, or as read when fn
// declined. An unknown job is failure.Input.
func (s Store) update(workspace, id string, fn func(*Record) bool) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(s.recordPath(workspace, id)); err != nil {
		return nil, failure.New(failure.Input, "no job %s in this workspace", id)
	}
	l, err := s.lockRecord(workspace, id)
	if err != nil {
		return nil, err
	}
	defer l.Release()
	r, err := s.load(workspace, id)
	if err != nil {
		return nil, err
	}
	if !fn(r) {
		return r, nil
	}
	return r, s.write(r)
}

// lockRecord takes the writers' lock of job id, runs/<id>/record.lock, so
// that it goes with the run directory when the job is pruned. A run
// directory missing while the record exists is a prune in progress (of a
// final record); one missing with the record is a new record's, made here.
func (s Store) lockRecord(workspace, id string) (*filelock.Lock, error) {
	dir := s.runDir(id)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(s.recordPath(workspace, id)); err == nil {
			return nil, failure.Wrap(failure.Process, ErrFinal, "job %s is being pruned", id)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, failure.Wrap(failure.Setup, err, "creating the job's run directory")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	l, err := filelock.Acquire(ctx, filepath.Join(dir, "record.lock"))
	switch {
	case errors.Is(err, filelock.ErrBusy):
		return nil, failure.Wrap(failure.Resource, err, "job %s: another process kept its record locked for %s", id, lockWait)
	case err != nil:
		return nil, failure.Wrap(failure.Setup, err, "locking the record of job %s", id)
	}
	return l, nil
}

// write is Save's write, under the record's lock.
func (s Store) write(r *Record) error {
	path := s.recordPath(r.Workspace, r.ID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return failure.Wrap(failure.Setup, err, "creating the job directory")
	}
	data, err := json.Marshal(r, jsontext.WithIndent("  "))
	if err != nil {
		return failure.Wrap(failure.Unclassified, err, "encoding the job record")
	}
	if err := safefile.Write(path, append(data, '\n'), 0o600); err != nil {
		return failure.Wrap(failure.Setup, err, "writing the job record")
	}
	// A writer killed mid-save leaves its temporary file; under the lock
	// no other write of this record is under way, so any left is such.
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+r.ID+".json.*.tmp"))
	for _, f := range left {
		_ = os.Remove(f)
	}
	return nil
}

// load reads the record of job id of workspace. A missing record is
// failure.Input ("no job ..."); one that does not decode is
// failure.Unclassified naming the file, and one of another job or in a
// state outside the documented set failure.Process naming the file.
func (s Store) load(workspace, id string) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	r, err := s.readRecord(s.recordPath(workspace, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, failure.New(failure.Input, "no job %s in this workspace", id)
	}
	return r, err
}

// readRecord decodes one record file and checks that it is the record of
// the job its name says, in a known state; a missing file's error wraps
// fs.ErrNotExist. The errors name the file, never quote what it holds.
func (s Store) readRecord(path string) (*Record, error) {
	data, err := safefile.Read(path, maxRecordBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, failure.Wrap(failure.Setup, err, "reading the job record")
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, failure.Wrap(failure.Unclassified, err, "the job record %s does not decode", path)
	}
	if r.ID+".json" != filepath.Base(path) {
		return nil, failure.New(failure.Process, "the job record %s holds the record of another job", path)
	}
	if !r.State.known() {
		return nil, failure.New(failure.Process, "the job record %s is in a state outside the documented set", path)
	}
	return &r, nil
}
