//go:build unix

package settingsapi

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

func TestTokenFileMustBePrivate(t *testing.T) {
	secret := strings.Repeat("z", 32)
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660, 0o666, 0o620} {
		t.Run(mode.String(), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "serve.token")
			require.NoError(t, os.WriteFile(p, []byte(secret), 0o600))
			require.NoError(t, os.Chmod(p, mode))
			_, _, err := LoadOrCreateTokenFile(p)
			require.Error(t, err)
			assert.Equal(t, failure.Setup, failure.KindOf(err))
			assert.Contains(t, err.Error(), "chmod 600")
			assert.NotContains(t, err.Error(), secret)
		})
	}
	t.Run("0400 is fine", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "serve.token")
		require.NoError(t, os.WriteFile(p, []byte(secret), 0o400))
		got, _, err := LoadOrCreateTokenFile(p)
		require.NoError(t, err)
		assert.Equal(t, secret, got)
	})
}

// ownedBy is a file's information with its owner replaced.
type ownedBy struct {
	fs.FileInfo
	uid uint32
}

func (o ownedBy) Sys() any {
	st := *o.FileInfo.Sys().(*syscall.Stat_t)
	st.Uid = o.uid
	return &st
}

func TestTokenFileMustBeOwnedByTheUserOrRoot(t *testing.T) {
	p := filepath.Join(t.TempDir(), "serve.token")
	require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("z", 32)), 0o600))
	info, err := os.Stat(p)
	require.NoError(t, err)
	const me = 1000
	tests := []struct {
		name  string
		owner uint32
		want  string
	}{
		{"owned by the user", me, ""},
		{"owned by root", 0, ""},
		{"owned by another user", 1001, "the token file " + p + " is owned by user 1001, not by you (user 1000) or root; use a token file of your own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPrivateFor(p, ownedBy{info, tt.owner}, me)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, failure.Setup, failure.KindOf(err))
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// TestTokenFileOfAnotherUserIsRefused chowns a private token file to
// another user, which only root can do.
func TestTokenFileOfAnotherUserIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file to another user; TestTokenFileMustBeOwnedByTheUserOrRoot covers the rule")
	}
	secret := strings.Repeat("o", 32)
	p := filepath.Join(t.TempDir(), "serve.token")
	require.NoError(t, os.WriteFile(p, []byte(secret), 0o600))
	require.NoError(t, os.Chown(p, 65534, 65534))
	_, _, err := LoadOrCreateTokenFile(p)
	require.Error(t, err)
	assert.Equal(t, failure.Setup, failure.KindOf(err))
	assert.Contains(t, err.Error(), "is owned by user 65534")
	assert.NotContains(t, err.Error(), secret)
}

func TestTokenFileThatIsAFIFOIsRefusedAtOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "serve.token")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	done := make(chan error, 1)
	go func() {
		_, _, err := LoadOrCreateTokenFile(p)
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Equal(t, failure.Setup, failure.KindOf(err))
		assert.Equal(t, "cannot read the token file: "+p+" is not a regular file but a named pipe (FIFO)", err.Error())
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO token file blocked")
	}
}

// FuzzCheckPrivate checks the token file rule: accepted exactly when the
// owner is the user or root and neither group nor others have any access.
func FuzzCheckPrivate(f *testing.F) {
	p := filepath.Join(f.TempDir(), "serve.token")
	require.NoError(f, os.WriteFile(p, []byte(strings.Repeat("z", 32)), 0o600))
	f.Add(uint32(1000), uint32(1000), uint32(0o600))
	f.Add(uint32(0), uint32(1000), uint32(0o400))
	f.Add(uint32(1001), uint32(1000), uint32(0o600))
	f.Add(uint32(1000), uint32(1000), uint32(0o640))
	f.Fuzz(func(t *testing.T, owner, euid, perm uint32) {
		require.NoError(t, os.Chmod(p, os.FileMode(perm&0o777)))
		info, err := os.Stat(p)
		require.NoError(t, err)
		err = checkPrivateFor(p, ownedBy{info, owner}, int(euid))
		want := (owner == 0 || owner == euid) && perm&0o077 == 0
		if want {
			assert.NoError(t, err)
		} else if assert.Error(t, err) {
			assert.Equal(t, failure.Setup, failure.KindOf(err))
		}
	})
}
