package launch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/shim"
)

// TestWaitParksOnThePoller proves the thread-free wait path works on this
// kernel (a silent fallback would block one OS thread per waiting child).
func TestWaitParksOnThePoller(t *testing.T) {
	tests := []struct {
		name   string
		script string
		kill   bool
		want   ExitStatus
	}{
		{"exit code", "exit 7", false, ExitStatus{Code: 7}},
		{"killed", "read line", true, ExitStatus{Code: -1, Signal: int(unix.SIGKILL), Signaled: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := shim.Command{Program: "/bin/sh", Args: []string{"sh", "-c", tc.script}}
			stdin, hold := newBlockingReader()
			defer close(hold)
			p := startDirectly(t, plan, Options{Stdin: stdin})
			defer p.Close()
			if tc.kill {
				require.NoError(t, p.sys.cmd.Process.Signal(unix.SIGKILL))
			}
			status, err, ok := p.waitExitPolled()
			require.True(t, ok, "the pidfd could not be polled")
			require.NoError(t, err)
			assert.Equal(t, tc.want, status)
			_, statErr := readProc(p.root.Pid)
			assert.NoError(t, statErr, "the child stays unreaped until Close")
		})
	}
}

// newBlockingReader returns a reader whose Read blocks until hold is closed.
func newBlockingReader() (*blockingReader, chan struct{}) {
	hold := make(chan struct{})
	return &blockingReader{hold: hold}, hold
}

type blockingReader struct{ hold chan struct{} }

func (r *blockingReader) Read([]byte) (int, error) {
	<-r.hold
	return 0, context.Canceled
}
