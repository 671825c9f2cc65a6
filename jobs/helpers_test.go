package jobs

import (
	"testing"
	"time"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// The helpers of every test of this package, exported for the external
// ones (package jobs_test) too.

// NewTestStore is an empty store and a workspace, both removed at cleanup.
func NewTestStore(t testing.TB) (Store, string) {
	t.Helper()
	return Store{Dir: testkit.TempDir(t)}, testkit.TempDir(t)
}

// JobAt is a record of workspace ws started at t, in state st (ended a
// second later when st is final), delivered in the background.
func JobAt(ws string, role Role, t time.Time, st State, mode Mode, session string) *Record {
	r := &Record{Engine: "cursor", ID: NewID(role, t), Role: role, Mode: mode, Workspace: ws, SessionID: session,
		Delivery: DeliveryBackground, State: st, Warnings: []event.Warning{}, CreatedAt: t.UTC(), UpdatedAt: t.UTC()}
	if st.Terminal() {
		e := t.UTC().Add(time.Second)
		r.EndedAt = &e
	}
	return r
}
