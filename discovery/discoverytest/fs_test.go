package discoverytest_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/discovery/discoverytest"
)

var _ discovery.FS = discoverytest.NewWindows()

func TestWindowsSemantics(t *testing.T) {
	f := discoverytest.NewWindows().File(`C:\Users\A User\npm\cursor-agent.cmd`, 0o644)
	for _, name := range []string{
		`C:\Users\A User\npm\cursor-agent.cmd`,
		`c:/users/a user/NPM/Cursor-Agent.CMD`,
		`C:\Users\A User\npm\cursor-agent.cmd. .`,
		`C:\Users\A User\x\..\npm\.\cursor-agent.cmd`,
	} {
		info, err := f.Lstat(name)
		require.NoError(t, err, name)
		assert.True(t, info.Mode().IsRegular())
		assert.Equal(t, "cursor-agent.cmd", info.Name())
	}
	dir, err := f.Stat(`C:\Users\A User`)
	require.NoError(t, err, "parents exist implicitly")
	assert.True(t, dir.IsDir())
	_, err = f.Lstat(`C:\Users\A User\npm\cursor-agent`)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestAliasSymlinkDenied(t *testing.T) {
	w := discoverytest.NewWindows().Alias(`C:\WindowsApps\pwsh.exe`).Denied(`C:\locked\x.exe`)
	info, err := w.Lstat(`C:\WindowsApps\pwsh.exe`)
	require.NoError(t, err)
	assert.Equal(t, fs.ModeIrregular, info.Mode().Type())
	assert.Zero(t, info.Size())
	_, err = w.Stat(`C:\WindowsApps\pwsh.exe`)
	assert.True(t, errors.Is(err, discoverytest.ErrCannotAccess), "%v", err)
	_, err = w.Lstat(`C:\locked\x.exe`)
	assert.ErrorIs(t, err, fs.ErrPermission)

	p := discoverytest.NewPOSIX().
		Symlink("/bin/a", "../opt/b").Symlink("/opt/b", "/opt/c").File("/opt/c", 0o755).
		Symlink("/loop/x", "y").Symlink("/loop/y", "x").Symlink("/dangling", "/nowhere")
	li, err := p.Lstat("/bin/a")
	require.NoError(t, err)
	assert.Equal(t, fs.ModeSymlink, li.Mode().Type())
	target, err := p.Readlink("/bin/a")
	require.NoError(t, err)
	assert.Equal(t, "../opt/b", target)
	si, err := p.Stat("/bin/a")
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o755), si.Mode())
	_, err = p.Stat("/loop/x")
	assert.Error(t, err)
	_, err = p.Stat("/dangling")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = p.Readlink("/opt/c")
	assert.Error(t, err, "not a link")
	_, err = p.Lstat("/OPT/C")
	assert.ErrorIs(t, err, fs.ErrNotExist, "POSIX is case-sensitive")
	assert.Equal(t, []string{"/bin/a", "/bin/a", "/loop/x", "/dangling", "/OPT/C"}, p.Lookups())
}
