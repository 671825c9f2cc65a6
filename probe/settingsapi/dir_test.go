package settingsapi

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tempDir is t.TempDir for both lanes. Go 1.26's os.RemoveAll fails under
// Wine 8 ("Invalid function"), so entries are removed one by one; and
// Windows refuses to delete a link of a running image, which a simulator
// installed by simtest.Install is (a hard link of this test binary), so
// such a file and the directories above it stay behind on Windows only.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cursorkit-settingsapi-*")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, removeTree(dir)) })
	return dir
}

func removeTree(dir string) error {
	var paths []string
	if err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		paths = append(paths, path)
		return err
	}); err != nil {
		return err
	}
	kept := false
	for _, path := range slices.Backward(paths) {
		err := os.Remove(path)
		if err != nil && runtime.GOOS == "windows" && (errors.Is(err, fs.ErrPermission) || kept) {
			kept = true // a running image, or a directory above one
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}
