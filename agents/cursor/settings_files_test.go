package cursor

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestUpdateSettingsThroughASymlink: an operator whose settings file is a
// link into a dotfiles directory keeps the link; the file it points to is
// updated with its other members.
func TestUpdateSettingsThroughASymlink(t *testing.T) {
	dir := testkit.TempDir(t)
	target := filepath.Join(dir, "dotfiles", "cursorkit.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o700))
	require.NoError(t, os.WriteFile(target, []byte(`{"theme":"dark","cursorCliBinaryPath":"/old"}`), 0o600))
	link := filepath.Join(dir, "config", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o700))
	testkit.Symlink(t, target, link)

	_, err := UpdateSettings(link, func(s *Settings) error { s.BinaryPath = "/new"; return nil })
	require.NoError(t, err)
	info, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&fs.ModeSymlink, "the settings file is still a link")
	s, err := LoadSettings(target)
	require.NoError(t, err)
	assert.Equal(t, "/new", s.BinaryPath, "the linked file is updated")
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"theme": "dark"`)
}

func TestUpdateSettingsRefusesABrokenSymlink(t *testing.T) {
	dir := testkit.TempDir(t)
	missing := filepath.Join(dir, "elsewhere", "settings.json")
	link := filepath.Join(dir, "settings.json")
	testkit.Symlink(t, missing, link)
	s, err := LoadSettings(link)
	require.NoError(t, err, "a link to a missing file reads as no settings")
	assert.Empty(t, s.BinaryPath)

	_, err = UpdateSettings(link, func(s *Settings) error { s.BinaryPath = "/new"; return nil })
	require.Error(t, err)
	assert.Equal(t, failure.Setup, failure.KindOf(err))
	assert.Contains(t, err.Error(), "is a symbolic link to a file that does not exist")
	_, err = os.Stat(filepath.Dir(missing))
	assert.ErrorIs(t, err, fs.ErrNotExist, "nothing is created through the link")
	info, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&fs.ModeSymlink, "the link is kept")
}

// TestLoadSettingsRefusesADirectory: what is not a regular file is a setup
// error naming the file and what it is (POSIX FIFOs and devices are in
// settings_unix_test.go).
func TestLoadSettingsRefusesADirectory(t *testing.T) {
	dir := testkit.TempDir(t)
	_, err := LoadSettings(dir)
	require.Error(t, err)
	assert.Equal(t, failure.Setup, failure.KindOf(err))
	assert.Equal(t, "cannot read the settings file: "+dir+" is not a regular file but a directory", err.Error())
}
