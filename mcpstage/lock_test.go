package mcpstage

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json/v2"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// deadline bounds every wait of these tests.
const deadline = 30 * time.Second

// Environment of the lock roles.
const (
	envLockDir = "MCPSTAGE_TEST_LOCK_DIR"
	envLockLog = "MCPSTAGE_TEST_LOCK_LOG"
	envRounds  = "MCPSTAGE_TEST_ROUNDS"
)

// holdRole takes the lock and keeps it until it is killed.
var holdRole = testkit.Role{Name: "mcpstage-hold", Run: func([]string) int {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if _, err := acquireDirLock(ctx, os.Getenv(envLockDir), mainLockPolicy(), time.Now); err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Printf("ready %d\n", os.Getpid())
	testkit.SleepForever()
	return 0
}}

// contendPolicy retries until the test's deadline: the contenders are
// meant to wait for each other, not to give up.
func contendPolicy() lockPolicy {
	return lockPolicy{TTL: time.Minute, Wait: deadline, FirstGap: time.Millisecond, MaxGap: 2 * time.Millisecond}
}

// brief is p for a test that expects a busy lock: a contender gives up
// after a few tries.
func brief(p lockPolicy) lockPolicy {
	p.Wait, p.FirstGap, p.MaxGap = 20*time.Millisecond, time.Millisecond, time.Millisecond
	return p
}

// contendRole takes the lock ROUNDS times and, under it, appends "enter
// PID" and "leave PID" to the log in two separate appends.
var contendRole = testkit.Role{Name: "mcpstage-contend", Run: func([]string) int {
	rounds, err := strconv.Atoi(os.Getenv(envRounds))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for range rounds {
		l, err := acquireDirLock(ctx, os.Getenv(envLockDir), contendPolicy(), time.Now)
		if err == nil {
			err = errors.Join(appendLine("enter"), appendLine("leave"), l.release())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}}

func appendLine(what string) error {
	f, err := os.OpenFile(os.Getenv(envLockLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %d\n", what, os.Getpid())
	return errors.Join(err, f.Close())
}

// sleepRole reports its PID and lives until it is killed.
var sleepRole = testkit.Role{Name: "mcpstage-sleep", Run: func([]string) int {
	fmt.Printf("ready %d\n", os.Getpid())
	testkit.SleepForever()
	return 0
}}

// start starts the test binary in role with extra environment and returns
// the PID it reports, watched until the test ends.
func start(t *testing.T, w *testkit.Watch, role string, extra ...string) (*exec.Cmd, int) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = testkit.ChildEnv(role, extra...)
	pid, err := testkit.StartReady(cmd, deadline)
	require.NoError(t, err)
	w.Add(pid)
	return cmd, pid
}

// gone waits until procid says pid is gone (Wine drops a killed process
// object a little after the wait returns).
func gone(t *testing.T, id procid.Identity) {
	t.Helper()
	testkit.Eventually(t, fmt.Sprintf("pid %d gone", id.PID), deadline, func() bool {
		alive, err := id.Alive(context.Background())
		return err == nil && !alive
	})
}

// deadProcess returns the identity of a process that ran and was killed.
func deadProcess(t *testing.T) procid.Identity {
	t.Helper()
	w := testkit.NewWatch(t)
	cmd, pid := start(t, w, sleepRole.Name)
	id, err := procid.Of(context.Background(), pid)
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	gone(t, id)
	return id
}

func self(t *testing.T) procid.Identity {
	t.Helper()
	id, err := procid.Self()
	require.NoError(t, err)
	return id
}

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	require.NoError(t, err)
	return h
}

// lockIn returns the path of a lock directory in a new test directory.
func lockIn(t *testing.T) string {
	return filepath.Join(testkit.TempDir(t), ".cursorkit-mcp.lock")
}

// plant makes dir a lock held by owner, as another process would.
func plant(t *testing.T, dir string, owner lockOwner) []byte {
	t.Helper()
	data, err := json.Marshal(owner)
	require.NoError(t, err)
	plantRaw(t, dir, data)
	return data
}

func plantRaw(t *testing.T, dir string, raw []byte) {
	t.Helper()
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ownerFile), raw, 0o600))
}

// others lists what dir holds besides its owner file (claimed owner
// files left behind), and what is beside dir in its parent.
func others(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	for _, d := range []string{dir, filepath.Dir(dir)} {
		entries, err := os.ReadDir(d)
		require.NoError(t, err)
		for _, e := range entries {
			if e.Name() != ownerFile && e.Name() != filepath.Base(dir) {
				left = append(left, filepath.Join(d, e.Name()))
			}
		}
	}
	return left
}

// readLockOwner returns the owner of the lock directory dir, as status
// reads it; ok is false when there is none (or a foreign one).
func readLockOwner(dir string) (owner lockOwner, ok bool, err error) {
	ins, err := inspect(dir)
	return ins.owner, ins.ok, err
}

// requireOurs checks that l holds dir with this process as the owner.
func requireOurs(t *testing.T, l *dirLock, dir string) {
	t.Helper()
	o, ok, err := readLockOwner(dir)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, os.Getpid(), o.PID)
	assert.Equal(t, hostname(t), o.Hostname)
	assert.True(t, self(t).Matches(procid.Identity{PID: o.PID, Created: o.Created}), "created %s", o.Created)
	assert.True(t, o.same(l.owner))
}

func TestPolicies(t *testing.T) {
	tests := []struct {
		name string
		got  lockPolicy
		want lockPolicy
	}{
		{"main", mainLockPolicy(), lockPolicy{TTL: 30 * time.Second, Wait: 10 * time.Second, FirstGap: 2 * time.Millisecond, MaxGap: 50 * time.Millisecond}},
		{"bootstrap", bootstrapLockPolicy(), lockPolicy{TTL: 10 * time.Second, Wait: 5 * time.Second, FirstGap: 2 * time.Millisecond, MaxGap: 20 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.got)
			for _, ceiling := range []time.Duration{tt.got.FirstGap, tt.got.MaxGap} {
				for range 100 {
					g := gap(ceiling)
					assert.True(t, g >= ceiling/2 && g <= ceiling, "gap %s under %s", g, ceiling)
				}
			}
		})
	}
}

func TestAcquireReleaseAndIdempotentRelease(t *testing.T) {
	dir := lockIn(t)
	ctx := context.Background()
	l, err := acquireDirLock(ctx, dir, mainLockPolicy(), time.Now)
	require.NoError(t, err)
	requireOurs(t, l, dir)
	if info, err := os.Stat(dir); assert.NoError(t, err) && !testkit.UnderWine() {
		assert.True(t, info.IsDir())
	}

	// Held: another holding in this process is refused, with the owner named.
	_, err = tryDirLock(dir, time.Now)
	require.True(t, failure.Is(err, failure.Resource), "%v", err)
	assert.Contains(t, err.Error(), fmt.Sprintf("pid %d", os.Getpid()))
	_, err = acquireDirLock(ctx, dir, brief(mainLockPolicy()), time.Now)
	require.True(t, failure.Is(err, failure.Resource), "%v", err)

	require.NoError(t, l.release())
	assert.NoDirExists(t, dir)
	require.NoError(t, l.release(), "a second release")
	var none *dirLock
	require.NoError(t, none.release())

	// A second release must not touch a later holding.
	l2, err := tryDirLock(dir, time.Now)
	require.NoError(t, err)
	require.NoError(t, l.release())
	requireOurs(t, l2, dir)
	require.NoError(t, l2.release())
}

func TestReleaseOfAGoneOrTakenOverLock(t *testing.T) {
	tests := []struct {
		name     string
		meddle   func(t *testing.T, dir string)
		wantErr  string // "" for success
		wantKept bool   // the directory is still there afterwards
	}{
		{name: "directory removed by hand", meddle: func(t *testing.T, dir string) {
			require.NoError(t, safefile.RemoveAll(dir))
		}},
		{name: "taken over after the TTL", wantErr: "was taken over", wantKept: true, meddle: func(t *testing.T, dir string) {
			require.NoError(t, safefile.RemoveAll(dir))
			plant(t, dir, lockOwner{PID: os.Getpid(), Hostname: hostname(t), Acquired: time.Now().Add(time.Second)})
		}},
		{name: "taken over, owner file not written yet", wantErr: "was taken over", wantKept: true, meddle: func(t *testing.T, dir string) {
			require.NoError(t, safefile.RemoveAll(dir))
			require.NoError(t, os.Mkdir(dir, 0o700))
		}},
		{name: "taken over by this process at the same instant (a clock standing still)", wantErr: "was taken over", wantKept: true,
			meddle: func(t *testing.T, dir string) {
				o, ok, err := readLockOwner(dir)
				require.NoError(t, err)
				require.True(t, ok)
				o.Token = rand.Text() // all the holding has that another one lacks
				require.NoError(t, safefile.RemoveAll(dir))
				plant(t, dir, o)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := lockIn(t)
			frozen := time.Now()
			l, err := tryDirLock(dir, func() time.Time { return frozen })
			require.NoError(t, err)
			tt.meddle(t, dir)
			var before []byte
			if tt.wantKept {
				before, _ = os.ReadFile(filepath.Join(dir, ownerFile))
			}
			for range 2 { // idempotent: the same outcome again
				err = l.release()
				if tt.wantErr == "" {
					require.NoError(t, err)
				} else {
					require.True(t, failure.Is(err, failure.Resource), "%v", err)
					assert.Contains(t, err.Error(), tt.wantErr)
				}
			}
			if tt.wantKept {
				assert.DirExists(t, dir)
				after, _ := os.ReadFile(filepath.Join(dir, ownerFile))
				assert.Equal(t, before, after, "the new owner's file is untouched")
			} else {
				assert.NoDirExists(t, dir)
			}
		})
	}
}

// TestReleaseLeavesALaterHoldersLock: a reclaimer that judged the lock
// ownerless long before may link its owner file in between a release's
// claim and its removal: the release removes its own files only, and the
// lock stays the reclaimer's.
func TestReleaseLeavesALaterHoldersLock(t *testing.T) {
	dir := lockIn(t)
	l, err := tryDirLock(dir, time.Now)
	require.NoError(t, err)
	claimed, ok := claim(dir, "release")
	require.True(t, ok)
	l.ownerGone = true // where release stands after its claim
	later, err := json.Marshal(lockOwner{PID: os.Getpid(), Hostname: hostname(t), Acquired: time.Now().Add(time.Second)})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ownerFile), later, 0o600))

	require.NoError(t, l.release())
	assert.NoFileExists(t, claimed)
	got, err := os.ReadFile(filepath.Join(dir, ownerFile))
	require.NoError(t, err)
	assert.Equal(t, later, got, "the later holder's owner file")
	assert.Empty(t, others(t, dir))
}

func TestUnusableLockDirectory(t *testing.T) {
	tests := []struct {
		name    string
		dir     func(t *testing.T) string
		wantMsg string
	}{
		{name: "missing parent", wantMsg: "parent directory does not exist", dir: func(t *testing.T) string {
			return filepath.Join(testkit.TempDir(t), "no-such-dir", "lock")
		}},
		{name: "parent is a file", dir: func(t *testing.T) string {
			parent := filepath.Join(testkit.TempDir(t), "file")
			require.NoError(t, os.WriteFile(parent, nil, 0o600))
			return filepath.Join(parent, "lock")
		}},
		{name: "lock path is a file", wantMsg: "is not a directory", dir: func(t *testing.T) string {
			dir := lockIn(t)
			require.NoError(t, os.WriteFile(dir, []byte("x"), 0o600))
			return dir
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			_, err := acquireDirLock(context.Background(), dir, mainLockPolicy(), time.Now)
			require.True(t, failure.Is(err, failure.Setup), "%v", err)
			assert.Contains(t, err.Error(), tt.wantMsg)
			_, err = tryDirLock(dir, time.Now)
			require.True(t, failure.Is(err, failure.Setup), "%v", err)
		})
	}
}

// TestWhoMayBeReclaimed: the reclaim rules, for acquireDirLock; tryDirLock
// reclaims nothing.
func TestWhoMayBeReclaimed(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	me, host, dead := self(t), hostname(t), deadProcess(t)
	owner := func(id procid.Identity, host string, age time.Duration) lockOwner {
		return lockOwner{PID: id.PID, Created: id.Created, Hostname: host, Acquired: now.Add(-age)}
	}
	noCreated := func(id procid.Identity) procid.Identity { return procid.Identity{PID: id.PID} }
	reused := procid.Identity{PID: me.PID, Created: me.Created.Add(-time.Hour)}

	tests := []struct {
		name        string
		policy      lockPolicy
		owner       *lockOwner // planted with this owner, or
		raw         []byte     // with these owner file bytes, or
		ownerIsDir  bool       // owner.json is a directory
		wantReclaim bool
		wantMsg     string // in the error when not reclaimed
	}{
		{name: "live owner", owner: new(owner(me, host, time.Second)), wantMsg: fmt.Sprintf("pid %d on %s", me.PID, host)},
		{name: "live owner, creation time unknown", owner: new(owner(noCreated(me), host, time.Second)), wantMsg: "may be reclaimed"},
		{name: "dead owner on this host", owner: new(owner(dead, host, time.Second)), wantReclaim: true},
		{name: "dead owner, creation time unknown", owner: new(owner(noCreated(dead), host, time.Second)), wantReclaim: true},
		{name: "reused PID", owner: new(owner(reused, host, time.Second)), wantReclaim: true},
		{name: "dead owner on another host", owner: new(owner(dead, "elsewhere.invalid", time.Second)), wantMsg: "on elsewhere.invalid"},
		{name: "live owner past the TTL", owner: new(owner(me, host, time.Hour)), wantReclaim: true},
		{name: "another host's owner past the TTL", owner: new(owner(dead, "elsewhere.invalid", 31*time.Second)), wantReclaim: true},
		{name: "within the main TTL", owner: new(owner(me, host, 11*time.Second)), wantMsg: "acquired 11s ago"},
		{name: "past the bootstrap TTL", policy: bootstrapLockPolicy(), owner: new(owner(me, host, 11*time.Second)), wantReclaim: true},
		{name: "owner from the future", owner: new(owner(me, "elsewhere.invalid", -time.Hour)), wantMsg: "held by"},
		{name: "malformed owner file", raw: []byte(`{"pid": 12`), wantMsg: "has no owner file cursorkit can read: if no cursorkit process uses this worktree, remove it"},
		{name: "owner file of zero pid", raw: []byte(`{"pid":0,"acquiredAt":"2000-01-01T00:00:00Z"}`), wantMsg: "has no owner file"},
		{name: "owner file without acquisition time", raw: []byte(`{"pid":1}`), wantMsg: "has no owner file"},
		{name: "owner file not an object", raw: []byte(`[1,2]`), wantMsg: "has no owner file"},
		{name: "owner file too large", raw: []byte(strings.Repeat(" ", maxOwnerBytes+1) + `{}`), wantMsg: "has no owner file"},
		{name: "owner file is a directory", ownerIsDir: true, wantMsg: "has no owner file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := lockIn(t)
			switch {
			case tt.owner != nil:
				plant(t, dir, *tt.owner)
			case tt.raw != nil:
				plantRaw(t, dir, tt.raw)
			case tt.ownerIsDir:
				require.NoError(t, os.MkdirAll(filepath.Join(dir, ownerFile), 0o700))
			}
			// Old as it may be, a directory with a foreign owner file is kept.
			old := now.Add(-24 * time.Hour)
			require.NoError(t, os.Chtimes(dir, old, old))
			var before []byte
			if !tt.ownerIsDir {
				before, _ = os.ReadFile(filepath.Join(dir, ownerFile))
			}
			if o, ok, err := readLockOwner(dir); assert.NoError(t, err) {
				assert.Equal(t, tt.owner != nil, ok)
				if tt.owner != nil {
					assert.True(t, o.same(*tt.owner))
				}
			}

			_, err := tryDirLock(dir, clock)
			require.True(t, failure.Is(err, failure.Resource), "tryDirLock never reclaims: %v", err)

			policy := tt.policy
			if policy.TTL == 0 {
				policy = mainLockPolicy()
			}
			l, err := acquireDirLock(context.Background(), dir, brief(policy), clock)
			if tt.wantReclaim {
				require.NoError(t, err)
				requireOurs(t, l, dir)
				assert.Empty(t, others(t, dir))
				require.NoError(t, l.release())
				return
			}
			require.True(t, failure.Is(err, failure.Resource), "%v", err)
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.Contains(t, err.Error(), dir)
			assert.DirExists(t, dir)
			if !tt.ownerIsDir {
				after, _ := os.ReadFile(filepath.Join(dir, ownerFile))
				assert.Equal(t, before, after, "the owner file is untouched")
			}
		})
	}
}

// TestOwnerlessLockReclaimedPastTheTTL: a lock directory without an owner
// file (a kill between its mkdir and the owner file, or in a release) is
// reclaimed once it has not changed for the TTL, as a stale owner is; a
// younger one is left to the process that is writing its owner file.
// tryDirLock reclaims nothing.
func TestOwnerlessLockReclaimedPastTheTTL(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	tests := []struct {
		name        string
		policy      lockPolicy
		age         time.Duration // the directory unchanged for this long
		leftover    bool          // with the temporary owner file of a killed writer
		wantReclaim bool
		wantMsg     string // in the error when not reclaimed
	}{
		{name: "fresh", age: 0, wantMsg: "has no owner file (unchanged for 0s; it may be reclaimed after 30s)"},
		{name: "within the TTL", age: 29 * time.Second, wantMsg: "has no owner file (unchanged for 29s"},
		{name: "past the TTL", age: 31 * time.Second, wantReclaim: true},
		{name: "a day old", age: 24 * time.Hour, wantReclaim: true},
		{name: "past the TTL, a killed owner write's file left", age: time.Minute, leftover: true, wantReclaim: true},
		{name: "within the main TTL, past the bootstrap's", policy: bootstrapLockPolicy(), age: 11 * time.Second, wantReclaim: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := lockIn(t)
			require.NoError(t, os.Mkdir(dir, 0o700))
			if tt.leftover {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "."+ownerFile+".123.tmp"), []byte(`{"pid":1`), 0o600))
			}
			changed := now.Add(-tt.age)
			require.NoError(t, os.Chtimes(dir, changed, changed))

			_, err := tryDirLock(dir, clock)
			require.True(t, failure.Is(err, failure.Resource), "tryDirLock never reclaims: %v", err)
			assert.Contains(t, err.Error(), "has no owner file")

			policy := cmp.Or(tt.policy, mainLockPolicy())
			l, err := acquireDirLock(context.Background(), dir, brief(policy), clock)
			if !tt.wantReclaim {
				require.True(t, failure.Is(err, failure.Resource), "%v", err)
				assert.Contains(t, err.Error(), tt.wantMsg)
				assert.Contains(t, err.Error(), dir)
				assert.NoFileExists(t, filepath.Join(dir, ownerFile))
				return
			}
			require.NoError(t, err)
			requireOurs(t, l, dir)
			require.NoError(t, l.release())
			assert.NoDirExists(t, dir, "released with what a kill left in it")
		})
	}
}

func TestCancelledAcquire(t *testing.T) {
	dir := lockIn(t)
	plant(t, dir, lockOwner{PID: os.Getpid(), Hostname: hostname(t), Acquired: time.Now()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := acquireDirLock(ctx, dir, mainLockPolicy(), time.Now)
	require.True(t, failure.Is(err, failure.Cancelled), "%v", err)

	// Cancelled while waiting between attempts.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = acquireDirLock(ctx, dir, lockPolicy{TTL: time.Minute, Wait: time.Hour, FirstGap: time.Millisecond, MaxGap: time.Millisecond}, time.Now)
	require.True(t, failure.Is(err, failure.Cancelled), "%v", err)
}

// TestWaitRestartsWhenTheLockChangesHands: a contender waits as long as
// the lock keeps changing hands (each holding shorter than the wait, the
// queue longer) and gets it once it is free; when the lock then stays
// with one holder for the wait, or always did, the contender fails busy,
// naming that holder, a wait after the last change of hands.
func TestWaitRestartsWhenTheLockChangesHands(t *testing.T) {
	const wait = time.Second
	tests := []struct {
		name  string
		moves time.Duration // how long the lock changes hands, every 50 ms
		freed bool          // and then it is released
	}{
		{name: "a queue that moves, then frees it", moves: 2 * wait, freed: true},
		{name: "a queue that moves, then one holder keeps it", moves: 2 * wait},
		{name: "one holder that keeps it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := lockIn(t)
			// Another host's owner: no liveness check, only the TTL.
			holder := func() lockOwner {
				return lockOwner{PID: os.Getpid(), Hostname: "another-host", Acquired: time.Now().UTC(), Token: rand.Text()}
			}
			plant(t, dir, holder())
			began := time.Now()
			var lastChange time.Duration // since began; read after queueDone
			queueDone := make(chan struct{})
			go func() {
				defer close(queueDone)
				for time.Since(began) < tc.moves {
					time.Sleep(50 * time.Millisecond) // the pace of the played queue, not a wait for an event
					replaceOwner(t, dir, holder())
					lastChange = time.Since(began)
				}
				if tc.freed {
					removeLock(t, dir)
				}
			}()
			p := lockPolicy{TTL: time.Minute, Wait: wait, FirstGap: time.Millisecond, MaxGap: 20 * time.Millisecond}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			l, err := acquireDirLock(ctx, dir, p, time.Now)
			took := time.Since(began)
			<-queueDone
			if tc.freed {
				require.NoError(t, err)
				assert.GreaterOrEqual(t, took, tc.moves, "it waited out the whole queue, twice its wait")
				requireOurs(t, l, dir)
				require.NoError(t, l.release())
				return
			}
			require.Error(t, err)
			assert.True(t, failure.Is(err, failure.Resource), "busy, not cut by the test's deadline: %v", err)
			assert.Contains(t, err.Error(), "is held by pid "+strconv.Itoa(os.Getpid())+" on another-host")
			assert.GreaterOrEqual(t, took, lastChange+wait, "a whole wait after the last change of hands")
		})
	}
}

// replaceOwner puts owner in dir's owner file at once, as a new holder's
// acquisition would (Windows refuses the move while a contender reads
// the file: tried again).
func replaceOwner(t *testing.T, dir string, owner lockOwner) {
	data, err := json.Marshal(owner)
	if !assert.NoError(t, err) {
		return
	}
	tmp := filepath.Join(dir, "owner.next")
	if !assert.NoError(t, os.WriteFile(tmp, data, 0o600)) {
		return
	}
	assert.Eventually(t, func() bool { return os.Rename(tmp, filepath.Join(dir, ownerFile)) == nil }, deadline, time.Millisecond)
}

// removeLock frees dir as a release would, tried again while a contender
// holds its owner file open (Windows).
func removeLock(t *testing.T, dir string) {
	assert.Eventually(t, func() bool {
		err := os.Remove(filepath.Join(dir, ownerFile))
		return (err == nil || errors.Is(err, os.ErrNotExist)) && os.Remove(dir) == nil
	}, deadline, time.Millisecond)
}

// TestProcessesNeverOverlap: child processes contend for one lock many
// times; their enter/leave lines, appended under the lock, strictly
// alternate.
func TestProcessesNeverOverlap(t *testing.T) {
	children, rounds := 4, 25
	if testkit.UnderWine() {
		children, rounds = 3, 10 // process start and file calls are slow under Wine
	}
	base := testkit.TempDir(t)
	dir, log := filepath.Join(base, "lock"), filepath.Join(base, "log")
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*deadline)
	defer cancel()
	var wg sync.WaitGroup
	for range children {
		cmd := exec.CommandContext(ctx, exe)
		cmd.Env = testkit.ChildEnv(contendRole.Name, envLockDir+"="+dir, envLockLog+"="+log, envRounds+"="+strconv.Itoa(rounds))
		wg.Go(func() {
			out, err := cmd.CombinedOutput()
			assert.NoError(t, err, "%s", out)
		})
	}
	wg.Wait()

	f, err := os.Open(log)
	require.NoError(t, err)
	defer f.Close()
	var lines []string
	for s := bufio.NewScanner(f); s.Scan(); {
		lines = append(lines, s.Text())
	}
	require.Len(t, lines, 2*children*rounds)
	for i := 0; i < len(lines); i += 2 {
		pid, ok := strings.CutPrefix(lines[i], "enter ")
		require.True(t, ok, "line %d: %q", i, lines[i])
		require.Equal(t, "leave "+pid, lines[i+1], "line %d: another process entered while %s held the lock", i+1, pid)
	}
	assert.NoDirExists(t, dir)
}

// TestAKilledOwnerIsReclaimedAtOnce: kill -9 (TerminateProcess) of the
// owner frees the lock for a contender on this host without waiting for
// the TTL; tryDirLock still takes nothing over.
func TestAKilledOwnerIsReclaimedAtOnce(t *testing.T) {
	dir := lockIn(t)
	w := testkit.NewWatch(t)
	cmd, pid := start(t, w, holdRole.Name, envLockDir+"="+dir)
	owner, ok, err := readLockOwner(dir)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, pid, owner.PID)

	_, err = acquireDirLock(context.Background(), dir, brief(mainLockPolicy()), time.Now)
	require.True(t, failure.Is(err, failure.Resource), "a live owner keeps it: %v", err)
	assert.Contains(t, err.Error(), fmt.Sprintf("pid %d", pid))

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	gone(t, procid.Identity{PID: owner.PID, Created: owner.Created})

	_, err = tryDirLock(dir, time.Now)
	require.True(t, failure.Is(err, failure.Resource), "tryDirLock never reclaims: %v", err)

	began := time.Now()
	l, err := acquireDirLock(context.Background(), dir, mainLockPolicy(), time.Now)
	require.NoError(t, err)
	assert.Less(t, time.Since(began), mainLockPolicy().TTL)
	requireOurs(t, l, dir)
	assert.Empty(t, others(t, dir))
	require.NoError(t, l.release())
}

// TestRacingReclaimers: of goroutines that all find the same stale lock
// (an owner past the TTL, or no owner file for longer), exactly one gets
// it.
func TestRacingReclaimers(t *testing.T) {
	stale := map[string]func(t *testing.T, dir string){
		"owner past the TTL": func(t *testing.T, dir string) {
			plant(t, dir, lockOwner{PID: os.Getpid(), Hostname: hostname(t), Acquired: time.Now().Add(-time.Hour)})
		},
		"no owner file past the TTL": func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(dir, 0o700))
			old := time.Now().Add(-time.Hour)
			require.NoError(t, os.Chtimes(dir, old, old))
		},
	}
	for name, plantStale := range stale {
		t.Run(name, func(t *testing.T) { raceReclaimers(t, plantStale) })
	}
}

func raceReclaimers(t *testing.T, plantStale func(t *testing.T, dir string)) {
	const racers = 8
	rounds := 20
	if testkit.UnderWine() {
		rounds = 5
	}
	for round := range rounds {
		dir := filepath.Join(testkit.TempDir(t), "lock")
		plantStale(t, dir)
		var wins atomic.Int32
		var mu sync.Mutex
		var held []*dirLock
		startLine := make(chan struct{})
		var wg sync.WaitGroup
		for range racers {
			wg.Go(func() {
				<-startLine
				p := lockPolicy{TTL: 30 * time.Second, Wait: 3 * time.Millisecond, FirstGap: time.Millisecond, MaxGap: time.Millisecond}
				l, err := acquireDirLock(context.Background(), dir, p, time.Now)
				if err != nil {
					assert.True(t, failure.Is(err, failure.Resource), "%v", err)
					return
				}
				wins.Add(1)
				mu.Lock()
				held = append(held, l)
				mu.Unlock()
			})
		}
		close(startLine)
		wg.Wait()
		require.Equal(t, int32(1), wins.Load(), "round %d", round)
		requireOurs(t, held[0], dir)
		assert.Empty(t, others(t, dir), "round %d", round)
		require.NoError(t, held[0].release())
		assert.NoDirExists(t, dir, "round %d", round)
	}
}

func TestReadLockOwnerOfAMissingLock(t *testing.T) {
	_, ok, err := readLockOwner(lockIn(t))
	require.NoError(t, err)
	assert.False(t, ok)
}

// FuzzReadLockOwner: any owner file bytes are read without a panic; what
// is not a complete owner is foreign (not ok, no error), never an owner
// that could be judged stale.
func FuzzReadLockOwner(f *testing.F) {
	f.Add([]byte(`{"pid":12,"created":"2026-01-02T03:04:05.678Z","hostname":"h","acquiredAt":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"pid":12,"acquiredAt":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"pid":-1,"acquiredAt":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"pid":12,"pid":13,"acquiredAt":"2026-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"pid":1e99}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{`))
	f.Add([]byte{0xff, 0xfe})
	f.Add([]byte(nil))
	dir := filepath.Join(testkit.TempDir(f), "lock")
	require.NoError(f, os.Mkdir(dir, 0o700))
	f.Fuzz(func(t *testing.T, raw []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ownerFile), raw, 0o600))
		o, ok, err := readLockOwner(dir)
		require.NoError(t, err)
		if !ok {
			assert.Equal(t, lockOwner{}, o)
			return
		}
		assert.Positive(t, o.PID)
		assert.False(t, o.Acquired.IsZero())
		var again lockOwner
		require.NoError(t, json.Unmarshal(raw, &again))
		assert.True(t, again.same(o))
	})
}
