package jobs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// Bounds of the listings (docs/contract.md, "Jobs"): history's default
// and largest limit, and how many resumable session ids an unknown
// session's error lists.
const (
	DefaultHistoryLimit = 20
	maxHistoryLimit     = 1000
	maxResumableListed  = 10
)

// Find returns the record of job id: in workspace when it is not ""
// (reached through a link or by its real path alike: workspaceKeys), else
// in whichever workspace holds it. An id names its file, so finding it is
// a stat per workspace key (the keys of any workspace are one directory
// listing of <data>/state), never a read of another record. An unknown id
// is failure.Input.
func (s Store) Find(workspace, id string) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	keys := readNames(filepath.Join(s.Dir, "state"))
	if workspace != "" {
		keys = workspaceKeys(workspace)
	}
	for _, key := range keys {
		path := filepath.Join(s.jobsDir(key), id+".json")
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		r, err := s.readRecord(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // pruned meanwhile
		}
		return r, err
	}
	if workspace != "" {
		return nil, failure.New(failure.Input, "no job %s in this workspace", id)
	}
	return nil, failure.New(failure.Input, "no job %s in any workspace", id)
}

// workspaceKeys are the keys under which the records of workspace, a path
// a caller gave, are kept: first that of its real path (absolute, links
// resolved), so one directory reached through a link and by its real path
// is one workspace; then, when it differs, that of the path as given, the
// key of a record saved with that path as its workspace (Save keys a
// record by its own Workspace).
func workspaceKeys(workspace string) []string {
	given := workspaceKey(workspace)
	resolved, err := filepath.Abs(workspace)
	if err == nil {
		resolved, err = filepath.EvalSymlinks(resolved)
	}
	if err != nil {
		return []string{given}
	}
	if key := workspaceKey(resolved); key != given {
		return []string{key, given}
	}
	return []string{given}
}

// readNames is a directory's entry names, unsorted; none when it cannot be
// read (a missing directory has none).
func readNames(dir string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	return names
}

// jobFile is one record file found by name: its id and where it is.
type jobFile struct {
	id, path string
}

// newestFirst orders ids by start time across roles (the part after the
// role), then by the whole id.
func newestFirst(a, b string) int {
	_, ta, _ := strings.Cut(a, "-")
	_, tb, _ := strings.Cut(b, "-")
	if c := strings.Compare(tb, ta); c != 0 {
		return c
	}
	return strings.Compare(b, a)
}

// jobFiles lists the record files of workspace ("" for every workspace),
// newest first, by name alone: temporary files of a save in progress and
// anything that is not a job id are left out. With keep > 0 only the
// newest keep of each workspace are listed, so a listing over many
// records sorts and builds paths for few of them.
func (s Store) jobFiles(workspace string, keep int) []jobFile {
	keys := readNames(filepath.Join(s.Dir, "state"))
	if workspace != "" {
		keys = workspaceKeys(workspace)
	}
	var files []jobFile
	for _, key := range keys {
		dir := s.jobsDir(key)
		names := readNames(dir)
		ids := names[:0]
		for _, n := range names {
			if id, ok := strings.CutSuffix(n, ".json"); ok && idShape(id) {
				ids = append(ids, id)
			}
		}
		if keep > 0 && len(ids) > keep {
			slices.SortFunc(ids, newestFirst)
			ids = ids[:keep]
		}
		for _, id := range ids {
			files = append(files, jobFile{id: id, path: filepath.Join(dir, id+".json")})
		}
	}
	slices.SortFunc(files, func(a, b jobFile) int { return newestFirst(a.id, b.id) })
	return files
}

// List returns the records of workspace ("" for every workspace), newest
// first, at most limit of them (limit <= 0: all). The order comes from the
// names, so only the records returned are read. A record that vanished
// meanwhile (pruned) or does not decode is left out.
func (s Store) List(workspace string, limit int) ([]*Record, error) {
	var out []*Record
	// A few more than limit per workspace: a record that does not read
	// is skipped, and the next one of its workspace may be needed.
	keep := 0
	if limit > 0 {
		keep = limit + 8
	}
	for _, f := range s.jobFiles(workspace, keep) {
		if limit > 0 && len(out) == limit {
			break
		}
		if r, err := s.readRecord(f.path); err == nil {
			out = append(out, r)
		}
	}
	// Ids order jobs to the second; jobs started within one second are
	// ordered by their creation time, read from the records shown.
	slices.SortStableFunc(out, func(a, b *Record) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, nil
}

// HistoryEntry is a job as history shows it: a safe projection of its
// record, with no prompt (a record never holds one), no output text and no
// failure message (it may quote the agent), only the failure's kind.
type HistoryEntry struct {
	ID        string `json:"id"`
	Role      Role   `json:"role"`
	Mode      Mode   `json:"mode"`
	Workspace string `json:"workspace"`
	State     State  `json:"state"`
	Delivery  string `json:"delivery"`
	// FailureKind is "" when the job did not fail.
	FailureKind failure.Kind `json:"failureKind,omitempty"`
	// ResumeSession is the session id a later task can resume: the job's
	// session when it is in a final state, else "".
	ResumeSession   string     `json:"resumeSession"`
	Model           string     `json:"model"`
	LauncherSession string     `json:"launcherSession,omitempty"`
	ParentJob       string     `json:"parentJob,omitempty"`
	CreatedAt       time.Time  `json:"createdAt"`
	EndedAt         *time.Time `json:"endedAt"`
	// Acceptance is the operator's verdict, null when none was given.
	Acceptance *Acceptance `json:"acceptance"`
}

// History returns the newest jobs of workspace (of every workspace when it
// is ""), at most limit of them, each as Judge sees it now (grace as there)
// and projected into a HistoryEntry. A limit outside 1 to 1000 is
// failure.Input.
func (s Store) History(ctx context.Context, workspace string, limit int, grace time.Duration) ([]HistoryEntry, error) {
	if limit < 1 || limit > maxHistoryLimit {
		return nil, failure.New(failure.Input, "--limit must be between 1 and %d", maxHistoryLimit)
	}
	recs, err := s.List(workspace, limit)
	if err != nil {
		return nil, err
	}
	entries := make([]HistoryEntry, 0, len(recs))
	for _, r := range recs {
		entries = append(entries, Judge(ctx, s, r, grace).project())
	}
	return entries, nil
}

// project is r's history entry.
func (r *Record) project() HistoryEntry {
	h := HistoryEntry{ID: r.ID, Role: r.Role, Mode: r.Mode, Workspace: r.Workspace, State: r.State, Delivery: r.Delivery,
		Model: r.ResolvedModel, LauncherSession: r.LauncherSession, ParentJob: r.ParentJob, CreatedAt: r.CreatedAt, EndedAt: r.EndedAt,
		Acceptance: r.Acceptance}
	if h.Model == "" {
		h.Model = r.ObservedModel
	}
	if r.Failure != nil {
		h.FailureKind = r.Failure.Kind
	}
	if r.State.Terminal() {
		h.ResumeSession = r.SessionID
	}
	return h
}

// ResumeFrom returns the job a task of workspace and mode resumes: the
// newest job that recorded session, or with session "" (--resume-last) the
// newest of all, among the jobs in a final state of that workspace and
// mode with a session, and of launcher session launcher when it is not ""
// (CURSORKIT_SESSION). None is failure.Input, listing at most
// maxResumableListed resumable session ids, newest first (and quoting at
// most 80 bytes of the id asked for).
func (s Store) ResumeFrom(workspace string, mode Mode, launcher, session string) (*Record, error) {
	recs, err := s.List(workspace, 0)
	if err != nil {
		return nil, err
	}
	keys := workspaceKeys(workspace)
	var ids []string
	for _, r := range recs {
		if !r.State.Terminal() || r.SessionID == "" || r.Mode != mode || !slices.Contains(keys, workspaceKey(r.Workspace)) ||
			(launcher != "" && r.LauncherSession != launcher) {
			continue
		}
		if session == "" || r.SessionID == session {
			return r, nil
		}
		if !slices.Contains(ids, r.SessionID) {
			ids = append(ids, r.SessionID)
		}
	}
	scope := "this workspace in " + string(mode) + " mode"
	if launcher != "" {
		scope += " and launcher session " + quoteBounded(launcher)
	}
	if session == "" {
		return nil, failure.New(failure.Input, "no finished job of %s recorded a session to resume", scope)
	}
	list := "none"
	if len(ids) > 0 {
		more := ""
		if len(ids) > maxResumableListed {
			more = ", …"
			ids = ids[:maxResumableListed]
		}
		list = strings.Join(ids, ", ") + more
	}
	return nil, failure.New(failure.Input, "session %s was not recorded by a finished job of %s; resumable: %s", quoteBounded(session), scope, list)
}

// quoteBounded quotes at most 80 bytes of s.
func quoteBounded(s string) string {
	if len(s) > 80 {
		return strconv.Quote(s[:80]) + "…"
	}
	return strconv.Quote(s)
}
