package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestWriteAndRead(t *testing.T) {
	path := filepath.Join(testkit.TempDir(t), "new dir", "file.json")
	require.NoError(t, Write(path, []byte("one"), 0o600))
	data, err := Read(path, 16)
	require.NoError(t, err)
	assert.Equal(t, "one", string(data))
	if runtime.GOOS != "windows" {
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "a new file gets perm")
		require.NoError(t, os.Chmod(path, 0o644))
	}
	require.NoError(t, Write(path, []byte("two, longer"), 0o600))
	data, err = Read(path, 16)
	require.NoError(t, err)
	assert.Equal(t, "two, longer", string(data))
	if runtime.GOOS != "windows" {
		info, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), info.Mode().Perm(), "an existing file keeps its mode")
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestReadBounds(t *testing.T) {
	dir := testkit.TempDir(t)
	path := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("x", 17)), 0o600))
	_, err := Read(path, 16)
	var tooLarge *TooLargeError
	require.ErrorAs(t, err, &tooLarge)
	assert.Equal(t, int64(16), tooLarge.Limit)
	data, err := Read(path, 17)
	require.NoError(t, err)
	assert.Len(t, data, 17)

	_, err = Read(filepath.Join(dir, "absent"), 16)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "%v", err)
}

// TestReadersNeverSeeATornFile: a reader racing a writer sees one whole
// version or the other.
func TestReadersNeverSeeATornFile(t *testing.T) {
	readersNeverSeeATornFile(t, filepath.Join(testkit.TempDir(t), "raced"))
}

// TestReadersNeverSeeATornFileThroughALink is the same race through a
// symbolic link, which stays a link.
func TestReadersNeverSeeATornFileThroughALink(t *testing.T) {
	dir := testkit.TempDir(t)
	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	link := filepath.Join(dir, "link")
	testkit.Symlink(t, target, link)
	readersNeverSeeATornFile(t, link)
	info, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&fs.ModeSymlink, "the link is still a link")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary file is left")
}

func readersNeverSeeATornFile(t *testing.T, path string) {
	version := func(i int) string { return fmt.Sprintf("v%03d:%s", i, strings.Repeat("z", i*97)) }
	require.NoError(t, Write(path, []byte(version(0)), 0o600))
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; i < 60; i++ {
			assert.NoError(t, Write(path, []byte(version(i)), 0o600))
		}
	})
	for range 60 {
		data, err := Read(path, 1<<20)
		require.NoError(t, err)
		var i int
		_, err = fmt.Sscanf(string(data), "v%03d:", &i)
		require.NoError(t, err)
		assert.Equal(t, version(i), string(data), "a torn read")
	}
	wg.Wait()
}

// TestRemoveAll: a file, a tree, nothing, and a link (never followed).
func TestRemoveAll(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{name: "a file", make: func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
		}},
		{name: "a tree", make: func(t *testing.T, path string) {
			require.NoError(t, os.MkdirAll(filepath.Join(path, "a", "b"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(path, "a", "b", "f"), []byte("x"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(path, "g"), []byte("x"), 0o644))
		}},
		{name: "nothing there", make: func(*testing.T, string) {}},
		{name: "a link to a directory, whose files stay", make: func(t *testing.T, path string) {
			target := filepath.Join(filepath.Dir(path), "kept")
			require.NoError(t, os.Mkdir(target, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(target, "f"), []byte("x"), 0o644))
			testkit.Symlink(t, target, path)
			t.Cleanup(func() { assert.FileExists(t, filepath.Join(target, "f"), "the link's target untouched") })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(testkit.TempDir(t), "target")
			tt.make(t, path)
			require.NoError(t, RemoveAll(path))
			_, err := os.Lstat(path)
			assert.ErrorIs(t, err, fs.ErrNotExist)
		})
	}
}
