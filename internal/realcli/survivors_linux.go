package realcli

import (
	"bytes"
	"os"
	"path/filepath"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// Survivors returns the PIDs of the processes whose environment holds
// HOME=home: a run's processes (Env gives each run a home of its own,
// and every process the CLI starts inherits it). ok is false where this
// cannot be told.
func Survivors(home string) (pids []int, ok bool) {
	want := []byte("HOME=" + home + "\x00")
	return testkit.PIDs(func(_ int, dir string) bool {
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		// An unreadable environment is gone, or not ours to read.
		return err == nil && (bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)))
	})
}
