package jobs

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
)

// goneWorker is a job whose worker is gone: this process's PID under
// another creation time, which names no living process.
func goneWorker(t *testing.T, store Store, ws string) *Record {
	t.Helper()
	self, err := procid.Self()
	require.NoError(t, err)
	r := JobAt(ws, RoleTask, time.Now(), StateRunning, ModeConsult, "")
	r.Worker = &ProcessRef{PID: self.PID, Created: self.Created.Add(-time.Hour)}
	require.NoError(t, store.Save(r))
	return r
}

// unsavable are the ways a record comes to refuse its next save.
func unsavable() []struct {
	name  string
	spoil func(t *testing.T, store Store, r *Record)
} {
	return []struct {
		name  string
		spoil func(t *testing.T, store Store, r *Record)
	}{
		{"the record directory is read-only", func(t *testing.T, store Store, r *Record) {
			if runtime.GOOS == "windows" || os.Geteuid() == 0 {
				t.Skip("a read-only directory does not bind here (Windows, or root)")
			}
			dir := filepath.Dir(store.recordPath(r.Workspace, r.ID))
			require.NoError(t, os.Chmod(dir, 0o500))
			t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
		}},
		{"the record's lock cannot be taken", func(t *testing.T, store Store, r *Record) {
			lock := filepath.Join(store.runDir(r.ID), "record.lock")
			require.NoError(t, os.Remove(lock))
			require.NoError(t, os.Mkdir(lock, 0o700))
		}},
	}
}

func notSaved(ws []event.Warning) bool {
	return slices.ContainsFunc(ws, func(w event.Warning) bool { return w.Code == WarnRecordNotSaved })
}

// TestAnUnsavedVerdictStands: a job judged died whose record cannot be
// saved is returned died, saying its record was not saved, and a wait on
// it ends there.
func TestAnUnsavedVerdictStands(t *testing.T) {
	for _, tc := range unsavable() {
		t.Run(tc.name, func(t *testing.T) {
			store, ws := NewTestStore(t)
			r := goneWorker(t, store, ws)
			tc.spoil(t, store, r)

			got := Judge(t.Context(), store, r, 0)
			assert.Equal(t, StateDied, got.State)
			if assert.NotNil(t, got.Failure) {
				assert.Equal(t, failure.Died, got.Failure.Kind)
			}
			assert.NotNil(t, got.EndedAt)
			assert.True(t, notSaved(got.Warnings), "the verdict says it was not saved: %v", got.Warnings)
			assert.Equal(t, StateRunning, r.State, "the record judged is left as it was")
			assert.False(t, notSaved(r.Warnings))

			const budget = 5 * time.Second
			start := time.Now()
			waited, err := Wait(t.Context(), store, r, 0, budget, 5*time.Millisecond)
			require.NoError(t, err)
			assert.Equal(t, StateDied, waited.State)
			assert.Less(t, time.Since(start), budget, "the wait ends at the verdict")

			saved, err := store.load(ws, r.ID)
			require.NoError(t, err)
			assert.Equal(t, StateRunning, saved.State, "the file still reads as it was")
		})
	}
}
