//go:build unix

package settingsapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
