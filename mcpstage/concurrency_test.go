package mcpstage_test

import (
	"context"
	"encoding/json/v2"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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

// The operator of the concurrency test announces its writes: inflight
// exists while one is under way, and the counter is bumped after each.
const (
	opInflight = "operator.inflight"
	opCounter  = "operator.counter"
	opStop     = "operator.stop"
)

// operatorBytes is the operator's config of generation n, in the
// canonical layout (two-space indent, final newline) so a cleanup that
// strips cursorkit's keys gives it back byte for byte.
func operatorBytes(n int) []byte {
	return fmt.Appendf(nil, "{\n  \"mcpServers\": {\n    \"operator\": {\n      \"command\": \"op\",\n      \"args\": [\n        \"%d\"\n      ]\n    }\n  },\n  \"generation\": %d\n}\n", n, n)
}

// runOperator rewrites DIR/.cursor/mcp.json with its own valid content
// (never cursorkit's keys) every PACE until the stop file appears in
// WORK. Args: DIR WORK PACE.
func runOperator(args []string) int {
	dir, work := args[0], args[1]
	pace, _ := time.ParseDuration(args[2])
	config := filepath.Join(dir, ".cursor", "mcp.json")
	for n := 1; ; n++ {
		if _, err := os.Stat(filepath.Join(work, opStop)); err == nil {
			return 0
		}
		_ = os.WriteFile(filepath.Join(work, opInflight), nil, 0o644)
		tmp := config + ".operator"
		// Windows refuses a rename over a file another process has open
		// (a stager reading it): the operator tries again, as an editor's
		// save would, and counts only a write that landed.
		written := false
		for try := 0; !written && try < 200; try++ {
			written = os.WriteFile(tmp, operatorBytes(n), 0o644) == nil && os.Rename(tmp, config) == nil
			if !written {
				time.Sleep(time.Millisecond) // a retry pace
			}
		}
		if !written {
			return 1
		}
		_ = os.WriteFile(filepath.Join(work, opCounter), []byte(strconv.Itoa(n)), 0o644)
		_ = os.Remove(filepath.Join(work, opInflight))
		time.Sleep(pace) // the operator's pace, not a wait
	}
}

// quiet reads the operator's counter, "" while a write is under way.
func quiet(work string) string {
	if _, err := os.Stat(filepath.Join(work, opInflight)); err == nil {
		return ""
	}
	b, _ := os.ReadFile(filepath.Join(work, opCounter))
	return "n" + string(b)
}

// runStager is one of the concurrency test's processes: args DIR WORK
// CYCLES. Each cycle stages, heartbeats and releases; after the stage and
// the heartbeat it checks that its key is in the config whenever no
// operator write overlapped the operation and the read. Lock contention
// (resource) is retried, as a caller would. It prints "checked N
// skipped M retried R".
func runStager(args []string) int {
	dir, work := args[0], args[1]
	cycles, _ := strconv.Atoi(args[2])
	ctx := context.Background()
	s, err := mcpstage.New(ctx, dir, mcpstage.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	checked, skipped, retried := 0, 0, 0
	retry := func(op func() error) error {
		for {
			err := op()
			if err == nil || failure.KindOf(err) != failure.Resource {
				return err
			}
			retried++
			time.Sleep(time.Duration(retried%7+1) * time.Millisecond)
		}
	}
	check := func(key, before string) error {
		b, err := os.ReadFile(filepath.Join(dir, ".cursor", "mcp.json"))
		after := quiet(work)
		if before == "" || after != before {
			skipped++
			return nil
		}
		checked++
		if err != nil || !strings.Contains(string(b), key) {
			return fmt.Errorf("key %s missing with no operator write in between: %q (%v)", key, b, err)
		}
		return nil
	}
	for range cycles {
		before := quiet(work)
		var lease mcpstage.Lease
		if err := retry(func() (err error) { lease, err = s.Stage(ctx, entry); return err }); err != nil {
			fmt.Fprintln(os.Stderr, "stage:", err)
			return 1
		}
		if err := check(lease.Key, before); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		before = quiet(work)
		if err := retry(func() error { return s.Heartbeat(ctx, lease.ID) }); err != nil {
			fmt.Fprintln(os.Stderr, "heartbeat:", err)
			return 1
		}
		if err := check(lease.Key, before); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := retry(func() error { return s.Release(ctx, lease.ID) }); err != nil {
			fmt.Fprintln(os.Stderr, "release:", err)
			return 1
		}
	}
	fmt.Printf("checked %d skipped %d retried %d\n", checked, skipped, retried)
	return 0
}

// TestConcurrentStagersAndAnOperator: 8 processes stage, heartbeat and
// release 50 times each while an operator process keeps rewriting the
// config with its own valid content: every process finds its key during
// its lease whenever no operator write overlapped, and at the end the
// file holds the operator's last bytes exactly.
func TestConcurrentStagersAndAnOperator(t *testing.T) {
	procs, cycles, pace := 8, 50, "15ms"
	if testing.Short() {
		procs, cycles = 4, 10
	}
	if testkit.UnderWine() {
		// Each Wine process step takes tens of milliseconds: a slower
		// operator leaves quiet windows to check in.
		procs, cycles, pace = 4, 10, "300ms"
	}
	dir := aShape(t, "repository")
	work := testkit.TempDir(t)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755))
	exe, err := os.Executable()
	require.NoError(t, err)
	operator := exec.Command(exe, dir, work, pace)
	operator.Env = testkit.ChildEnv("operator")
	require.NoError(t, operator.Start())
	opDone := make(chan error, 1)
	go func() { opDone <- operator.Wait() }()
	t.Cleanup(func() { _ = operator.Process.Kill(); <-opDone })

	var wg sync.WaitGroup
	outs := make([]string, procs)
	for i := range procs {
		wg.Go(func() {
			cmd := exec.Command(exe, dir, work, strconv.Itoa(cycles))
			cmd.Env = testkit.ChildEnv("stager")
			out, err := cmd.CombinedOutput()
			outs[i] = string(out)
			assert.NoError(t, err, "stager %d: %s", i, out)
		})
	}
	wg.Wait()
	// The operator saves once more after every stager is done: its last
	// bytes are then what the file must hold.
	counter := func() int {
		b, _ := os.ReadFile(filepath.Join(work, opCounter))
		n, _ := strconv.Atoi(string(b))
		return n
	}
	after := counter()
	testkit.Eventually(t, "an operator save after the stagers", 20*time.Second, func() bool { return counter() > after })
	require.NoError(t, os.WriteFile(filepath.Join(work, opStop), nil, 0o644))
	select {
	case err := <-opDone:
		require.NoError(t, err)
		opDone <- err
	case <-time.After(20 * time.Second):
		t.Fatal("the operator did not stop")
	}
	n, err := os.ReadFile(filepath.Join(work, opCounter))
	require.NoError(t, err)
	last, err := strconv.Atoi(string(n))
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(dir, ".cursor", "mcp.json"))
	require.NoError(t, err)
	assert.Equal(t, string(operatorBytes(last)), string(got), "the operator's last bytes, exactly")
	var v any
	require.NoError(t, json.Unmarshal(got, &v))
	assert.NoFileExists(t, filepath.Join(dir, ".cursor", mcpstage.StateFile))
	total := 0
	for i, o := range outs {
		var c, s, r int
		_, err := fmt.Sscanf(strings.TrimSpace(o), "checked %d skipped %d retried %d", &c, &s, &r)
		require.NoError(t, err, "stager %d: %q", i, o)
		total += c
	}
	assert.Positive(t, total, "some checks ran with no operator write in between")
	t.Logf("%d stagers x %d cycles, %d operator writes; outputs: %q", procs, cycles, last, outs)
}

// TestFiftyParallelStagesAllSucceed: 50 stages at once on one worktree
// all get the lock (none fails as busy, however slow the disk makes the
// queue), every entry is staged, and 50 releases at once leave the
// worktree as it was.
func TestFiftyParallelStagesAllSucceed(t *testing.T) {
	const stagers = 50
	ctx := context.Background()
	dir := aShape(t, "repository")
	config := filepath.Join(dir, ".cursor", "mcp.json")
	ss := make([]*mcpstage.Stager, stagers)
	for i := range ss {
		s, err := mcpstage.New(ctx, dir, mcpstage.Options{})
		require.NoError(t, err)
		ss[i] = s
	}
	leases := make([]mcpstage.Lease, stagers)
	errs := make([]error, stagers)
	took := make([]time.Duration, stagers)
	parallel := func(step func(i int) error) (all, longest time.Duration) {
		began := time.Now()
		var wg sync.WaitGroup
		for i := range stagers {
			wg.Go(func() {
				start := time.Now()
				errs[i] = step(i)
				took[i] = time.Since(start)
			})
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "stager %d", i)
		}
		return time.Since(began), slices.Max(took)
	}

	staging, longestStage := parallel(func(i int) (err error) { leases[i], err = ss[i].Stage(ctx, entry); return err })
	got, ok := readMaybe(t, config)
	require.True(t, ok)
	keys := stagedKeys(t, got)
	for _, l := range leases {
		assert.Contains(t, keys, l.Key)
	}
	assert.Len(t, keys, stagers)

	releasing, longestRelease := parallel(func(i int) error { return ss[i].Release(ctx, leases[i].ID) })
	assert.NoDirExists(t, filepath.Join(dir, ".cursor"), "cursorkit made .cursor/ and the last release removed it")
	t.Logf("%d stages at once took %s (the longest %s), their releases %s (%s)", stagers,
		staging.Round(time.Millisecond), longestStage.Round(time.Millisecond),
		releasing.Round(time.Millisecond), longestRelease.Round(time.Millisecond))
}
