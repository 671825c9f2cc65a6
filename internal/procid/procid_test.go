package procid_test

import (
	"context"
	"encoding/json/v2"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// deadline bounds every wait of these tests.
const deadline = 20 * time.Second

func TestMain(m *testing.M) {
	testkit.RunIfChild(testkit.Role{Name: "sleep", Run: func([]string) int {
		fmt.Printf("ready %d\n", os.Getpid())
		testkit.SleepForever()
		return 0
	}})
	os.Exit(m.Run())
}

// sleeper starts a child that sleeps until it is killed, watched, and
// returns it with its PID.
func sleeper(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	w := testkit.NewWatch(t)
	cmd := exec.Command(exe)
	cmd.Env = testkit.ChildEnv("sleep")
	pid, err := testkit.StartReady(cmd, deadline)
	require.NoError(t, err)
	w.Add(pid)
	return cmd, pid
}

// waitExit waits for cmd to exit within the deadline.
func waitExit(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(deadline):
		t.Fatalf("pid %d did not exit within %v", cmd.Process.Pid, deadline)
	}
}

func TestSelf(t *testing.T) {
	id, err := procid.Self()
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), id.PID)
	assert.False(t, id.Created.After(time.Now().Add(procid.Slack)), "created in the future: %s", id)
	assert.Equal(t, time.UTC, id.Created.Location())

	again, err := procid.Of(context.Background(), os.Getpid())
	require.NoError(t, err)
	assert.True(t, id.Matches(again), "%s then %s", id, again)
	alive, err := id.Alive(context.Background())
	require.NoError(t, err)
	assert.True(t, alive)
}

func TestJSONRoundTrip(t *testing.T) {
	id, err := procid.Self()
	require.NoError(t, err)
	b, err := json.Marshal(id)
	require.NoError(t, err)
	var members map[string]any
	require.NoError(t, json.Unmarshal(b, &members))
	assert.ElementsMatch(t, []string{"pid", "created"}, keys(members))
	created, err := time.Parse(time.RFC3339Nano, members["created"].(string))
	require.NoError(t, err)
	assert.True(t, created.Equal(id.Created))

	var back procid.Identity
	require.NoError(t, json.Unmarshal(b, &back))
	assert.True(t, id.Matches(back))
	alive, err := back.Alive(context.Background())
	require.NoError(t, err)
	assert.True(t, alive)
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestMatches(t *testing.T) {
	base := time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	id := procid.Identity{PID: 42, Created: base}
	tests := []struct {
		name  string
		other procid.Identity
		want  bool
	}{
		{"same", id, true},
		{"same instant in another zone", procid.Identity{PID: 42, Created: base.In(time.FixedZone("x", 3600))}, true},
		{"sub-millisecond digits ignored", procid.Identity{PID: 42, Created: base.Add(900 * time.Microsecond)}, true},
		{"within slack", procid.Identity{PID: 42, Created: base.Add(procid.Slack)}, true},
		{"beyond slack", procid.Identity{PID: 42, Created: base.Add(procid.Slack + time.Millisecond)}, false},
		{"earlier beyond slack", procid.Identity{PID: 42, Created: base.Add(-procid.Slack - time.Millisecond)}, false},
		{"other pid", procid.Identity{PID: 43, Created: base}, false},
		{"no creation time", procid.Identity{PID: 42}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, id.Matches(tt.other))
			assert.Equal(t, tt.want, tt.other.Matches(id))
		})
	}
}

func TestUnusableIdentities(t *testing.T) {
	ctx := context.Background()
	self, err := procid.Self()
	require.NoError(t, err)
	tests := []struct {
		name string
		id   procid.Identity
	}{
		{"no pid", procid.Identity{Created: self.Created}},
		{"negative pid", procid.Identity{PID: -1, Created: self.Created}},
		{"no creation time", procid.Identity{PID: self.PID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.id.Alive(ctx)
			assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
			err = tt.id.Kill(ctx)
			assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
		})
	}
	_, err = procid.Of(ctx, 0)
	assert.Equal(t, failure.Input, failure.KindOf(err))
}

func TestParent(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		pid      int
		want     int
		wantKind failure.Kind // "" for success
	}{
		{name: "this process", pid: os.Getpid(), want: os.Getppid()},
		{name: "no pid", pid: 0, wantKind: failure.Input},
		{name: "negative pid", pid: -5, wantKind: failure.Input},
		{name: "a pid no process has", pid: exitedPID(t), wantKind: failure.Died},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := procid.Parent(ctx, tt.pid)
			if tt.wantKind == failure.Died && err == nil {
				return // the PID was reused already
			}
			if tt.wantKind != "" {
				assert.Equal(t, tt.wantKind, failure.KindOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// exitedPID returns the PID of a child that exited and was waited for.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, cmd.Run())
	return cmd.ProcessState.Pid()
}

func TestOfAChildThenKillIt(t *testing.T) {
	ctx := context.Background()
	cmd, pid := sleeper(t)
	id, err := procid.Of(ctx, pid)
	require.NoError(t, err)
	assert.Equal(t, pid, id.PID)
	alive, err := id.Alive(ctx)
	require.NoError(t, err)
	assert.True(t, alive)

	require.NoError(t, id.Kill(ctx))
	waitExit(t, cmd)
	alive, err = id.Alive(ctx)
	require.NoError(t, err)
	assert.False(t, alive, "a child that exited is not alive")

	err = id.Kill(ctx)
	assert.Equal(t, failure.Died, failure.KindOf(err), "%v", err)
	assert.True(t, errors.Is(err, procid.ErrGone) || errors.Is(err, procid.ErrMismatch), "%v", err)
	_, err = procid.Of(ctx, pid)
	if err != nil { // unless the PID was reused already
		assert.ErrorIs(t, err, procid.ErrGone)
		assert.Equal(t, failure.Died, failure.KindOf(err))
	}
}

func TestAReusedPIDIsNeverSignalled(t *testing.T) {
	ctx := context.Background()
	cmd, pid := sleeper(t)
	real, err := procid.Of(ctx, pid)
	require.NoError(t, err)
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()

	for _, shift := range []time.Duration{-time.Hour, -procid.Slack - 5*time.Millisecond, procid.Slack + 5*time.Millisecond, 24 * time.Hour} {
		t.Run(shift.String(), func(t *testing.T) {
			// A record of an earlier (or, wrongly, later) process that had
			// this PID.
			stale := procid.Identity{PID: pid, Created: real.Created.Add(shift)}
			alive, err := stale.Alive(ctx)
			require.NoError(t, err)
			assert.False(t, alive, "a reused PID is not alive")

			err = stale.Kill(ctx)
			require.Error(t, err)
			assert.ErrorIs(t, err, procid.ErrMismatch)
			assert.Equal(t, failure.Died, failure.KindOf(err))

			// The process at the PID was not touched.
			alive, err = real.Alive(ctx)
			require.NoError(t, err)
			assert.True(t, alive)
			select {
			case <-exited:
				t.Fatal("the process at the reused PID died")
			default:
			}
		})
	}
	// The real identity still acts, and the signal it sends is the one
	// that ends the process.
	require.NoError(t, real.Kill(ctx))
	select {
	case <-exited:
	case <-time.After(deadline):
		t.Fatal("the verified kill did not end the child")
	}
}
