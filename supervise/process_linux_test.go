package supervise

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestProcessDoubleForkDaemon: the child double-forks a setsid daemon (its
// intermediate exits, so the daemon is an orphan outside the group and the
// parent chain). In subreaper mode, which TestMain enables as the CLI
// does, the daemon is reparented to this process and the stop kills it.
func TestProcessDoubleForkDaemon(t *testing.T) {
	w := testkit.NewWatch(t)
	marker := w.Marker()
	ready := newReadyPIDs()
	s := startSelf(t, context.Background(), Options{IdleTimeout: waitLimit, StopGrace: 0, OnLine: ready.onLine}, "tree", marker, "daemon", "group")
	pids := ready.wait(t, s)
	require.Len(t, pids, 2)
	w.Add(pids...)
	s.Abort(failure.New(failure.Policy, "stop the daemon too"))
	o := waitOutcome(t, s)
	assert.Equal(t, Aborted, o.Ending)
	assert.Equal(t, StopForced, o.Stop)
	assert.Less(t, o.Duration, waitLimit)
	w.RequireGone(waitLimit)
}
