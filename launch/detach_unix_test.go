//go:build unix

package launch_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// callerEnds are how the caller of a detached start ends: by itself, and
// SIGKILLed while it still runs.
var callerEnds = []string{"exit", "sigkill"}

// checkDetached checks that pid leads a session and a group of its own
// (so it has no controlling terminal: setsid leaves it none, and it opened
// no terminal) and that its stdin is not this process's.
func checkDetached(t *testing.T, pid int) {
	t.Helper()
	sid, err := unix.Getsid(pid)
	require.NoError(t, err)
	assert.Equal(t, pid, sid, "own session")
	pgid, err := unix.Getpgid(pid)
	require.NoError(t, err)
	assert.Equal(t, pid, pgid, "own process group")
	assert.NotEqual(t, unix.Getpgrp(), pgid)
	checkNoTTY(t, pid)
}
