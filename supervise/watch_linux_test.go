package supervise

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// survivors scans the process table for live processes whose argv holds
// marker (a zombie's argv is empty, so zombies do not count).
func survivors(marker string) []int {
	names, _ := os.ReadDir("/proc")
	var found []int
	for _, n := range names {
		pid, err := strconv.Atoi(n.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + n.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, arg := range bytes.Split(cmdline, []byte{0}) {
			if string(arg) == marker {
				found = append(found, pid)
				break
			}
		}
	}
	return found
}

// treeWatch checks that a tree's processes are gone.
type treeWatch struct{ marker string }

// watchTree proves the scan sees every reported process before the stop.
func watchTree(t *testing.T, marker string, pids []int) *treeWatch {
	t.Helper()
	live := survivors(marker)
	for _, pid := range pids {
		require.Contains(t, live, pid, "process %d not found by the marker scan", pid)
	}
	return &treeWatch{marker: marker}
}

// gone reports whether no process carrying the marker is left.
func (w *treeWatch) gone() bool { return len(survivors(w.marker)) == 0 }

// goneAfter reports whether no process carrying marker is left.
func goneAfter(marker string, _ []int) bool { return len(survivors(marker)) == 0 }
