package jobs

import (
	"encoding/json/v2"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestDataDir(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	abs := testkit.TempDir(t)
	t.Run("CURSORKIT_DATA wins", func(t *testing.T) {
		got, err := DataDir(env(map[string]string{EnvData: abs + string(filepath.Separator), "HOME": "/h", "LocalAppData": `C:\x`}))
		require.NoError(t, err)
		assert.Equal(t, filepath.Clean(abs), got)
	})
	t.Run("a relative CURSORKIT_DATA is input", func(t *testing.T) {
		_, err := DataDir(env(map[string]string{EnvData: "rel/dir"}))
		assert.Equal(t, failure.Input, failure.KindOf(err))
	})
	t.Run("per-user default", func(t *testing.T) {
		got, err := DataDir(env(map[string]string{"HOME": abs, "LocalAppData": abs}))
		require.NoError(t, err)
		switch runtime.GOOS {
		case "windows":
			assert.Equal(t, filepath.Join(abs, "cursorkit"), got)
		case "darwin":
			assert.Equal(t, filepath.Join(abs, "Library", "Application Support", "cursorkit"), got)
		default:
			assert.Equal(t, filepath.Join(abs, ".local", "share", "cursorkit"), got)
		}
	})
	if runtime.GOOS == "linux" {
		t.Run("XDG_DATA_HOME when absolute", func(t *testing.T) {
			got, err := DataDir(env(map[string]string{"HOME": "/h", "XDG_DATA_HOME": abs}))
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(abs, "cursorkit"), got)
			got, err = DataDir(env(map[string]string{"HOME": abs, "XDG_DATA_HOME": "relative"}))
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(abs, ".local", "share", "cursorkit"), got)
		})
	}
	t.Run("nothing known is setup", func(t *testing.T) {
		_, err := DataDir(env(nil))
		assert.Equal(t, failure.Setup, failure.KindOf(err))
		assert.Contains(t, err.Error(), EnvData)
	})
}

func TestWorkspaceKey(t *testing.T) {
	a, b := filepath.Join(testkit.TempDir(t), "proj"), filepath.Join(testkit.TempDir(t), "proj")
	ka, kb := workspaceKey(a), workspaceKey(b)
	assert.NotEqual(t, ka, kb, "same name, different paths")
	assert.Equal(t, ka, workspaceKey(a+string(filepath.Separator)), "cleaned")
	assert.True(t, strings.HasPrefix(ka, "proj-"), ka)
	for _, name := range []string{"..", "a b/c", "ünï", strings.Repeat("x", 300), ".hidden", "C:"} {
		k := workspaceKey(filepath.Join(a, name))
		assert.NotContains(t, k, string(filepath.Separator))
		assert.NotContains(t, k, "..")
		assert.LessOrEqual(t, len(k), 40+1+16)
		assert.NotEqual(t, ".", k[:1])
	}
}

func TestIDs(t *testing.T) {
	now := time.Date(2026, 12, 1, 18, 5, 12, 0, time.FixedZone("x", 3600))
	id := NewID(RoleTask, now)
	assert.Regexp(t, `^task-20261201T170512Z-[0-9a-f]{8}$`, id)
	require.NoError(t, checkID(id))
	require.NoError(t, checkID(NewID(RoleReview, now)))
	assert.NotEqual(t, id, NewID(RoleTask, now), "random suffix")
	for _, bad := range []string{"", "task", "job-20261201T170512Z-0123abcd", "task-20261201T170512Z-0123ABCD",
		"task-20261301T170512Z-0123abcd", "task-20261201T170512Z-0123abc", "task-20261201T170512Z/0123abcd",
		"task-../../../etc/passwd-xx", "review-20261201T170512Z_0123abcd", strings.Repeat("y", 500)} {
		err := checkID(bad)
		assert.Equal(t, failure.Input, failure.KindOf(err), bad)
		assert.LessOrEqual(t, len(err.Error()), 200)
	}
}

func FuzzCheckID(f *testing.F) {
	f.Add("task-20261201T170512Z-0123abcd")
	f.Add("review-20261201T170512Z-0123abcd")
	f.Add("task-20261201T170512Z-../x")
	f.Fuzz(func(t *testing.T, id string) {
		if checkID(id) != nil {
			return
		}
		// A valid id is one file name, made only of what NewID writes.
		if strings.ContainsAny(id, `/\:. `) || filepath.Base(id) != id {
			t.Fatalf("checkID accepted %q", id)
		}
		for _, r := range id {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == 'T' || r == 'Z') {
				t.Fatalf("checkID accepted %q with %q", id, r)
			}
		}
	})
}

func sampleRecord(t *testing.T, workspace string) *Record {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	in, out := int64(10), int64(20)
	return &Record{Engine: "cursor", ID: NewID(RoleTask, now), Role: RoleTask, Mode: ModeConsult, Workspace: workspace,
		CursorVersion: "2026.10.15-abc", CursorBuildPath: "/bin/cursor-agent", SessionID: "s1", RequestID: "r1",
		RequestedModel: "gpt-5", ResolvedModel: "gpt-5-high", ObservedModel: "GPT-5", RequestedEffort: "high", EffortApplied: true,
		BillingPool: cursor.PoolAPI, Usage: event.Usage{Reported: true, InputTokens: &in, OutputTokens: &out},
		Sandbox: "workspace_readonly", Delivery: "foreground", AllowedTools: []string{"read_tool_call"}, HomeDir: "/d/runs/x/home",
		Warnings: []event.Warning{{Code: "late_close", Message: "m"}}, State: StateDone, CreatedAt: now, UpdatedAt: now, EndedAt: &now}
}

func TestStoreSaveLoad(t *testing.T) {
	s, ws := NewTestStore(t)
	rec := sampleRecord(t, ws)
	require.NoError(t, s.Save(rec))
	got, err := s.load(ws, rec.ID)
	require.NoError(t, err)
	assert.Equal(t, rec, got)

	path := s.recordPath(ws, rec.ID)
	assert.Equal(t, filepath.Join(s.Dir, "state", workspaceKey(ws), "jobs", rec.ID+".json"), path)
	if runtime.GOOS != "windows" {
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, member := range []string{`"engine": "cursor"`, `"cursorVersion"`, `"cursorBuildPath"`, `"sessionId"`, `"requestId"`,
		`"requestedModel"`, `"resolvedModel"`, `"observedModel"`, `"requestedEffort"`, `"effortApplied"`, `"billingPool"`,
		`"mode"`, `"role"`, `"usage"`, `"homeDir"`, `"warnings"`, `"state"`, `"failure": null`, `"createdAt"`, `"endedAt"`} {
		assert.Contains(t, string(data), member)
	}

	_, err = s.load(ws, NewID(RoleTask, time.Now()))
	assert.Equal(t, failure.Input, failure.KindOf(err))
	_, err = s.load(ws, "../../etc/passwd")
	assert.Equal(t, failure.Input, failure.KindOf(err))
	require.NoError(t, os.WriteFile(path, []byte("{torn"), 0o600))
	_, err = s.load(ws, rec.ID)
	assert.Equal(t, failure.Unclassified, failure.KindOf(err))
}

// TestConcurrentSavesNeverTear: a record has one writer, the job's own
// process, and any number of readers (status, result --wait): while it is
// rewritten, readers see one whole version or another, never a mix or a
// partial file, and the writer's saves all succeed (on Windows a rename
// waits out a reader's open handle).
func TestConcurrentSavesNeverTear(t *testing.T) {
	s, ws := NewTestStore(t)
	rec := sampleRecord(t, ws)
	require.NoError(t, s.Save(rec))
	done := make(chan struct{})
	var wg sync.WaitGroup
	// Wine refuses a rename over a file that readers keep opening for
	// longer than safefile's retries wait (measured: even one reader
	// polling every millisecond fails a save within 100), and lets an
	// opener find no file during a replace; Windows' MoveFileEx replace
	// does neither. The jobs commands that read records while a job
	// writes them have their Wine behaviour tested with them.
	testkit.SkipIfWine(t, "a rename over a file readers keep opening (MoveFileEx REPLACE_EXISTING)")
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				got, err := s.load(ws, rec.ID)
				if assert.NoError(t, err) {
					assert.Equal(t, rec.ID, got.ID)
					assert.Len(t, got.Warnings, 1)
				}
				time.Sleep(time.Millisecond) // a poller's pace, not a wait for anything
			}
		}()
	}
	r := *rec
	for i := range 100 {
		r.Warnings = []event.Warning{{Code: "w", Message: fmt.Sprintf("%d %s", i, strings.Repeat("x", i*100))}}
		require.NoError(t, s.Save(&r))
	}
	close(done)
	wg.Wait()
}

// TestSavesReplaceTheRecordWhole: every save replaces the record whole and
// leaves no temporary file beside it (both lanes).
func TestSavesReplaceTheRecordWhole(t *testing.T) {
	s, ws := NewTestStore(t)
	r := *sampleRecord(t, ws)
	for i := range 20 {
		r.Warnings = []event.Warning{{Code: "w", Message: fmt.Sprintf("%d %s", i, strings.Repeat("x", (20-i)*300))}}
		require.NoError(t, s.Save(&r))
		got, err := s.load(ws, r.ID)
		require.NoError(t, err)
		assert.Equal(t, r.Warnings, got.Warnings)
	}
	entries, err := os.ReadDir(filepath.Dir(s.recordPath(ws, r.ID)))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left")
}

// TestRecordReadBackIsTheJobItsFileNames: a record file whose content is
// another job's, or in a state cursorkit never writes, is refused naming
// the file, never shown under what it holds.
func TestRecordReadBackIsTheJobItsFileNames(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *Record)
		quoted string // from the content, never in the error
	}{
		{name: "another job's id", change: func(r *Record) { r.ID = NewID(RoleReview, time.Now().Add(-time.Hour)) }},
		{name: "a state outside the documented set", change: func(r *Record) { r.State = "exploded" }, quoted: "exploded"},
		{name: "no state", change: func(r *Record) { r.State = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ws := NewTestStore(t)
			rec := sampleRecord(t, ws)
			require.NoError(t, s.Save(rec))
			path := s.recordPath(ws, rec.ID)
			bad := *rec
			tt.change(&bad)
			data, err := json.Marshal(&bad)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data, 0o600))
			quoted := tt.quoted
			if bad.ID != rec.ID {
				quoted = bad.ID
			}

			for _, where := range []string{ws, ""} {
				_, err := s.Find(where, rec.ID)
				require.Error(t, err, "workspace %q", where)
				assert.Equal(t, failure.Process, failure.KindOf(err), "%v", err)
				assert.Contains(t, err.Error(), path)
				if quoted != "" {
					assert.NotContains(t, err.Error(), quoted)
				}
			}
			listed, err := s.List(ws, 0)
			require.NoError(t, err)
			assert.Empty(t, listed)
		})
	}
}
