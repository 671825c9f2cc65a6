// Package proctest lets tests prove that the processes of a tree they
// started are gone after a stop, on every OS: on Linux by scanning /proc
// for a marker the test put in every process's argv (so an escapee the test
// never heard of counts too), on Windows through handles opened while the
// processes were alive (so PID reuse cannot fool it), elsewhere by PID.
//
// This package is for tests only.
package proctest

import (
	"testing"
	"time"
)

// AssertGone fails t unless Gone holds within the given time; it checks
// again every few milliseconds.
func (w *Tree) AssertGone(t testing.TB, within time.Duration) {
	t.Helper()
	limit := time.Now().Add(within)
	for !w.Gone() {
		if time.Now().After(limit) {
			t.Fatalf("processes of the tree survived %v: %s", within, w)
			return
		}
		time.Sleep(10 * time.Millisecond) // a polling pace, the limit bounds the wait
	}
}
