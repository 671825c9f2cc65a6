package simtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TempDir is t.TempDir for both lanes: Go 1.26's os.RemoveAll deletes
// through an NT call Wine 8 does not implement ("Invalid function"), so the
// cleanup removes entries one by one with os.Remove, retrying for a few
// seconds because Windows keeps a just-killed executable's file locked
// until the process is fully gone.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cursorkit-sim-*")
	require.NoError(t, err)
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := removeTree(dir)
			if err == nil || time.Now().After(deadline) {
				assert.NoError(t, err)
				return
			}
			time.Sleep(50 * time.Millisecond) // a retry pace, not a wait for an event
		}
	})
	return dir
}

// removeTree removes dir and everything under it, deepest entries first.
func removeTree(dir string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, path)
		return nil
	})
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	for _, path := range slices.Backward(paths) {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
