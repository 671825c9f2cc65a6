// Package proctest supports tests that start processes, on every OS: a
// test binary re-executes itself as a child (RunIfChild, Env, StartReady),
// and a test proves that the processes of a tree it started are gone after
// a stop (Watch, Tree.AssertGone): on Linux by scanning /proc for a Marker
// the test put in every process's argv (so an escapee the test never heard
// of counts too), on Windows through handles opened while the processes
// were alive (so PID reuse cannot fool it), elsewhere by PID.
//
// This package is for tests only.
package proctest

import (
	"testing"
	"time"
)

// AssertGone fails t unless Gone holds within the given time.
func (w *Tree) AssertGone(t testing.TB, within time.Duration) {
	t.Helper()
	if !poll(within, w.Gone) {
		t.Fatalf("processes of the tree survived %v: %s", within, w)
	}
}
