package testkit

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unlockWithin bounds how long a removal keeps retrying: Windows keeps the
// file of a just-killed executable locked until the process is fully gone,
// which under a loaded Wine takes a few seconds.
const unlockWithin = 10 * time.Second

// TempDir is t.TempDir for both lanes (t.TempDir's os.RemoveAll deletes
// through an NT call Wine 8 does not implement: "Invalid function"). It
// returns the path of a new empty directory, with symlinks resolved (macOS:
// /var is /private/var) and named after the test, that is removed with
// everything in it when t and its subtests finish. The removal goes entry by
// entry with os.Remove, deepest first, and retries for a few seconds while
// Windows keeps a just-killed executable locked. An entry still there after
// that (typically the image of a process that survived the test) fails t.
func TempDir(t testing.TB) string {
	t.Helper()
	dir := mkdirTemp(t)
	t.Cleanup(func() { assert.NoError(t, removeAll(dir, unlockWithin), "removing the test directory") })
	return dir
}

// mkdirTemp makes a new directory named after t, without a cleanup.
func mkdirTemp(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cursorkit-"+namePart(t.Name())+"-*")
	require.NoError(t, err)
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	return real
}

// removeAll removes dir and everything under it with os.Remove, deepest
// entries first. Until within has passed it retries what it could not
// remove, so a just-killed executable's lock can clear; then it returns the
// first error of the last attempt. A dir that does not exist is removed.
func removeAll(dir string, within time.Duration) error {
	limit := time.Now().Add(within)
	for {
		err := removeTree(dir)
		if err == nil || time.Now().After(limit) {
			return err
		}
		time.Sleep(50 * time.Millisecond) // a retry pace, not a wait for an event
	}
}

// removeTree makes one pass over dir, deepest entries first.
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

// namePart turns a test name into a short file-name-safe part, so a
// directory left behind says which test made it.
func namePart(name string) string {
	const maxLen = 32
	part := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	if len(part) > maxLen {
		part = part[:maxLen]
	}
	return part
}

// TempFile writes body to a file named name (mode 0600) in a new TempDir
// and returns its path: an operator's file for a test to name.
func TempFile(t testing.TB, name, body string) string {
	t.Helper()
	path := filepath.Join(TempDir(t), name)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}
