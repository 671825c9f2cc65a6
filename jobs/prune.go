package jobs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// defaultRetention is how many jobs a workspace keeps (docs/contract.md,
// "Jobs"): past it the oldest jobs in a final state are pruned.
const defaultRetention = 200

// prune keeps the newest keep jobs of workspace (keep <= 0:
// defaultRetention) and removes the older ones that are in a final state,
// run directory first, then record. It returns the ids removed, oldest
// first.
//
// It is safe against the jobs' own writers because only a record read in
// a final state is pruned, and such a record stays final; a starting or
// running job is never pruned, whatever its age, nor is a record that
// cannot be read. A crash between the two removals leaves a final record
// without its run directory, which the next prune removes, as it does a
// record an acceptance racing the prune wrote back (Store.Accept); a
// job whose removal fails stays for the next one, and the first such
// failure is returned (failure.Setup) with the ids that were removed.
func (s Store) prune(workspace string, keep int) ([]string, error) {
	if keep <= 0 {
		keep = defaultRetention
	}
	files := s.jobFiles(workspace, 0)
	if len(files) <= keep {
		return nil, nil
	}
	var removed []string
	var first error
	for i := len(files) - 1; i >= keep; i-- {
		f := files[i]
		r, err := s.readRecord(f.path)
		if err != nil || r.ID != f.id || !r.State.Terminal() {
			continue
		}
		if err := s.removeRunDir(f.id); err != nil {
			if first == nil {
				first = failure.Wrap(failure.Setup, err, "pruning job %s: its run directory could not be removed", f.id)
			}
			continue // keep the record naming what is left
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			if first == nil {
				first = failure.Wrap(failure.Setup, err, "pruning job %s", f.id)
			}
			continue
		}
		removed = append(removed, f.id)
	}
	return removed, first
}

// Sweep removes what writers killed mid-way left behind, once older than
// olderThan: a record save's temporary file that never got renamed, and
// the run directory of a job whose record was never saved. Nothing a
// record names is touched. It returns how many it removed; best effort,
// for a worker to call after prune.
func (s Store) Sweep(olderThan time.Duration) int {
	cutoff := time.Now().Add(-olderThan)
	old := func(path string) bool {
		info, err := os.Lstat(path)
		return err == nil && !info.ModTime().After(cutoff)
	}
	removed := 0
	records := map[string]bool{}
	for _, key := range readNames(filepath.Join(s.Dir, "state")) {
		dir := s.jobsDir(key)
		for _, n := range readNames(dir) {
			if id, ok := strings.CutSuffix(n, ".json"); ok {
				records[id] = true
				continue
			}
			if p := filepath.Join(dir, n); strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".tmp") && old(p) && os.Remove(p) == nil {
				removed++
			}
		}
	}
	for _, id := range readNames(filepath.Join(s.Dir, "runs")) {
		if checkID(id) != nil || records[id] || !old(s.runDir(id)) {
			continue
		}
		// Read again: a record saved since the listing keeps its run.
		if _, err := s.Find("", id); err == nil {
			continue
		}
		if s.removeRunDir(id) == nil {
			removed++
		}
	}
	return removed
}
