package jobs

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

func TestWait(t *testing.T) {
	const grace, poll = time.Hour, 5 * time.Millisecond
	tests := []struct {
		name      string
		state     State
		budget    time.Duration
		endsAfter bool // another writer makes the job done while it is waited for
		cancel    bool
		want      State
		wantKind  failure.Kind // "" for no error
	}{
		{name: "a final job is returned at once", state: StateDone, budget: time.Hour, want: StateDone},
		{name: "a job that ends while waited for", state: StateRunning, budget: time.Hour, endsAfter: true, want: StateDone},
		{name: "the budget ends first", state: StateRunning, budget: 20 * time.Millisecond, want: StateRunning},
		{name: "no budget is one judgement", state: StateRunning, want: StateRunning},
		{name: "a cancelled wait", state: StateRunning, budget: time.Hour, cancel: true, want: StateRunning, wantKind: failure.Cancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, ws := NewTestStore(t)
			rec := JobAt(ws, RoleTask, time.Now(), tt.state, ModeConsult, "")
			require.NoError(t, store.Save(rec))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			if tt.endsAfter {
				go func() {
					_, _ = store.update(ws, rec.ID, func(r *Record) bool {
						now := time.Now()
						r.State, r.EndedAt = StateDone, &now
						return true
					})
				}()
			}
			got, err := Wait(ctx, store, rec, grace, tt.budget, poll)
			if tt.wantKind != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantKind, failure.KindOf(err))
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, got.State)
		})
	}
}

func TestOutcomeWithJob(t *testing.T) {
	_, ws := NewTestStore(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	task := JobAt(ws, RoleTask, at, StateDone, ModeConsult, "s1")
	review := JobAt(ws, RoleReview, at, StateDone, ModeConsult, "s2")
	review.Review = jsontext.Value(`{"verdict":"approve","summary":"Fine.","findings":[]}`)
	running := JobAt(ws, RoleTask, at, StateRunning, ModeConsult, "")
	// A record file is indented, and so is the verdict read back from it.
	store, _ := NewTestStore(t)
	saved := JobAt(ws, RoleReview, at, StateDone, ModeConsult, "s3")
	saved.Review = review.Review
	require.NoError(t, store.Save(saved))
	stored, err := store.load(ws, saved.ID)
	require.NoError(t, err)
	require.Contains(t, string(stored.Review), "\n", "the verdict as the record file holds it")
	tests := []struct {
		name    string
		outcome string
		rec     *Record
		wantPre string // the line up to "job"
		review  bool
	}{
		{name: "a stored outcome", outcome: `{"type":"outcome","status":"done","exitCode":0}` + "\n", rec: task,
			wantPre: `{"type":"outcome","status":"done","exitCode":0,"job":`},
		{name: "no outcome yet", rec: running, wantPre: `{"type":"outcome","status":"running","job":`},
		{name: "a review's verdict comes last", outcome: `{"type":"outcome","status":"done"}`, rec: review,
			wantPre: `{"type":"outcome","status":"done","job":`, review: true},
		{name: "a review read back from its record file", outcome: `{"type":"outcome","status":"done"}`, rec: stored,
			wantPre: `{"type":"outcome","status":"done","job":`, review: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := OutcomeWithJob(jsontext.Value(tt.outcome), tt.rec)
			require.NoError(t, err)
			require.True(t, line.IsValid(), "%s", line)
			assert.NotContains(t, string(line), "\n", "one --json line")
			assert.True(t, len(line) > len(tt.wantPre) && string(line[:len(tt.wantPre)]) == tt.wantPre, "%s", line)
			var got struct {
				Job    Record         `json:"job"`
				Review jsontext.Value `json:"review"`
			}
			require.NoError(t, json.Unmarshal(line, &got))
			assert.Equal(t, tt.rec.ID, got.Job.ID)
			if tt.review {
				assert.JSONEq(t, string(tt.rec.Review), string(got.Review))
			} else {
				assert.Empty(t, got.Review)
			}
		})
	}
}
