//go:build unix

package safefile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specialFiles are the POSIX cases of TestReadRefusesWhatIsNotARegularFile:
// a FIFO with no writer (an open without O_NONBLOCK waits forever), a
// link to /dev/zero (endless) and /dev/null.
func specialFiles(t *testing.T, dir string) []readCase {
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	zero := filepath.Join(dir, "zero.json")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	return []readCase{
		{name: "FIFO without a writer", path: fifo, wantErr: notRegular("a named pipe (FIFO)")},
		{name: "link to /dev/zero", path: zero, wantErr: notRegular("a character device")},
		{name: "/dev/null", path: "/dev/null", wantErr: notRegular("a character device")},
	}
}

// TestOpenOfAFIFODoesNotBlock covers what the stat before the open cannot:
// a FIFO put in place between that stat and the open. The open returns at
// once and fstat names the FIFO.
func TestOpenOfAFIFODoesNotBlock(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	opened := make(chan *os.File, 1)
	go func() {
		f, err := openNonBlocking(fifo)
		assert.NoError(t, err)
		opened <- f
	}()
	select {
	case f := <-opened:
		require.NotNil(t, f)
		defer f.Close()
		info, err := f.Stat()
		require.NoError(t, err)
		assert.NotZero(t, info.Mode()&os.ModeNamedPipe)
	case <-time.After(readDeadline):
		t.Fatal("opening a FIFO without a writer blocked")
	}
}

func TestWriteDoesNotReplaceAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "settings.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	err := Write(fifo, []byte("x"), 0o600)
	var nr *NotRegularError
	require.ErrorAs(t, err, &nr, "%v", err)
	info, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&os.ModeNamedPipe, "the FIFO is still there")
}
