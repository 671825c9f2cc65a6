package jobs

import (
	"encoding/json/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

func TestAccept(t *testing.T) {
	started := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		state   State
		accept  AcceptanceState
		note    string
		wantErr string // "" for none; else the failure.Input message holds it
	}{
		{name: "a done job accepted with a note", state: StateDone, accept: AcceptanceAccepted, note: "checked the diff — fine"},
		{name: "a failed job rejected", state: StateError, accept: AcceptanceRejected, note: "wrong file"},
		{name: "a died job unverified, no note", state: StateDied, accept: AcceptanceUnverified},
		{name: "a cancelled job", state: StateCancelled, accept: AcceptanceRejected},
		{name: "a note of the largest size", state: StateDone, accept: AcceptanceAccepted, note: strings.Repeat("é", MaxNoteBytes/2)},
		{name: "a running job", state: StateRunning, accept: AcceptanceAccepted, wantErr: "only a finished job"},
		{name: "a starting job", state: StateStarting, accept: AcceptanceAccepted, wantErr: "only a finished job"},
		{name: "an unknown verdict", state: StateDone, accept: "ok", wantErr: `"ok" is not an acceptance: want accepted, rejected or unverified`},
		{name: "no verdict", state: StateDone, accept: "", wantErr: "want accepted, rejected or unverified"},
		{name: "a verdict in another case", state: StateDone, accept: "Accepted", wantErr: "is not an acceptance"},
		{name: "a note of two lines", state: StateDone, accept: AcceptanceAccepted, note: "first\nsecond", wantErr: "control character at byte 5; it is one line"},
		{name: "a note with a carriage return", state: StateDone, accept: AcceptanceAccepted, note: "a\rb", wantErr: "control character"},
		{name: "a note with an escape", state: StateDone, accept: AcceptanceAccepted, note: "\x1b[31mred", wantErr: "control character at byte 0"},
		{name: "a note over the bound", state: StateDone, accept: AcceptanceAccepted, note: strings.Repeat("x", MaxNoteBytes+1), wantErr: "the note is 4097 bytes; at most 4096"},
		{name: "a note that is not UTF-8", state: StateDone, accept: AcceptanceAccepted, note: "caf\xe9", wantErr: "not UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ws := NewTestStore(t)
			r := JobAt(ws, RoleTask, started, tt.state, ModeWrite, "sess")
			require.NoError(t, s.Save(r))
			before := time.Now()
			got, err := s.Accept(ws, r.ID, tt.accept, tt.note)
			saved, lerr := s.load(ws, r.ID)
			require.NoError(t, lerr)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, failure.Input, failure.KindOf(err))
				assert.Contains(t, err.Error(), tt.wantErr)
				if tt.note != "" {
					assert.NotContains(t, err.Error(), tt.note, "the note is never quoted")
				}
				assert.JSONEq(t, encoded(t, r), encoded(t, saved), "the record is left as it was")
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got.Acceptance)
			assert.Equal(t, tt.accept, got.Acceptance.State)
			assert.Equal(t, tt.note, got.Acceptance.Note)
			assert.False(t, got.Acceptance.At.Before(before))
			assert.True(t, got.Acceptance.At.Equal(got.UpdatedAt))
			assert.JSONEq(t, encoded(t, got), encoded(t, saved), "what is returned is what is saved")
			// Nothing but the acceptance and the update time changes.
			unchanged := *saved
			unchanged.Acceptance, unchanged.UpdatedAt = nil, r.UpdatedAt
			assert.JSONEq(t, encoded(t, r), encoded(t, &unchanged))
		})
	}
}

func encoded(t *testing.T, r *Record) string {
	t.Helper()
	data, err := json.Marshal(r)
	require.NoError(t, err)
	return string(data)
}

func TestAcceptanceIsTheOneWriteOfAFinalRecord(t *testing.T) {
	s, ws := NewTestStore(t)
	r := JobAt(ws, RoleTask, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), StateDone, ModeConsult, "sess")
	require.NoError(t, s.Save(r))

	_, err := s.Accept(ws, r.ID, AcceptanceUnverified, "")
	require.NoError(t, err)
	got, err := s.Accept(ws, r.ID, AcceptanceAccepted, "looked again")
	require.NoError(t, err)
	assert.Equal(t, AcceptanceAccepted, got.Acceptance.State, "a later verdict replaces the earlier one")

	err = s.Save(r)
	require.ErrorIs(t, err, ErrFinal, "a late save of the job's end does not drop the acceptance")
	saved, err := s.load(ws, r.ID)
	require.NoError(t, err)
	assert.Equal(t, "looked again", saved.Acceptance.Note)
	assert.Equal(t, StateDone, saved.State)

	_, err = s.Accept(ws, "task-20200101T000000Z-00000000", AcceptanceAccepted, "")
	assert.Equal(t, failure.Input, failure.KindOf(err), "an unknown job")
	_, err = s.Accept(ws, "../x", AcceptanceAccepted, "")
	assert.Equal(t, failure.Input, failure.KindOf(err), "not a job id")
}

func TestAcceptanceShapes(t *testing.T) {
	s, ws := NewTestStore(t)
	r := JobAt(ws, RoleTask, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), StateDone, ModeConsult, "sess")
	require.NoError(t, s.Save(r))

	record, err := json.Marshal(r)
	require.NoError(t, err)
	assert.NotContains(t, string(record), `"acceptance"`, "a record without one reads as before")
	entry, err := json.Marshal(r.project())
	require.NoError(t, err)
	assert.Contains(t, string(entry), `"acceptance":null`, "every history entry has the member")

	got, err := s.Accept(ws, r.ID, AcceptanceRejected, "no tests")
	require.NoError(t, err)
	at, err := json.Marshal(got.Acceptance.At)
	require.NoError(t, err)
	want := `"acceptance":{"state":"rejected","note":"no tests","at":` + string(at) + `}`
	record, err = json.Marshal(got)
	require.NoError(t, err)
	assert.Contains(t, string(record), want)
	entry, err = json.Marshal(got.project())
	require.NoError(t, err)
	assert.Contains(t, string(entry), want)
	var back Record
	require.NoError(t, json.Unmarshal(record, &back))
	assert.Equal(t, got.Acceptance.State, back.Acceptance.State)
	assert.True(t, got.Acceptance.At.Equal(back.Acceptance.At))
}
