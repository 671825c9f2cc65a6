package procid_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/windows"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
)

func TestOnlyKillIsSentOnWindows(t *testing.T) {
	ctx := context.Background()
	cmd, pid := sleeper(t)
	id, err := procid.Of(ctx, pid)
	require.NoError(t, err)
	err = id.Signal(ctx, os.Interrupt)
	assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
	alive, err := id.Alive(ctx)
	require.NoError(t, err)
	assert.True(t, alive)
	require.NoError(t, id.Kill(ctx))
	waitExit(t, cmd)
}

func TestOfHandleAgreesWithOf(t *testing.T) {
	ctx := context.Background()
	cmd, pid := sleeper(t)
	byPID, err := procid.Of(ctx, pid)
	require.NoError(t, err)
	var byHandle procid.Identity
	require.NoError(t, cmd.Process.WithHandle(func(h uintptr) {
		byHandle, err = procid.OfHandle(windows.Handle(h))
	}))
	require.NoError(t, err)
	assert.True(t, byPID.Created.Equal(byHandle.Created), "%s and %s", byPID, byHandle)
	assert.Equal(t, pid, byHandle.PID)
	require.NoError(t, byHandle.Kill(ctx))
	// Until Wait releases it, the handle names the process even once it
	// has exited: its identity reads the same.
	require.NoError(t, cmd.Process.WithHandle(func(h uintptr) {
		after, err := procid.OfHandle(windows.Handle(h))
		assert.NoError(t, err)
		assert.True(t, after.Matches(byHandle), "%s and %s", after, byHandle)
	}))
	waitExit(t, cmd)
	alive, err := byHandle.Alive(ctx)
	require.NoError(t, err)
	assert.False(t, alive)
}
