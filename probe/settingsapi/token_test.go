package settingsapi

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestValidateToken(t *testing.T) {
	tests := []struct {
		name, token string
		ok          bool
	}{
		{"generated length", strings.Repeat("ab", 32), true},
		{"minimum", strings.Repeat("x", MinTokenLen), true},
		{"too short", strings.Repeat("x", MinTokenLen-1), false},
		{"empty", "", false},
		{"space inside", "abcdefgh ijklmnopq", false},
		{"newline inside", "abcdefgh\nijklmnopq", false},
		{"non-ASCII", "abcdefghijklmnopé", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateToken(tt.token)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, failure.Setup, failure.KindOf(err))
			if tt.token != "" {
				assert.NotContains(t, err.Error(), tt.token)
			}
		})
	}
}

func TestNewTokenIsRandomHex(t *testing.T) {
	a, err := NewToken()
	require.NoError(t, err)
	b, err := NewToken()
	require.NoError(t, err)
	assert.Len(t, a, 64)
	assert.NotEqual(t, a, b)
	assert.NoError(t, ValidateToken(a))
}

func TestLoadOrCreateTokenFile(t *testing.T) {
	dir := testkit.TempDir(t)
	path := filepath.Join(dir, "nested dir", "serve.token")

	token, created, err := LoadOrCreateTokenFile(path)
	require.NoError(t, err)
	assert.True(t, created)
	require.NoError(t, ValidateToken(token))
	info, err := os.Stat(path)
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	}

	again, created, err := LoadOrCreateTokenFile(path)
	require.NoError(t, err)
	assert.False(t, created)
	assert.Equal(t, token, again, "an existing file's token is reused")

	t.Run("whitespace around the token is ignored", func(t *testing.T) {
		p := filepath.Join(dir, "spaced.token")
		require.NoError(t, os.WriteFile(p, []byte("\r\n  "+strings.Repeat("k", 20)+" \r\n"), 0o600))
		got, created, err := LoadOrCreateTokenFile(p)
		require.NoError(t, err)
		assert.False(t, created)
		assert.Equal(t, strings.Repeat("k", 20), got)
	})
	t.Run("a short token is refused without echoing it", func(t *testing.T) {
		p := filepath.Join(dir, "short.token")
		require.NoError(t, os.WriteFile(p, []byte("s3cr3t"), 0o600))
		_, _, err := LoadOrCreateTokenFile(p)
		require.Error(t, err)
		assert.Equal(t, failure.Setup, failure.KindOf(err))
		assert.NotContains(t, err.Error(), "s3cr3t")
	})
	t.Run("a blank file is refused, not overwritten", func(t *testing.T) {
		p := filepath.Join(dir, "empty.token")
		// Whitespace only: Wine cannot unlink a zero-byte file at cleanup.
		require.NoError(t, os.WriteFile(p, []byte(" \n"), 0o600))
		_, _, err := LoadOrCreateTokenFile(p)
		require.Error(t, err)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, " \n", string(data))
	})
	t.Run("a directory is refused", func(t *testing.T) {
		_, _, err := LoadOrCreateTokenFile(dir)
		require.Error(t, err)
		assert.Equal(t, failure.Setup, failure.KindOf(err))
	})
	t.Run("an empty path is refused", func(t *testing.T) {
		_, _, err := LoadOrCreateTokenFile("")
		assert.Equal(t, failure.Input, failure.KindOf(err))
	})
}
