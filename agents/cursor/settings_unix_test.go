//go:build unix

package cursor

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

// TestLoadSettingsRefusesSpecialFiles: a FIFO without a writer (which a
// plain open waits on forever, deaf to SIGINT) and an endless device are
// refused at once, as setup errors that say what the file is.
func TestLoadSettingsRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	zero := filepath.Join(dir, "zero.json")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	tests := []struct {
		name, path, want string
	}{
		{"FIFO", fifo, fifo + " is not a regular file but a named pipe (FIFO)"},
		{"link to /dev/zero", zero, zero + " is not a regular file but a character device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				_, err := LoadSettings(tt.path)
				done <- err
			}()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.Equal(t, failure.Setup, failure.KindOf(err))
				assert.Equal(t, "cannot read the settings file: "+tt.want, err.Error())
			case <-time.After(10 * time.Second):
				t.Fatal("LoadSettings blocked")
			}
		})
	}
}
