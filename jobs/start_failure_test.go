package jobs_test

import (
	"encoding/json/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
)

// TestAFailedStartEndsTheJobAndLeavesNoPrompt: a background start that
// fails leaves the record final with its end time, an error of a kind that
// names what failed (the worker program, the prompt file), and no prompt
// file for a worker that will never read it.
func TestAFailedStartEndsTheJobAndLeavesNoPrompt(t *testing.T) {
	store, ws := jobs.NewTestStore(t)
	missing := filepath.Join(testkit.TempDir(t), "no-such-worker")
	for _, tc := range []struct {
		name   string
		block  func(t *testing.T, id string) // makes the start fail, before it
		worker string
		names  func(id string) string // what the error names
		kind   failure.Kind
		prompt bool // whether something stays at the prompt file's path
	}{
		{
			name:   "a worker program that does not exist",
			block:  func(*testing.T, string) {},
			worker: missing,
			names:  func(string) string { return strconv.Quote(missing) },
			kind:   failure.MissingCLI,
		},
		{
			name: "a prompt file that cannot be written",
			block: func(t *testing.T, id string) {
				// A directory that is not empty where the prompt goes:
				// no write makes it a file and no removal takes it.
				require.NoError(t, os.MkdirAll(filepath.Join(store.Dir, "runs", id, "prompt", "x"), 0o700))
			},
			worker: os.Args[0],
			names:  func(id string) string { return filepath.Join(store.Dir, "runs", id, "prompt") },
			kind:   failure.Setup,
			prompt: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startJob(t, store, ws, time.Now().Add(-time.Minute), "")
			tc.block(t, r.ID)
			err := jobs.Start(t.Context(), store, r, "PROMPT-TEXT-42", tc.worker)
			require.Error(t, err)
			assert.Equal(t, tc.kind, failure.KindOf(err), "%v", err)
			assert.Contains(t, err.Error(), tc.names(r.ID))
			assert.NotContains(t, err.Error(), "PROMPT-TEXT-42", "no prompt text in errors")

			data, err := os.ReadFile(store.RecordPath(ws, r.ID))
			require.NoError(t, err)
			var onDisk struct {
				State     jobs.State    `json:"state"`
				Failure   *jobs.Failure `json:"failure"`
				CreatedAt time.Time     `json:"createdAt"`
				UpdatedAt time.Time     `json:"updatedAt"`
				EndedAt   *time.Time    `json:"endedAt"`
			}
			require.NoError(t, json.Unmarshal(data, &onDisk))
			assert.Equal(t, jobs.StateError, onDisk.State)
			require.NotNil(t, onDisk.Failure)
			assert.Equal(t, tc.kind, onDisk.Failure.Kind)
			assert.Contains(t, onDisk.Failure.Message, tc.names(r.ID))
			require.NotNil(t, onDisk.EndedAt, "a final record has its end time")
			assert.True(t, onDisk.UpdatedAt.After(onDisk.CreatedAt), "updatedAt %v, createdAt %v", onDisk.UpdatedAt, onDisk.CreatedAt)
			assert.True(t, onDisk.EndedAt.Equal(onDisk.UpdatedAt))

			if !tc.prompt {
				assert.NoFileExists(t, filepath.Join(store.Dir, "runs", r.ID, "prompt"), "no worker will read it")
			}
		})
	}
}
