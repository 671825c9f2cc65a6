package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// readDeadline bounds a read that must not block.
const readDeadline = 10 * time.Second

type readResult struct {
	data []byte
	err  error
}

// readWithin reads path with ReadChecked and fails the test when the read
// does not return within readDeadline (a blocked open or read).
func readWithin(t *testing.T, path string, limit int64, check func(fs.FileInfo) error) ([]byte, error) {
	t.Helper()
	done := make(chan readResult, 1)
	go func() {
		data, err := ReadChecked(path, limit, check)
		done <- readResult{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(readDeadline):
		t.Fatalf("reading %s did not return within %s", path, readDeadline)
		return nil, nil
	}
}

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := testkit.TempDir(t)
	regular := filepath.Join(dir, "regular.json")
	require.NoError(t, os.WriteFile(regular, []byte(`{"a":1}`), 0o600))
	sub := filepath.Join(dir, "a dir")
	require.NoError(t, os.Mkdir(sub, 0o700))
	sparse := filepath.Join(dir, "sparse")
	f, err := os.Create(sparse)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(300<<20)) // 300 MiB, allocated lazily
	require.NoError(t, f.Close())

	tests := []readCase{
		{name: "regular", path: regular, wantData: `{"a":1}`},
		{name: "directory", path: sub, wantErr: notRegular("a directory")},
		{name: "300 MiB file", path: sparse, wantErr: tooLarge(1 << 20)},
		{name: "absent", path: filepath.Join(dir, "absent"), wantErr: func(t *testing.T, err error) {
			assert.ErrorIs(t, err, fs.ErrNotExist)
		}},
	}
	tests = append(tests, specialFiles(t, dir)...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checked := false
			data, err := readWithin(t, tt.path, 1<<20, func(info fs.FileInfo) error {
				checked = true
				assert.True(t, info.Mode().IsRegular(), "check sees only regular files")
				return nil
			})
			if tt.wantErr != nil {
				require.Error(t, err)
				tt.wantErr(t, err)
				assert.Nil(t, data)
				assert.False(t, checked && !errors.As(err, new(*TooLargeError)), "check is not called for a refused file")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantData, string(data))
			assert.True(t, checked, "check is called before a read")
		})
	}
}

// readCase is one file TestReadRefusesWhatIsNotARegularFile reads: the
// data it must return, or a check of its error.
type readCase struct {
	name     string
	path     string
	wantData string
	wantErr  func(t *testing.T, err error)
}

func notRegular(what string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		var nr *NotRegularError
		require.ErrorAs(t, err, &nr, "%v", err)
		assert.Contains(t, err.Error(), "is not a regular file but "+what)
	}
}

func tooLarge(limit int64) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		var tl *TooLargeError
		require.ErrorAs(t, err, &tl, "%v", err)
		assert.Equal(t, limit, tl.Limit)
	}
}

func TestReadFollowsSymbolicLinks(t *testing.T) {
	dir := testkit.TempDir(t)
	target := filepath.Join(dir, "target.json")
	require.NoError(t, os.WriteFile(target, []byte("through the link"), 0o600))
	link := filepath.Join(dir, "link.json")
	testkit.Symlink(t, target, link)
	data, err := readWithin(t, link, 64, nil)
	require.NoError(t, err)
	assert.Equal(t, "through the link", string(data))

	dangling := filepath.Join(dir, "dangling.json")
	testkit.Symlink(t, filepath.Join(dir, "missing"), dangling)
	_, err = readWithin(t, dangling, 64, nil)
	assert.ErrorIs(t, err, fs.ErrNotExist, "a dangling link reads as a missing file")
}

func TestReadCheckErrorIsReturnedBeforeReading(t *testing.T) {
	path := filepath.Join(testkit.TempDir(t), "f")
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("x", 10)), 0o600))
	refused := errors.New("refused by check")
	var size int64
	_, err := readWithin(t, path, 64, func(info fs.FileInfo) error {
		size = info.Size()
		return refused
	})
	assert.Same(t, refused, err)
	assert.Equal(t, int64(10), size, "check sees the opened file's information")
}

func TestWriteFollowsASymbolicLink(t *testing.T) {
	dir := testkit.TempDir(t)
	targetDir := filepath.Join(dir, "dotfiles")
	require.NoError(t, os.Mkdir(targetDir, 0o700))
	target := filepath.Join(targetDir, "settings.json")
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o600))
	linkDir := filepath.Join(dir, "config")
	require.NoError(t, os.Mkdir(linkDir, 0o700))
	link := filepath.Join(linkDir, "settings.json")
	testkit.Symlink(t, target, link)

	require.NoError(t, Write(link, []byte("new"), 0o644))
	info, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&fs.ModeSymlink, "the link is still a link")
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "new", string(data), "the file the link points to holds the new content")
	for _, d := range []string{targetDir, linkDir} {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		assert.Len(t, entries, 1, "no temporary file is left in %s", d)
	}
	if !chmodUnsupported() {
		info, err := os.Stat(target)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the target keeps its mode")
	}
}

func TestWriteRefusesABrokenLinkAndNonRegularFiles(t *testing.T) {
	dir := testkit.TempDir(t)
	sub := filepath.Join(dir, "a dir")
	require.NoError(t, os.Mkdir(sub, 0o700))
	err := Write(sub, []byte("x"), 0o600)
	var nr *NotRegularError
	require.ErrorAs(t, err, &nr, "%v", err)
	assert.True(t, nr.Mode.IsDir())

	dangling := filepath.Join(dir, "dangling.json")
	missing := filepath.Join(dir, "missing.json")
	testkit.Symlink(t, missing, dangling)
	err = Write(dangling, []byte("x"), 0o600)
	var broken *BrokenLinkError
	require.ErrorAs(t, err, &broken, "%v", err)
	assert.Contains(t, err.Error(), "is a symbolic link to a file that does not exist")
	_, err = os.Stat(missing)
	assert.ErrorIs(t, err, fs.ErrNotExist, "nothing is created through a broken link")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "no temporary file is left")
}

// openWithin reads path through Open and fails the test when the open or
// the read does not return within readDeadline.
func openWithin(t *testing.T, path string, limit int64) ([]byte, error) {
	t.Helper()
	done := make(chan readResult, 1)
	go func() {
		r, err := Open(path, limit)
		if err != nil {
			done <- readResult{nil, err}
			return
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		done <- readResult{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(readDeadline):
		t.Fatalf("reading %s through Open did not return within %s", path, readDeadline)
		return nil, nil
	}
}

func TestOpenStreamsOnlyARegularFileWithinItsLimit(t *testing.T) {
	dir := testkit.TempDir(t)
	regular := filepath.Join(dir, "regular.ndjson")
	require.NoError(t, os.WriteFile(regular, []byte("0123456789"), 0o600))
	sub := filepath.Join(dir, "a dir")
	require.NoError(t, os.Mkdir(sub, 0o700))

	tests := []readCase{
		{name: "regular", path: regular, wantData: "0123456789"},
		{name: "longer than the limit", path: regular + "-big", wantErr: tooLarge(10)},
		{name: "directory", path: sub, wantErr: notRegular("a directory")},
		{name: "absent", path: filepath.Join(dir, "absent"), wantErr: func(t *testing.T, err error) {
			assert.ErrorIs(t, err, fs.ErrNotExist)
		}},
	}
	require.NoError(t, os.WriteFile(regular+"-big", []byte("0123456789x"), 0o600))
	tests = append(tests, specialFiles(t, dir)...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := openWithin(t, tt.path, 10)
			if tt.wantErr != nil {
				require.Error(t, err)
				tt.wantErr(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantData, string(data))
		})
	}
}

func TestOpenStopsAFileThatGrowsPastItsLimit(t *testing.T) {
	path := filepath.Join(testkit.TempDir(t), "growing")
	require.NoError(t, os.WriteFile(path, []byte("0123"), 0o600))
	r, err := Open(path, 10)
	require.NoError(t, err)
	defer r.Close()
	// A writer appends past the limit after the open's size check.
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("x", 100)), 0o600))
	data, err := io.ReadAll(r)
	tooLarge(10)(t, err)
	assert.Len(t, data, 10, "no byte past the limit is handed on")
}
