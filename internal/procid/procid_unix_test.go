//go:build unix

package procid_test

import (
	"context"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestAnExitedChildIsNotAliveBeforeItIsReaped(t *testing.T) {
	ctx := context.Background()
	cmd, pid := sleeper(t)
	id, err := procid.Of(ctx, pid)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	// Not waited for: a zombie keeps its PID and creation time.
	testkit.Eventually(t, "the killed child to be not alive", deadline, func() bool {
		alive, err := id.Alive(ctx)
		return err == nil && !alive
	})
	err = id.Signal(ctx, syscall.SIGTERM)
	assert.ErrorIs(t, err, procid.ErrGone)
	waitExit(t, cmd)
}

func TestSignalSendsTheSignal(t *testing.T) {
	ctx := context.Background()
	cmd, pid := sleeper(t)
	id, err := procid.Of(ctx, pid)
	require.NoError(t, err)
	require.NoError(t, id.Signal(ctx, syscall.SIGTERM))
	waitExit(t, cmd)
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	assert.True(t, ws.Signaled())
	assert.Equal(t, syscall.SIGTERM, ws.Signal())
}

func TestSignalOfInitIsNotPermitted(t *testing.T) {
	if syscall.Getuid() == 0 {
		t.Skip("root may signal anything")
	}
	ctx := context.Background()
	id, err := procid.Of(ctx, 1)
	require.NoError(t, err)
	err = id.Signal(ctx, syscall.Signal(0))
	assert.Equal(t, failure.Setup, failure.KindOf(err), "%v", err)
}
