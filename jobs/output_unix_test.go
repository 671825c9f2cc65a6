//go:build unix

package jobs

import (
	"encoding/json/jsontext"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

// TestReadOutputReadsOnlyARegularFile: whatever stands at a job's output
// path, ReadOutput returns a typed error at once instead of blocking on a
// FIFO without a writer or reading a device without end.
func TestReadOutputReadsOnlyARegularFile(t *testing.T) {
	const deadline = 10 * time.Second
	tests := []struct {
		name     string
		place    func(t *testing.T, path string)
		wantKind failure.Kind
	}{
		{name: "a FIFO without a writer", wantKind: failure.Setup, place: func(t *testing.T, path string) {
			require.NoError(t, syscall.Mkfifo(path, 0o600))
		}},
		{name: "a link to /dev/zero", wantKind: failure.Setup, place: func(t *testing.T, path string) {
			require.NoError(t, os.Symlink("/dev/zero", path))
		}},
		{name: "a regular file past the bound", wantKind: failure.Unclassified, place: func(t *testing.T, path string) {
			f, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(maxOutputFile+1)) // allocated lazily
			require.NoError(t, f.Close())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := NewTestStore(t)
			id := NewID(RoleTask, time.Now())
			path := s.outputPath(id)
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
			tt.place(t, path)
			done := make(chan error, 1)
			go func() {
				_, err := s.ReadOutput(id, func(jsontext.Value) error { return nil })
				done <- err
			}()
			select {
			case err := <-done:
				require.Error(t, err)
				assert.Equal(t, tt.wantKind, failure.KindOf(err), "%v", err)
				assert.Contains(t, err.Error(), path)
			case <-time.After(deadline):
				t.Fatalf("ReadOutput did not return within %s", deadline)
			}
		})
	}
}
