package jobs

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/failure"
)

// MaxNoteBytes bounds an acceptance's note.
const MaxNoteBytes = 4 << 10

// Accept records the operator's verdict on job id of workspace (the
// record's own Workspace, as for Find), which must be final, and returns
// the record as saved. It is the one write a final record takes: in one
// turn of the record's writers it sets Acceptance, replacing an earlier
// one, and UpdatedAt, nothing else, so a late save of the job's end finds
// the record moved on (ErrFinal) instead of dropping the acceptance. An
// acceptance racing the prune of its job may write the record back
// without its run directory, which the next prune removes.
//
// A state other than accepted, rejected or unverified, a note over
// MaxNoteBytes, not UTF-8 or holding a control character (it is one line
// of text), an unknown job and a job not final yet are failure.Input; the
// errors never quote the note.
func (s Store) Accept(workspace, id string, state AcceptanceState, note string) (*Record, error) {
	if err := checkAcceptance(state, note); err != nil {
		return nil, err
	}
	r, err := s.update(workspace, id, func(r *Record) bool {
		if !r.State.Terminal() {
			return false
		}
		now := time.Now()
		r.Acceptance = &Acceptance{State: state, Note: note, At: now}
		r.UpdatedAt = now
		return true
	})
	if err != nil {
		return nil, err
	}
	if !r.State.Terminal() {
		return nil, failure.New(failure.Input, "job %s is %s: only a finished job (done, error, cancelled or died) is accepted", id, r.State)
	}
	return r, nil
}

// checkAcceptance is Accept's check of what it is given.
func checkAcceptance(state AcceptanceState, note string) error {
	if !state.known() {
		return failure.New(failure.Input, "%s is not an acceptance: want %s, %s or %s",
			quoteBounded(string(state)), AcceptanceAccepted, AcceptanceRejected, AcceptanceUnverified)
	}
	if len(note) > MaxNoteBytes {
		return failure.New(failure.Input, "the note is %d bytes; at most %d", len(note), MaxNoteBytes)
	}
	if !utf8.ValidString(note) {
		return failure.New(failure.Input, "the note is not UTF-8 text")
	}
	if i := strings.IndexFunc(note, unicode.IsControl); i >= 0 {
		return failure.New(failure.Input, "the note holds a control character at byte %d; it is one line of text", i)
	}
	return nil
}
