package realcli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// Survivors returns the PIDs of the processes whose environment holds
// HOME=home: a run's processes (Env gives each run a home of its own,
// and every process the CLI starts inherits it). ok is false where this
// cannot be told.
func Survivors(home string) (pids []int, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	want := []byte("HOME=" + home + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or not ours to read
		}
		if bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)) {
			pids = append(pids, pid)
		}
	}
	return pids, true
}
