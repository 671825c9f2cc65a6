//go:build unix

package main

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

// TestSettingsFileThatIsNotARegularFile: a FIFO (which used to hang the
// command past SIGINT) and a link to /dev/zero are setup errors, at once.
func TestSettingsFileThatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	zero := filepath.Join(dir, "zero.json")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	for _, tt := range []struct{ path, what string }{
		{fifo, "a named pipe (FIFO)"},
		{zero, "a character device"},
	} {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, stdout, stderr := runCLI(t, nil, "", "--settings", tt.path, "probe", "--json")
				done <- result{code, stdout, stderr}
			}()
			select {
			case r := <-done:
				assert.Equal(t, failure.ExitSetup, r.code)
				assert.JSONEq(t, `{"error":{"kind":"setup","message":"cannot read the settings file: `+tt.path+` is not a regular file but `+tt.what+`"}}`, r.stdout)
			case <-time.After(20 * time.Second):
				t.Fatal("probe blocked on the settings file")
			}
		})
	}
}
