package jobs_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
)

// TestWorkspaceThroughALinkIsOneWorkspace: the jobs of a directory are
// listed, found and resumed through a link to it as by its real path; a
// record saved with the link as its workspace is still found by it.
func TestWorkspaceThroughALinkIsOneWorkspace(t *testing.T) {
	store, ws := jobs.NewTestStore(t)
	link := filepath.Join(testkit.TempDir(t), "link")
	testkit.Symlink(t, ws, link)
	now := time.Now()
	byReal := jobs.JobAt(ws, jobs.RoleTask, now.Add(-2*time.Minute), jobs.StateDone, jobs.ModeConsult, "session-real")
	require.NoError(t, store.Save(byReal))
	byLink := jobs.JobAt(link, jobs.RoleTask, now.Add(-time.Minute), jobs.StateDone, jobs.ModeConsult, "session-link")
	require.NoError(t, store.Save(byLink))

	for _, tc := range []struct {
		name   string
		lookup string
		find   *jobs.Record   // a job Find and ResumeFrom see
		listed []*jobs.Record // what List shows, newest first
		newest string         // the session --resume-last takes
	}{
		{name: "through the link", lookup: link, find: byReal, listed: []*jobs.Record{byLink, byReal}, newest: "session-link"},
		{name: "by the real path", lookup: ws, find: byReal, listed: []*jobs.Record{byReal}, newest: "session-real"},
		{name: "through the link, a job saved with the link", lookup: link, find: byLink, listed: []*jobs.Record{byLink, byReal}, newest: "session-link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := store.Find(tc.lookup, tc.find.ID)
			require.NoError(t, err)
			assert.Equal(t, tc.find.ID, got.ID)

			recs, err := store.List(tc.lookup, 0)
			require.NoError(t, err)
			var ids, want []string
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			for _, r := range tc.listed {
				want = append(want, r.ID)
			}
			assert.Equal(t, want, ids)

			last, err := store.ResumeFrom(tc.lookup, jobs.ModeConsult, "", "")
			require.NoError(t, err)
			assert.Equal(t, tc.newest, last.SessionID)
			named, err := store.ResumeFrom(tc.lookup, jobs.ModeConsult, "", tc.find.SessionID)
			require.NoError(t, err)
			assert.Equal(t, tc.find.ID, named.ID)
		})
	}
}
