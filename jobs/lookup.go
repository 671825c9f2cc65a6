package jobs

import (
	"encoding/json/v2"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// Bounds of the listings (docs/contract.md, "Jobs").
const (
	// DefaultHistoryLimit is History's limit when none is given,
	// MaxHistoryLimit the cap of any limit.
	DefaultHistoryLimit = 20
	MaxHistoryLimit     = 1000
	// MaxResumableListed bounds the resumable session ids an unknown
	// session's error lists.
	MaxResumableListed = 10
)

// Find returns the record of job id: in workspace when it is not "", else
// in whichever workspace holds it. An id names its file, so finding it is
// one directory listing of <data>/state and one stat per workspace, never
// a read of another record. An unknown id is failure.Input.
func (s Store) Find(workspace, id string) (*Record, error) {
	if workspace != "" {
		return s.Load(workspace, id)
	}
	if err := CheckID(id); err != nil {
		return nil, err
	}
	for _, key := range s.workspaceKeys() {
		path := filepath.Join(s.Dir, "state", key, "jobs", id+".json")
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		r, err := s.readRecord(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // pruned meanwhile
		}
		return r, err
	}
	return nil, failure.New(failure.Input, "no job %s in any workspace", id)
}

// workspaceKeys lists the workspace directories under <data>/state.
func (s Store) workspaceKeys() []string {
	names, _ := readNames(filepath.Join(s.Dir, "state"))
	return names
}

// readNames is a directory's entry names, unsorted; a missing directory
// has none.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// readRecord decodes one record file; a missing file's error wraps
// fs.ErrNotExist.
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
	return &r, nil
}

// jobFile is one record file found by name: its id and where it is.
type jobFile struct {
	id, path string
}

// sortKey orders ids by start time across roles: the part after the role
// ("20261201T170512Z-3f9a1c0b").
func sortKey(id string) string {
	_, rest, _ := strings.Cut(id, "-")
	return rest
}

// jobFiles lists the record files of workspace ("" for every workspace),
// newest first, by name alone: temporary files of a save in progress and
// anything that is not a job id are left out. With keep > 0 only the
// newest keep of each workspace are kept (a listing of the newest jobs
// needs no more), so a listing over many records sorts and builds paths
// for few of them.
func (s Store) jobFiles(workspace string, keep int) []jobFile {
	keys := s.workspaceKeys()
	if workspace != "" {
		keys = []string{WorkspaceKey(workspace)}
	}
	newestFirst := func(a, b string) int {
		if c := strings.Compare(sortKey(b), sortKey(a)); c != 0 {
			return c
		}
		return strings.Compare(b, a)
	}
	var files []jobFile
	for _, key := range keys {
		dir := filepath.Join(s.Dir, "state", key, "jobs")
		names, _ := readNames(dir)
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
// first (ids order by start time), at most limit of them (limit <= 0: all).
// Only the records returned are read: the order comes from the names. A
// record that vanished meanwhile (pruned) or does not decode is left out.
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
		r, err := s.readRecord(f.path)
		if err != nil {
			continue
		}
		out = append(out, r)
	}
	// Ids order jobs to the second; jobs started within one second are
	// ordered by their creation time, read from the records shown.
	slices.SortStableFunc(out, func(a, b *Record) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, nil
}

// Unfinished returns every record, of every workspace, that is not in a
// final state (starting or running), newest first: what may still have
// processes to stop. It reads every record, so it is for the rare
// sweep (jobs cleanup), not a listing. A record that does not decode is
// left out.
func (s Store) Unfinished() ([]*Record, error) {
	var out []*Record
	for _, f := range s.jobFiles("", 0) {
		if r, err := s.readRecord(f.path); err == nil && !r.State.Terminal() {
			out = append(out, r)
		}
	}
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
	// FailureKind is the failure's kind, "" when the job did not fail.
	FailureKind failure.Kind `json:"failureKind,omitempty"`
	// ResumeSession is the session id a later task can resume (--resume):
	// the job's session when it is in a final state, else "".
	ResumeSession   string     `json:"resumeSession"`
	Model           string     `json:"model"`
	LauncherSession string     `json:"launcherSession,omitempty"`
	ParentJob       string     `json:"parentJob,omitempty"`
	CreatedAt       time.Time  `json:"createdAt"`
	EndedAt         *time.Time `json:"endedAt"`
}

// Project is r's history entry.
func (r *Record) Project() HistoryEntry {
	h := HistoryEntry{ID: r.ID, Role: r.Role, Mode: r.Mode, Workspace: r.Workspace, State: r.State, Delivery: r.Delivery,
		Model: r.ResolvedModel, LauncherSession: r.LauncherSession, ParentJob: r.ParentJob, CreatedAt: r.CreatedAt, EndedAt: r.EndedAt}
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

// History lists the jobs of workspace ("" for every workspace), newest
// first, as history entries: limit <= 0 is DefaultHistoryLimit, and no
// limit exceeds MaxHistoryLimit. Only the records shown are read.
func (s Store) History(workspace string, limit int) ([]HistoryEntry, error) {
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	limit = min(limit, MaxHistoryLimit)
	recs, err := s.List(workspace, limit)
	if err != nil {
		return nil, err
	}
	out := make([]HistoryEntry, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.Project())
	}
	return out, nil
}

// resumable reports whether r's session may be resumed by a task of
// workspace and mode, of launcher session launcher when it is not "".
func resumable(r *Record, workspace string, mode Mode, launcher string) bool {
	return r.State.Terminal() && r.SessionID != "" && r.Mode == mode &&
		WorkspaceKey(r.Workspace) == WorkspaceKey(workspace) && (launcher == "" || r.LauncherSession == launcher)
}

// resumableSessions returns the session ids a task of workspace and mode may
// resume, newest first, each once: those recorded by jobs of that
// workspace and mode in a final state, and only jobs of launcher session
// launcher when it is not "" (CURSORKIT_SESSION). A session is never
// invented: one no job recorded is not there.
func (s Store) resumableSessions(workspace string, mode Mode, launcher string) ([]string, error) {
	recs, err := s.List(workspace, 0)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range recs {
		if resumable(r, workspace, mode, launcher) && !slices.Contains(out, r.SessionID) {
			out = append(out, r.SessionID)
		}
	}
	return out, nil
}

// ResumeFrom returns the job a task of workspace and mode resumes: the
// newest eligible job (as resumableSessions) that recorded session, or with
// session "" (--resume-last) the newest eligible job of all. None is
// failure.Input, listing at most MaxResumableListed resumable session ids
// (and quoting at most 80 bytes of the id asked for).
func (s Store) ResumeFrom(workspace string, mode Mode, launcher, session string) (*Record, error) {
	recs, err := s.List(workspace, 0)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range recs {
		if !resumable(r, workspace, mode, launcher) {
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
		if len(ids) > MaxResumableListed {
			more = ", …"
			ids = ids[:MaxResumableListed]
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
