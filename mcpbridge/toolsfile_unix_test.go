//go:build !windows

package mcpbridge

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestReadToolsFileRefusesAFIFOWithoutBlocking: a FIFO is not a tools
// file, and reading one does not wait for a writer.
func TestReadToolsFileRefusesAFIFOWithoutBlocking(t *testing.T) {
	path := filepath.Join(testkit.TempDir(t), "tools.fifo")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	done := make(chan error, 1)
	go func() {
		_, err := ReadToolsFile(context.Background(), path, CommandOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		assert.Equal(t, failure.Input, failure.KindOf(err))
		assert.Contains(t, err.Error(), "is not a regular file")
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
}
