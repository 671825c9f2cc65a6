package probe

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// rendezvousRunner answers --version at once and makes status and models
// wait for each other: a sequential caller would never get both answers.
type rendezvousRunner struct {
	statusStarted, modelsStarted chan struct{}
}

func (r *rendezvousRunner) run(ctx context.Context, _ discovery.Resolution, args []string, _ time.Duration) runResult {
	wait := func(started, other chan struct{}) bool {
		close(started)
		select {
		case <-other:
			return true
		case <-ctx.Done():
			return false
		}
	}
	switch args[0] {
	case "--version":
		return printed("2026.10.15-a1b2c3d")
	case "status":
		if !wait(r.statusStarted, r.modelsStarted) {
			return runResult{cancelled: true, exitCode: -1}
		}
		return printed(`{"isAuthenticated":true}`)
	case "models":
		if !wait(r.modelsStarted, r.statusStarted) {
			return runResult{cancelled: true, exitCode: -1}
		}
		return printed("a - A\n")
	}
	return runResult{exitCode: 2}
}

func TestInspectRunsStatusAndModelsConcurrently(t *testing.T) {
	env, fsys := posixMachine()
	run := &rendezvousRunner{statusStarted: make(chan struct{}), modelsStarted: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in := Inspect(ctx, Config{env: env, fs: fsys, runner: run, CacheDir: testkit.TempDir(t)}, false)
	require.NoError(t, in.ProbeErr)
	require.NoError(t, in.Auth.Err())
	require.NoError(t, in.ModelsErr)
	assert.True(t, in.Auth.Authenticated)
	assert.Equal(t, []Model{{ID: "a", Label: "A"}}, in.Models.Models)
}

func TestInspectWithoutBinary(t *testing.T) {
	env, fsys := posixMachine()
	in := Inspect(context.Background(), Config{env: env, fs: fsys, runner: newFakeRunner()}, false)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(in.ProbeErr))
	assert.Equal(t, AuthState(""), in.Auth.State)
	assert.Nil(t, in.Models.Models)
}
