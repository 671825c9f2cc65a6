package mcpstage_test

import (
	"context"
	"encoding/json/v2"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpstage"
)

// runCycle is the crash test's child: args DIR POINT K CYCLES. It runs
// CYCLES stage/heartbeat/release cycles in DIR and kills itself (SIGKILL;
// TerminateProcess on Windows) the K-th time it reaches the named fault
// point ("" never).
func runCycle(args []string) int {
	dir, point := args[0], args[1]
	k, _ := strconv.Atoi(args[2])
	cycles, _ := strconv.Atoi(args[3])
	hits := 0
	opts := mcpstage.WithFault(mcpstage.Options{}, func(p string) {
		if p == point {
			if hits++; hits == k {
				self, _ := os.FindProcess(os.Getpid())
				_ = self.Kill()
				select {} // the kill is on its way
			}
		}
	})
	ctx := context.Background()
	s, err := mcpstage.New(ctx, dir, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for range cycles {
		lease, err := s.Stage(ctx, entry)
		if err != nil {
			fmt.Fprintln(os.Stderr, "stage:", err)
			return 1
		}
		if err := s.Heartbeat(ctx, lease.ID); err != nil {
			fmt.Fprintln(os.Stderr, "heartbeat:", err)
			return 1
		}
		if err := s.Release(ctx, lease.ID); err != nil {
			fmt.Fprintln(os.Stderr, "release:", err)
			return 1
		}
	}
	return 0
}

// crashRound is one round of the crash test: a child in a worktree of
// kind, with the operator's config or none (baseline ""), killed the k-th
// time it reaches point, or at a random moment (point "random").
type crashRound struct {
	kind, baseline, point string
	k                     int
}

// TestKilledAtEveryStep is the staging crash test: a child runs
// stage/heartbeat/release cycles and is killed at a named step of the
// protocol (or at a random moment); a reconcile then must leave the
// operator's bytes exactly, no cursorkit key, no torn file, nothing of
// cursorkit's for git to see, and no state or lock.
//
// Every named step is a round, its 1st to 3rd time, in every worktree
// shape, with and without an operator's config, besides rounds killed at
// random moments, in a random order (under -short, the first 50).
// Rounds run four at a time, each worker in worktrees of its own: a round
// mostly waits on its child, git and the disk (under Wine too, where four
// at a time are faster than one).
func TestKilledAtEveryStep(t *testing.T) {
	const randomRounds, workers = 8, 4
	t.Parallel() // beside the exclusion edits, which mostly wait on the disk too
	ctx := context.Background()
	exe, err := os.Executable()
	require.NoError(t, err)
	rng := testkit.Rand(t)
	sets := make([]map[string]string, workers)
	for w := range sets {
		sets[w] = shapes(t)
	}
	var kinds []string
	for _, k := range []string{"repository", "worktree", "none"} {
		if _, ok := sets[0][k]; ok {
			kinds = append(kinds, k)
		}
	}
	var rounds []crashRound
	for _, kind := range kinds {
		for _, baseline := range []string{"", operatorConfig} {
			for _, point := range mcpstage.FaultPoints {
				for k := 1; k <= 3; k++ {
					rounds = append(rounds, crashRound{kind, baseline, point, k})
				}
			}
			for range randomRounds {
				rounds = append(rounds, crashRound{kind, baseline, "random", 1})
			}
		}
	}
	rng.Shuffle(len(rounds), func(i, j int) { rounds[i], rounds[j] = rounds[j], rounds[i] })
	if testing.Short() {
		rounds = rounds[:50]
	}
	var mu sync.Mutex
	killedAt := map[string]int{}
	finished, ownerless := 0, 0
	next := make(chan int, len(rounds))
	for i := range rounds {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for w, sh := range sets {
		wg.Go(func() {
			for i := range next {
				if t.Failed() {
					return // the first failure ends the test
				}
				r := rounds[i]
				name := fmt.Sprintf("%03d/%s/%s-%d/config=%t", i, r.kind, r.point, r.k, r.baseline != "")
				what := fmt.Sprintf("round %d (%s, killed at %s #%d, config %t, worker %d)", i, r.kind, r.point, r.k, r.baseline != "", w)
				t.Run(name, func(t *testing.T) {
					killed, agedLock := crashOnce(t, ctx, exe, sh[r.kind], r, rng, what)
					mu.Lock()
					defer mu.Unlock()
					if killed {
						killedAt[r.point]++
					} else {
						finished++
					}
					if agedLock {
						ownerless++
					}
				})
			}
		})
	}
	wg.Wait()
	t.Logf("%d rounds: %d children finished, killed at %v; %d left a lock without an owner file (killed between its mkdir and the owner file, or in its release: reclaimed once aged past the TTL); after each reconcile the operator's bytes were exact, no key, no torn file, nothing for git", len(rounds), finished, killedAt, ownerless)
}

// crashOnce plays round r in dir: the child killed as r says (at a random
// moment drawn from rng), then a reconcile and the checks. killed reports
// that the child did not finish; agedLock that it left a lock without an
// owner file, which the reconcile reclaimed once aged past the TTL.
func crashOnce(t *testing.T, ctx context.Context, exe, dir string, r crashRound, rng *rand.Rand, what string) (killed, agedLock bool) {
	cursorDir := filepath.Join(dir, ".cursor")
	require.NoError(t, safefile.RemoveAll(cursorDir))
	if r.baseline != "" {
		require.NoError(t, os.MkdirAll(cursorDir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(cursorDir, "mcp.json"), []byte(r.baseline), 0o644))
	}
	var before string
	if r.kind != "none" {
		before = porcelain(t, dir)
	}
	arg := r.point
	if r.point == "random" {
		arg = ""
	}
	child := exec.Command(exe, dir, arg, strconv.Itoa(r.k), "3")
	child.Env = testkit.ChildEnv("cycle")
	var stderr strings.Builder
	child.Stderr = &stderr
	require.NoError(t, child.Start())
	if r.point == "random" {
		testkit.SleepRandomly(rng, 60*time.Millisecond)
		_ = child.Process.Kill()
	}
	if killed = child.Wait() != nil; killed {
		require.NotContains(t, stderr.String(), "stage:", what)
	}

	s, err := mcpstage.New(ctx, dir, mcpstage.Options{})
	require.NoError(t, err)
	// A lock without an owner file is reclaimed once unchanged for its TTL:
	// aged past it here rather than waited for.
	for _, lock := range mcpstage.LockDirs(s) {
		if _, err := os.Lstat(filepath.Join(lock, "owner.json")); os.IsNotExist(err) {
			if _, err := os.Lstat(lock); err == nil {
				agedLock = true
				old := time.Now().Add(-time.Hour)
				require.NoError(t, os.Chtimes(lock, old, old))
			}
		}
	}
	_, err = s.Reconcile(ctx)
	require.NoError(t, err, what)
	got, present := readMaybe(t, filepath.Join(cursorDir, "mcp.json"))
	if r.baseline == "" {
		assert.False(t, present, "%s: no config before, none after: %q", what, got)
	} else {
		assert.Equal(t, r.baseline, got, "%s: the operator's bytes", what)
	}
	if present {
		var v any
		assert.NoError(t, json.Unmarshal([]byte(got), &v), "%s: a torn config", what)
		assert.NotContains(t, got, mcpstage.DefaultKeyPrefix, what)
	}
	assert.NoFileExists(t, filepath.Join(cursorDir, mcpstage.StateFile), what)
	assert.NoDirExists(t, filepath.Join(cursorDir, mcpstage.LockDir), what)
	if r.baseline == "" && r.kind != "none" {
		// In git the exclusion block records that cursorkit made it.
		assert.NoDirExists(t, cursorDir, "%s: the .cursor/ cursorkit made goes", what)
	}
	if r.kind != "none" {
		assert.Equal(t, before, porcelain(t, dir), "%s: git sees nothing of cursorkit's", what)
		st, err := s.Status(ctx)
		require.NoError(t, err)
		assert.False(t, st.Excluded, "%s: the exclusion went", what)
		assert.False(t, st.MadeDir, "%s: the record of .cursor/ went", what)
	}
	return killed, agedLock
}
