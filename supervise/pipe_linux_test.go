package supervise

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestGrowPipe: a real pipe grows to the size asked, capped at
// fs/pipe-max-size, and reports the capacity the kernel now gives it;
// what is not a file is left alone.
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()

	want := hotPipeSize
	if limit, ok := pipeMaxSize(); ok {
		want = min(want, limit)
	}
	got := growPipe(r, hotPipeSize)
	if got == 0 {
		// Past fs/pipe-user-pages-soft an unprivileged user may not grow
		// pipes: the refusal is the contract's 0, and nothing changed.
		t.Logf("the kernel refused to grow the pipe (per-user pipe limits)")
	} else {
		assert.GreaterOrEqual(t, got, want)
	}
	raw, err := r.SyscallConn()
	require.NoError(t, err)
	var size int
	require.NoError(t, raw.Control(func(fd uintptr) {
		size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
	}))
	require.NoError(t, err)
	if got != 0 {
		assert.Equal(t, got, size)
	}

	assert.Zero(t, growPipe(bytes.NewReader(nil), hotPipeSize), "not a file")
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer f.Close()
	assert.Zero(t, growPipe(f, hotPipeSize), "not a pipe")
}
