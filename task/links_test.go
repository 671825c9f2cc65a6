package task_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
	"github.com/cursorkit/cursorkit/task"
)

// TestDataDirThroughALinkIntoTheWorkspaceIsRefused: a data directory that
// does not exist yet, reached through a link whose target does not exist
// yet either, overlaps the workspace as the link's target would: refused
// before anything is made there.
func TestDataDirThroughALinkIntoTheWorkspaceIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(ws string) string // the link's target; a relative one is relative to the link's directory, a sibling of ws
		data   string                 // the data directory below the link
	}{
		{name: "dangling link to a missing directory of the workspace", target: func(ws string) string { return filepath.Join(ws, "sub") }, data: "data"},
		{name: "dangling link, data directory several levels below", target: func(ws string) string { return filepath.Join(ws, "sub") }, data: filepath.Join("a", "b")},
		{name: "relative dangling link", target: func(ws string) string { return filepath.Join("..", filepath.Base(ws), "sub") }, data: "data"},
		{name: "link to the workspace itself", target: func(ws string) string { return ws }, data: "data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			link := filepath.Join(testkit.TempDir(t), "link")
			testkit.Symlink(t, tc.target(f.workspace), link)
			f.store.Dir = filepath.Join(link, tc.data)
			rec, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeWrite, "go"), f.options())
			assert.Nil(t, rec)
			assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
			_, err = os.Stat(filepath.Join(f.workspace, "sub"))
			assert.ErrorIs(t, err, os.ErrNotExist, "nothing is made in the workspace")
		})
	}
}

// TestWorkspaceThroughALinkIsOneWorkspace: a job prepared in a workspace
// reached through a link is the job of the directory's real path, and the
// other way round: history, lookups and resumes see one workspace.
func TestWorkspaceThroughALinkIsOneWorkspace(t *testing.T) {
	f := newFixture(t)
	link := filepath.Join(testkit.TempDir(t), "link")
	testkit.Symlink(t, f.workspace, link)

	for _, tc := range []struct {
		name          string
		cwd, dir      string // how the workspace is named when the job is made
		lookup        string // how it is named when the job is looked up
		implicitAfter bool   // look it up as the current directory
	}{
		{name: "made through the link, found by the real path", dir: link, lookup: f.workspace},
		{name: "made by the real path, found through the link", dir: f.workspace, lookup: link},
		{name: "made from the link as current directory, found by the real path", cwd: link, lookup: f.workspace},
		{name: "made by the real path, found from the link as current directory", dir: f.workspace, cwd: link, implicitAfter: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cwd != "" {
				t.Chdir(tc.cwd) // sets PWD too, which os.Getwd answers: the link, not the real path
			}
			made, err := task.Workspace(tc.dir)
			require.NoError(t, err)
			spec := f.spec(jobs.ModeConsult, "go")
			spec.Workspace = made
			rec, err := task.Prepare(context.Background(), f.store, spec, f.options())
			require.NoError(t, err)

			lookupDir := tc.lookup
			if tc.implicitAfter {
				lookupDir = ""
			}
			ws, err := task.Workspace(lookupDir)
			require.NoError(t, err)
			assert.Equal(t, made, ws, "one directory, one workspace")
			recs, err := f.store.List(ws, 0)
			require.NoError(t, err)
			var ids []string
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			assert.Contains(t, ids, rec.ID)
			got, err := f.store.Find(ws, rec.ID)
			require.NoError(t, err)
			assert.Equal(t, rec.ID, got.ID)
		})
	}
}
