package jobs

import (
	"bytes"
	"context"
	"log"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/turn"
)

// waiting is a background job waiting for its worker, its prompt handed
// over as Start does.
func waiting(t *testing.T, s Store, ws, prompt string) *Record {
	t.Helper()
	r := JobAt(ws, RoleTask, time.Now(), StateStarting, ModeConsult, "")
	require.NoError(t, s.Save(r))
	require.NoError(t, os.WriteFile(s.promptFile(r.ID), []byte(prompt), 0o600))
	return r
}

func TestWork(t *testing.T) {
	s, ws := NewTestStore(t)
	self, err := procid.Self()
	require.NoError(t, err)

	t.Run("runs the job with its prompt and output", func(t *testing.T) {
		r := waiting(t, s, ws, "the prompt")
		var seen *Record
		var prompt string
		w := Worker{Run: func(_ context.Context, rec *Record, p string, out *OutputWriter) error {
			seen, prompt = rec, p
			assert.NoFileExists(t, s.promptFile(rec.ID), "read and removed before the run")
			require.NoError(t, out.Outcome(turn.Outcome{Status: turn.StatusDone}))
			now := time.Now()
			rec.State, rec.EndedAt = StateDone, &now
			return s.Save(rec)
		}}
		require.NoError(t, w.Work(t.Context(), s, "", r.ID))
		assert.Equal(t, "the prompt", prompt)
		require.NotNil(t, seen.Worker)
		assert.Equal(t, self.PID, seen.Worker.PID, "the worker records itself")
		assert.Equal(t, s.outputPath(r.ID), seen.Output)
		got, err := s.load(ws, r.ID)
		require.NoError(t, err)
		assert.Equal(t, StateDone, got.State)
	})
	// A run's failure before it ended the job is recorded: a cancel as
	// cancelled, anything else as error.
	for _, tt := range []struct {
		kind  failure.Kind
		state State
	}{
		{failure.MissingCLI, StateError},
		{failure.Cancelled, StateCancelled},
	} {
		t.Run("a run that failed with "+string(tt.kind)+" before it ended the job", func(t *testing.T) {
			r := waiting(t, s, ws, "p")
			w := Worker{Run: func(context.Context, *Record, string, *OutputWriter) error {
				return failure.New(tt.kind, "the run failed")
			}}
			err := w.Work(t.Context(), s, ws, r.ID)
			assert.Equal(t, tt.kind, failure.KindOf(err))
			got, lerr := s.load(ws, r.ID)
			require.NoError(t, lerr)
			assert.Equal(t, tt.state, got.State)
			assert.Equal(t, tt.kind, got.Failure.Kind)
			assert.NotNil(t, got.EndedAt)
		})
	}
	t.Run("a job that ended before its worker came runs nothing", func(t *testing.T) {
		r := waiting(t, s, ws, "p")
		_, err := s.update(ws, r.ID, func(cur *Record) bool { markCancelled(cur); return true })
		require.NoError(t, err)
		var logged bytes.Buffer
		w := Worker{Log: log.New(&logged, "", 0), Run: func(context.Context, *Record, string, *OutputWriter) error {
			t.Error("ran a cancelled job")
			return nil
		}}
		require.NoError(t, w.Work(t.Context(), s, ws, r.ID))
		assert.Contains(t, logged.String(), "before its worker started: nothing to run")
		assert.NoFileExists(t, s.promptFile(r.ID), "the prompt does not stay behind")
		got, err := s.load(ws, r.ID)
		require.NoError(t, err)
		assert.Equal(t, StateCancelled, got.State)
		assert.Nil(t, got.Worker)
	})
	t.Run("a missing prompt fails the job", func(t *testing.T) {
		r := waiting(t, s, ws, "p")
		require.NoError(t, os.Remove(s.promptFile(r.ID)))
		err := Worker{Run: func(context.Context, *Record, string, *OutputWriter) error { return nil }}.Work(t.Context(), s, ws, r.ID)
		assert.Equal(t, failure.Setup, failure.KindOf(err))
		got, lerr := s.load(ws, r.ID)
		require.NoError(t, lerr)
		assert.Equal(t, StateError, got.State)
	})
	t.Run("an unknown job or no Run", func(t *testing.T) {
		w := Worker{Run: func(context.Context, *Record, string, *OutputWriter) error { return nil }}
		assert.Equal(t, failure.Input, failure.KindOf(w.Work(t.Context(), s, "", NewID(RoleTask, time.Now()))))
		r := waiting(t, s, ws, "p")
		assert.Equal(t, failure.Input, failure.KindOf(Worker{}.Work(t.Context(), s, ws, r.ID)))
	})
}
