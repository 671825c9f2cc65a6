package discovery_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testDir is t.TempDir with a cleanup that removes entries one by one:
// Go 1.26's os.RemoveAll deletes through an NT call Wine 8 does not
// implement ("Invalid function"), while os.Remove works everywhere. The
// path has its symlinks resolved (macOS: /var is /private/var).
func testDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cursorkit-discovery-*")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, removeTree(dir)) })
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	return real
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
		return err
	}
	for _, path := range slices.Backward(paths) {
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	return nil
}
