package mcpstage_test

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpstage"
)

// stagedKeys are the server keys of a config's mcpServers.
func stagedKeys(t *testing.T, config string) []string {
	t.Helper()
	var doc struct {
		MCPServers map[string]jsontext.Value `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal([]byte(config), &doc), "%q", config)
	var keys []string
	for k := range doc.MCPServers {
		keys = append(keys, k)
	}
	return keys
}

// TestRunStagesForTheTurn: the entry is in the config while the turn runs
// and the config is back to its baseline, byte for byte, once Run returns;
// the turn's error comes back unchanged, and nothing went wrong around it.
func TestRunStagesForTheTurn(t *testing.T) {
	ctx := context.Background()
	inEveryShape(t, func(t *testing.T, _, dir, baseline string) {
		cursorDir := filepath.Join(dir, ".cursor")
		config := filepath.Join(cursorDir, "mcp.json")
		turnErr := failure.New(failure.Process, "the agent exited 1")
		var called int
		warnings, err := mcpstage.Run(ctx, dir, []mcpstage.Entry{entry}, mcpstage.RunOptions{}, func(ctx context.Context, leases []mcpstage.Lease) error {
			lease := leases[0]
			called++
			assert.Equal(t, mcpstage.DefaultKeyPrefix+lease.ID, lease.Key)
			got, ok := readMaybe(t, config)
			require.True(t, ok, "staged while the turn runs")
			assert.Contains(t, stagedKeys(t, got), lease.Key)
			return turnErr
		})
		assert.Same(t, turnErr, err, "the turn's error, unchanged")
		assert.Equal(t, 1, called)
		assert.Empty(t, warnings)
		got, ok := readMaybe(t, config)
		if baseline == "" {
			assert.False(t, ok, "no config before, none after")
			assert.NoDirExists(t, cursorDir)
		} else {
			assert.Equal(t, baseline, got, "the baseline, byte for byte")
		}
	})
}

// TestRunReleasesAfterCancel: a turn that ends because ctx was cancelled
// (a stop signal) still has its entry removed: the release does not run on
// the cancelled context.
func TestRunReleasesAfterCancel(t *testing.T) {
	dir := aShape(t, "repository")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	warnings, err := mcpstage.Run(ctx, dir, []mcpstage.Entry{entry}, mcpstage.RunOptions{}, func(ctx context.Context, _ []mcpstage.Lease) error {
		cancel()
		<-ctx.Done()
		return failure.Wrap(failure.Cancelled, context.Cause(ctx), "stopped")
	})
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
	assert.Empty(t, warnings)
	assert.NoDirExists(t, filepath.Join(dir, ".cursor"), "released after a cancelled turn too")
}

// TestRunReleasesOnPanic: a turn that panics has its entry removed, and
// the panic goes on.
func TestRunReleasesOnPanic(t *testing.T) {
	dir := aShape(t, "none")
	assert.PanicsWithValue(t, "turn", func() {
		_, _ = mcpstage.Run(context.Background(), dir, []mcpstage.Entry{entry}, mcpstage.RunOptions{}, func(context.Context, []mcpstage.Lease) error {
			panic("turn")
		})
	})
	assert.NoDirExists(t, filepath.Join(dir, ".cursor"))
}

// TestRunHeartbeats: the lease is renewed while the turn runs; a renewal
// that fails (the lease released behind the turn's back) is a warning and
// the turn goes on, and a release that finds nothing to release is a
// warning too. OnWarning sees each as it happens, Run returns them all.
// A peer's lease of its own keeps the worktree staged throughout, so no
// renewal races a last cleanup.
func TestRunHeartbeats(t *testing.T) {
	dir := aShape(t, "repository")
	ctx := context.Background()
	peer, err := mcpstage.New(ctx, dir, mcpstage.Options{})
	require.NoError(t, err)
	peerLease, err := peer.Stage(ctx, mcpstage.Entry{Command: "peer-server"})
	require.NoError(t, err)
	var mu sync.Mutex
	var seen []mcpstage.Warning
	opts := mcpstage.RunOptions{HeartbeatEvery: 50 * time.Millisecond, OnWarning: func(w mcpstage.Warning) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, w)
	}}
	// goneSeen: a renewal failed because the lease is gone. Others may
	// fail before, as any step does that finds the lock busy (resource).
	goneSeen := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, w := range seen {
			if failure.KindOf(w.Err) == failure.Input {
				return true
			}
		}
		return false
	}
	warnings, err := mcpstage.Run(ctx, dir, []mcpstage.Entry{entry}, opts, func(ctx context.Context, leases []mcpstage.Lease) error {
		lease := leases[0]
		testkit.Eventually(t, "a renewed lease", 20*time.Second, func() bool {
			st, err := peer.Status(ctx)
			if err != nil {
				return false
			}
			for _, l := range st.Leases {
				if l.ID == lease.ID {
					return l.HeartbeatAt.After(l.AcquiredAt)
				}
			}
			return false
		})
		// Retried: the turn's renewals hold the lock now and then.
		testkit.Eventually(t, "the lease released by a peer", 20*time.Second, func() bool {
			return peer.Release(ctx, lease.ID) == nil
		})
		testkit.Eventually(t, "a heartbeat warning", 20*time.Second, goneSeen)
		return nil
	})
	require.NoError(t, err, "failed renewals do not fail the turn")
	require.GreaterOrEqual(t, len(warnings), 2)
	mu.Lock()
	assert.Equal(t, seen, warnings, "OnWarning saw every warning Run returns, in order")
	mu.Unlock()
	for _, w := range warnings[:len(warnings)-1] {
		assert.Equal(t, mcpstage.WarnHeartbeat, w.Code)
		assert.Contains(t, w.Message, "renewing the MCP server lease")
		var fe *failure.Error
		assert.True(t, errors.As(w.Err, &fe) && fe.Kind.Valid(), "a failure with a kind: %v", w.Err)
	}
	last := warnings[len(warnings)-1]
	assert.Equal(t, mcpstage.WarnRelease, last.Code)
	assert.Equal(t, failure.Input, failure.KindOf(last.Err))
	assert.Contains(t, last.Message, "cursorkit mcp reconcile --cwd ")
	assert.NotContains(t, last.Message, "mcp_release", "a message is not prefixed with its code")

	require.NoError(t, peer.Release(ctx, peerLease.ID))
	assert.NoDirExists(t, filepath.Join(dir, ".cursor"))
}

// TestRunReleaseLeftToReconcile: a release that cannot take the lock (a
// fresh lock directory without an owner file, taken over only once
// unchanged for the TTL) gives up within its bound, tries the exit
// backstop once, and leaves a warning that says how to clean up.
func TestRunReleaseLeftToReconcile(t *testing.T) {
	dir := aShape(t, "none")
	ctx := context.Background()
	lockDir := filepath.Join(dir, ".cursor", mcpstage.LockDir)
	var id string
	start := time.Now()
	warnings, err := mcpstage.Run(ctx, dir, []mcpstage.Entry{entry}, mcpstage.RunOptions{ReleaseTimeout: time.Second}, func(_ context.Context, leases []mcpstage.Lease) error {
		lease := leases[0]
		id = lease.ID
		return os.Mkdir(lockDir, 0o755)
	})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 10*time.Second)
	require.Len(t, warnings, 1)
	w := warnings[0]
	assert.Equal(t, mcpstage.WarnRelease, w.Code)
	assert.Equal(t, failure.Resource, failure.KindOf(w.Err))
	assert.Contains(t, w.Message, "(resource: ")
	assert.Contains(t, w.Message, "`cursorkit mcp reconcile --cwd ")
	assert.Contains(t, w.Message, "once this process is gone")
	assert.NotContains(t, w.Message, "t0k3n", "never the entry's env")

	got, ok := readMaybe(t, filepath.Join(dir, ".cursor", "mcp.json"))
	require.True(t, ok, "still staged")
	assert.Len(t, stagedKeys(t, got), 1)
	require.NoError(t, os.Remove(lockDir))
	s, err := mcpstage.New(ctx, dir, mcpstage.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Release(ctx, id))
	assert.NoDirExists(t, filepath.Join(dir, ".cursor"))
}

// TestRunRefuses: options out of range and stages that fail are Run's
// own failures, with their kinds; the turn is never called and nothing is
// left staged.
func TestRunRefuses(t *testing.T) {
	tests := []struct {
		name  string
		opts  mcpstage.RunOptions
		entry mcpstage.Entry
		setup func(t *testing.T, dir string)
		kind  failure.Kind
		msg   string
	}{
		{name: "a heartbeat period of the lease TTL", opts: mcpstage.RunOptions{HeartbeatEvery: mcpstage.LeaseTTL}, kind: failure.Input, msg: "below the lease TTL"},
		{name: "a negative heartbeat period", opts: mcpstage.RunOptions{HeartbeatEvery: -time.Second}, kind: failure.Input, msg: "above 0"},
		{name: "a negative release timeout", opts: mcpstage.RunOptions{ReleaseTimeout: -time.Second}, kind: failure.Input, msg: "negative"},
		{name: "a bad key prefix", opts: mcpstage.RunOptions{Options: mcpstage.Options{KeyPrefix: "x"}}, kind: failure.Input, msg: "prefix"},
		{name: "an empty command", entry: mcpstage.Entry{Command: "  ", Env: map[string]string{"K": "t0k3n"}}, kind: failure.Input, msg: "command is empty"},
		{name: "a directory in place of mcp.json", kind: failure.Setup, setup: func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".cursor", "mcp.json"), 0o755))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := aShape(t, "none")
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			e := tt.entry
			if e.Command == "" {
				e = entry
			}
			warnings, err := mcpstage.Run(context.Background(), dir, []mcpstage.Entry{e}, tt.opts, func(context.Context, []mcpstage.Lease) error {
				t.Error("the turn was called")
				return nil
			})
			require.Error(t, err)
			assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
			assert.Contains(t, err.Error(), tt.msg)
			assert.NotContains(t, err.Error(), "t0k3n")
			assert.Empty(t, warnings)
			var fe *failure.Error
			assert.True(t, errors.As(err, &fe))
			if tt.setup == nil {
				assert.NoDirExists(t, filepath.Join(dir, ".cursor"), "nothing staged")
			}
		})
	}
}

// TestRunCurrentDirectory: "" is the current directory.
func TestRunCurrentDirectory(t *testing.T) {
	dir := aShape(t, "none")
	t.Chdir(dir)
	_, err := mcpstage.Run(context.Background(), "", []mcpstage.Entry{entry}, mcpstage.RunOptions{}, func(context.Context, []mcpstage.Lease) error {
		got, ok := readMaybe(t, filepath.Join(dir, ".cursor", "mcp.json"))
		require.True(t, ok)
		assert.True(t, strings.Contains(got, mcpstage.DefaultKeyPrefix))
		return nil
	})
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Join(dir, ".cursor"))
}

// TestRunStagesEveryEntry: several entries are staged at once, each under
// a lease of its own, handed to the turn in their order; all go after it.
// A bad entry is refused before any is staged, and the turn is never
// called.
func TestRunStagesEveryEntry(t *testing.T) {
	second := mcpstage.Entry{Command: "python3", Args: []string{"tools.py"}}
	t.Run("all staged for the turn", func(t *testing.T) {
		dir := aShape(t, "repository")
		config := filepath.Join(dir, ".cursor", "mcp.json")
		var called int
		warnings, err := mcpstage.Run(context.Background(), dir, []mcpstage.Entry{entry, second}, mcpstage.RunOptions{},
			func(_ context.Context, leases []mcpstage.Lease) error {
				called++
				require.Len(t, leases, 2)
				assert.NotEqual(t, leases[0].Key, leases[1].Key)
				got, ok := readMaybe(t, config)
				require.True(t, ok)
				assert.ElementsMatch(t, []string{leases[0].Key, leases[1].Key}, stagedKeys(t, got))
				var doc struct {
					MCPServers map[string]struct {
						Command string `json:"command"`
					} `json:"mcpServers"`
				}
				require.NoError(t, json.Unmarshal([]byte(got), &doc))
				assert.Equal(t, entry.Command, doc.MCPServers[leases[0].Key].Command, "the first entry under the first lease")
				assert.Equal(t, second.Command, doc.MCPServers[leases[1].Key].Command, "the second under the second")
				return nil
			})
		require.NoError(t, err)
		assert.Empty(t, warnings)
		assert.Equal(t, 1, called)
		assert.NoDirExists(t, filepath.Join(dir, ".cursor"), "both released")
	})
	t.Run("a bad entry is refused before any is staged", func(t *testing.T) {
		dir := aShape(t, "repository")
		_, err := mcpstage.Run(context.Background(), dir, []mcpstage.Entry{entry, {}}, mcpstage.RunOptions{},
			func(context.Context, []mcpstage.Lease) error {
				t.Error("the turn was called")
				return nil
			})
		assert.True(t, failure.Is(err, failure.Input), "%v", err)
		assert.NoDirExists(t, filepath.Join(dir, ".cursor"), "nothing staged")
	})
	t.Run("no entry", func(t *testing.T) {
		_, err := mcpstage.Run(context.Background(), testkit.TempDir(t), nil, mcpstage.RunOptions{},
			func(context.Context, []mcpstage.Lease) error {
				t.Error("the turn was called")
				return nil
			})
		assert.True(t, failure.Is(err, failure.Input), "%v", err)
	})
}
