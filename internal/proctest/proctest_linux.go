package proctest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// Tree watches the processes carrying one marker in their argv.
type Tree struct{ marker string }

// Watch starts watching a tree whose processes carry marker as one of
// their arguments, and fails t unless the scan finds each of pids now:
// that proves the scan would see them survive.
func Watch(t testing.TB, marker string, pids []int) *Tree {
	t.Helper()
	live := Survivors(marker)
	for _, pid := range pids {
		require.Contains(t, live, pid, "process %d not found by the marker scan", pid)
	}
	return &Tree{marker: marker}
}

// Gone reports whether no live process carries the marker.
func (w *Tree) Gone() bool { return len(Survivors(w.marker)) == 0 }

func (w *Tree) String() string {
	return fmt.Sprintf("carrying %s: %v", w.marker, Survivors(w.marker))
}

// GoneAfter reports whether no live process carries marker; pids are not
// needed on Linux.
func GoneAfter(marker string, _ []int) bool { return len(Survivors(marker)) == 0 }

// Survivors scans /proc for live processes with marker as one of their
// arguments. A zombie's argv is empty, so zombies do not count; nor do
// processes that vanish during the scan.
func Survivors(marker string) []int {
	entries, _ := os.ReadDir("/proc")
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
			if string(arg) == marker {
				found = append(found, pid)
				break
			}
		}
	}
	return found
}
