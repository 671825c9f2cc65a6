package safefile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// RemoveAll removes dir and everything under it, as os.RemoveAll does.
// Where that fails, it removes entry by entry, deepest first, with plain
// deletes, and judges by os.RemoveAll again: Wine answers some of
// os.RemoveAll's POSIX-semantics deletes with "Invalid function".
func RemoveAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	var paths []string
	_ = filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, path)
		}
		return nil
	})
	for i := len(paths) - 1; i >= 0; i-- {
		_ = os.Remove(paths[i])
	}
	return os.RemoveAll(dir)
}
