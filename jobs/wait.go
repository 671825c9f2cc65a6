package jobs

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// Wait judges rec (Judge, with grace) until it is final or budget has
// passed, reading it again from store every poll, and returns it as last
// judged: not final when the budget ended first, which is no error. A job
// judged died ends the wait even when its record could not be saved (the
// record returned then says so). A ctx ended first stops the wait with a
// failure.Cancelled error.
func Wait(ctx context.Context, store Store, rec *Record, grace, budget, poll time.Duration) (*Record, error) {
	deadline := time.Now().Add(budget)
	for rec = Judge(ctx, store, rec, grace); !rec.State.Terminal() && time.Now().Before(deadline); rec = Judge(ctx, store, rec, grace) {
		select {
		case <-ctx.Done():
			return rec, failure.Wrap(failure.Cancelled, context.Cause(ctx), "stopped waiting for job %s", rec.ID)
		case <-time.After(poll):
		}
		if fresh, err := store.Find(rec.Workspace, rec.ID); err == nil {
			rec = fresh
		}
	}
	return rec, nil
}

// OutcomeWithJob is the outcome line of a job's output (run --json's last
// line; without one, a bare outcome of rec's state) with rec added as its
// member "job" and a review's verdict as "review", both last
// (docs/contract.md, "JSON shapes").
func OutcomeWithJob(outcome jsontext.Value, rec *Record) (jsontext.Value, error) {
	if len(outcome) == 0 {
		outcome = jsontext.Value(fmt.Sprintf(`{"type":"outcome","status":%q}`, string(rec.State)))
	}
	// Encoded, never copied: the verdict as read back from the record file
	// is indented, and a --json line is one line.
	tail, err := json.Marshal(struct {
		Job    *Record        `json:"job"`
		Review jsontext.Value `json:"review,omitempty"`
	}{rec, rec.Review})
	if err != nil {
		return nil, failure.Wrap(failure.Unclassified, err, "encoding job %s", rec.ID)
	}
	line := append([]byte(strings.TrimSuffix(strings.TrimSpace(string(outcome)), "}")), ',')
	return append(line, tail[1:]...), nil
}
