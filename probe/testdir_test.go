package probe

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testDir is t.TempDir with a cleanup that removes entries one by one:
// Go 1.26's os.RemoveAll deletes through an NT call Wine 8 does not
// implement ("Invalid function"), while os.Remove works everywhere.
func testDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cursorkit-probe-*")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, removeTree(dir)) })
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
		return err
	}
	var kept []string
	for _, path := range slices.Backward(paths) {
		if err := os.Remove(path); err != nil {
			// Windows refuses to delete any link of a running image: the
			// simulator is a hard link of this test binary. It stays in the
			// temporary directory, and so do the directories above it.
			if runtime.GOOS == "windows" && (errors.Is(err, fs.ErrPermission) || isDirNotEmpty(path, kept)) {
				kept = append(kept, path)
				continue
			}
			return err
		}
	}
	return nil
}

// isDirNotEmpty reports whether path is a directory above a kept entry.
func isDirNotEmpty(path string, kept []string) bool {
	for _, k := range kept {
		if strings.HasPrefix(k, path+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
