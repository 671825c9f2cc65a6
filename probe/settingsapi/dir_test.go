package settingsapi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// tempDir is t.TempDir without os.RemoveAll: under Wine 8, Go's RemoveAll
// fails with "Invalid function" (its unlinkat path), while os.Remove works.
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "settingsapi-test-")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, removeTree(dir)) })
	return dir
}

func removeTree(path string) error {
	entries, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(path, e.Name())
		if e.IsDir() {
			err = removeTree(p)
		} else {
			err = os.Remove(p)
		}
		if err != nil {
			return err
		}
	}
	return os.Remove(path)
}
