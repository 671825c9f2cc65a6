package mcpstage_test

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpstage"
)

// gitOrSkip returns git's path, or skips: the worktree shapes need a real
// git (the Wine lane has none unless the machine's Windows git is set up).
func gitOrSkip(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH: the repository shapes need it")
	}
	return path
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(gitOrSkip(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// shapes are the three worktree shapes: a plain repository, a linked
// worktree and a directory outside any repository.
//
// Without git (the Wine lane's prefix has no git.exe) only "none" is
// there: everything but the exclusion still runs.
func shapes(t *testing.T) map[string]string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		return map[string]string{"none": testkit.TempDir(t)}
	}
	repo := testkit.TempDir(t)
	git(t, repo, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README"), []byte("r\n"), 0o644))
	git(t, repo, "add", "README")
	git(t, repo, "commit", "-q", "-m", "init")
	linked := filepath.Join(testkit.TempDir(t), "linked")
	git(t, repo, "worktree", "add", "-q", linked)
	return map[string]string{"repository": repo, "worktree": linked, "none": testkit.TempDir(t)}
}

var entry = mcpstage.Entry{Command: "node", Args: []string{"server.js", "--port", "0"}, Env: map[string]string{"TOKEN": "t0k3n"}}

const operatorConfig = "{\n    \"mcpServers\": {\"operator\": {\"command\": \"op\",   \"args\": []}},\n  \"other\": 1\n}"

func readMaybe(t *testing.T, path string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", false
	}
	require.NoError(t, err)
	return string(b), true
}

// porcelain is git status of the worktree, ignored files left out.
func porcelain(t *testing.T, dir string) string {
	t.Helper()
	return git(t, dir, "status", "--porcelain", "--untracked-files=all")
}

// inEveryShape runs test as a subtest in every worktree shape (shapes),
// with no config and with the operator's (baseline ""/operatorConfig),
// .cursor/ laid anew before and removed after.
func inEveryShape(t *testing.T, test func(t *testing.T, shape, dir, baseline string)) {
	t.Helper()
	for shape, dir := range shapes(t) {
		for _, baseline := range []string{"", operatorConfig} {
			name := shape + "/no config"
			if baseline != "" {
				name = shape + "/operator config"
			}
			t.Run(name, func(t *testing.T) {
				cursorDir := filepath.Join(dir, ".cursor")
				require.NoError(t, safefile.RemoveAll(cursorDir))
				if baseline != "" {
					require.NoError(t, os.MkdirAll(cursorDir, 0o755))
					require.NoError(t, os.WriteFile(filepath.Join(cursorDir, "mcp.json"), []byte(baseline), 0o644))
				}
				test(t, shape, dir, baseline)
				require.NoError(t, safefile.RemoveAll(cursorDir))
			})
		}
	}
}

func TestStageReleaseRestoresEverything(t *testing.T) {
	ctx := context.Background()
	inEveryShape(t, func(t *testing.T, shape, dir, baseline string) {
		cursorDir := filepath.Join(dir, ".cursor")
		config := filepath.Join(cursorDir, "mcp.json")
		var before string
		if shape != "none" {
			before = porcelain(t, dir)
		}
		s, err := mcpstage.New(ctx, dir, mcpstage.Options{})
		require.NoError(t, err)
		lease, err := s.Stage(ctx, entry)
		require.NoError(t, err)
		assert.Equal(t, mcpstage.DefaultKeyPrefix+lease.ID, lease.Key)

		got, ok := readMaybe(t, config)
		require.True(t, ok)
		var doc struct {
			MCPServers map[string]jsontext.Value `json:"mcpServers"`
		}
		require.NoError(t, json.Unmarshal([]byte(got), &doc))
		assert.Contains(t, doc.MCPServers, lease.Key)
		if baseline != "" {
			assert.Contains(t, doc.MCPServers, "operator")
		}
		assert.True(t, strings.HasSuffix(got, "}\n"))
		st, err := s.Status(ctx)
		require.NoError(t, err)
		assert.True(t, st.Staged)
		assert.Equal(t, shape, st.Git, "the shape as status names it")
		require.Len(t, st.Leases, 1)
		assert.Equal(t, []string{"TOKEN"}, st.Leases[0].EnvNames)
		assert.NotContains(t, mustJSON(t, st), "t0k3n", "status never shows env values")
		if shape != "none" {
			assert.True(t, st.Excluded)
			assert.Equal(t, withoutConfig(before), porcelain(t, dir), "git sees none of cursorkit's files (the config is excluded too)")
		}

		require.NoError(t, s.Release(ctx, lease.ID))
		got, ok = readMaybe(t, config)
		if baseline == "" {
			assert.False(t, ok, "no config before, none after")
			assert.NoDirExists(t, cursorDir, "cursorkit made .cursor/ and removed it")
		} else {
			assert.Equal(t, baseline, got, "the baseline, byte for byte")
		}
		assert.NoFileExists(t, filepath.Join(cursorDir, ".cursorkit-mcp-state.json"))
		assert.NoDirExists(t, filepath.Join(cursorDir, ".cursorkit-mcp.lock"))
		st, err = s.Status(ctx)
		require.NoError(t, err)
		assert.False(t, st.Staged)
		assert.False(t, st.Excluded)
		if shape != "none" {
			assert.Equal(t, before, porcelain(t, dir))
		}
	})
}

// withoutConfig is a git status without the line of an untracked
// .cursor/mcp.json, which the exclusion hides while something is staged.
func withoutConfig(status string) string {
	var keep []string
	for _, l := range strings.SplitAfter(status, "\n") {
		if l != "" && strings.TrimSpace(l) != "?? .cursor/mcp.json" {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// aShape is a repository when the machine has git, else a plain
// directory.
func aShape(t *testing.T, kind string) string {
	t.Helper()
	sh := shapes(t)
	if dir, ok := sh[kind]; ok {
		return dir
	}
	return sh["none"]
}

func TestPeersKeepEachOthersEntries(t *testing.T) {
	ctx := context.Background()
	dir := aShape(t, "repository")
	a, err := mcpstage.New(ctx, dir, mcpstage.Options{})
	require.NoError(t, err)
	b, err := mcpstage.New(ctx, filepath.Join(dir), mcpstage.Options{})
	require.NoError(t, err)
	la, err := a.Stage(ctx, entry)
	require.NoError(t, err)
	lb, err := b.Stage(ctx, mcpstage.Entry{Command: "python3", Args: []string{"tools.py"}})
	require.NoError(t, err)
	config := filepath.Join(dir, ".cursor", "mcp.json")
	got, _ := readMaybe(t, config)
	assert.Contains(t, got, la.Key)
	assert.Contains(t, got, lb.Key)

	require.NoError(t, a.Release(ctx, la.ID))
	got, _ = readMaybe(t, config)
	assert.NotContains(t, got, la.Key)
	assert.Contains(t, got, lb.Key, "a release never drops a peer's entry")
	require.NoError(t, b.Heartbeat(ctx, lb.ID))
	err = a.Heartbeat(ctx, la.ID)
	assert.Equal(t, failure.Input, failure.KindOf(err), "a released lease is unknown")
	require.NoError(t, b.Release(ctx, lb.ID))
	assert.NoDirExists(t, filepath.Join(dir, ".cursor"))
}

// stagedIn stages entry in a worktree of kind (aShape) and returns the
// stager, the lease and the config's path.
func stagedIn(t *testing.T, kind string) (s *mcpstage.Stager, lease mcpstage.Lease, dir, config string) {
	t.Helper()
	dir = aShape(t, kind)
	s, err := mcpstage.New(context.Background(), dir, mcpstage.Options{})
	require.NoError(t, err)
	lease, err = s.Stage(context.Background(), entry)
	require.NoError(t, err)
	return s, lease, dir, filepath.Join(dir, ".cursor", "mcp.json")
}

func TestOperatorEditIsKept(t *testing.T) {
	ctx := context.Background()
	s, lease, dir, config := stagedIn(t, "repository")
	// The operator adds a server of their own and drops cursorkit's.
	edit := `{"mcpServers": {"mine": {"command": "x", "args": []}}}`
	require.NoError(t, os.WriteFile(config, []byte(edit), 0o644))
	require.NoError(t, s.Heartbeat(ctx, lease.ID))
	got, _ := readMaybe(t, config)
	assert.Contains(t, got, `"mine"`)
	assert.Contains(t, got, lease.Key, "cursorkit's entry comes from the manifest")
	st, err := s.Status(ctx)
	require.NoError(t, err)
	assert.True(t, st.OperatorEdit)

	require.NoError(t, s.Release(ctx, lease.ID))
	got, ok := readMaybe(t, config)
	require.True(t, ok, "an operator's config is never removed")
	assert.Equal(t, edit, got, "the operator's latest bytes, exactly")
	assert.DirExists(t, filepath.Join(dir, ".cursor"), "the operator's file keeps .cursor/")
}

func TestQuarantine(t *testing.T) {
	ctx := context.Background()
	s, lease, _, config := stagedIn(t, "worktree")
	broken := []byte(`{"mcpServers": {"` + lease.Key + `": {"command": "node"`)
	require.NoError(t, os.WriteFile(config, broken, 0o644))

	require.NoError(t, s.Release(ctx, lease.ID))
	got, _ := readMaybe(t, config)
	assert.Equal(t, string(broken), got, "a quarantined config is never written")
	_, err := s.Stage(ctx, entry)
	require.Error(t, err)
	assert.Equal(t, failure.Setup, failure.KindOf(err))
	assert.Contains(t, err.Error(), "To recover")
	st, err := s.Status(ctx)
	require.NoError(t, err)
	require.NotNil(t, st.Quarantine)
	assert.Equal(t, st.Git != "none", st.Excluded, "the exclusion stays while quarantined")

	// Parseable but still holding a cursorkit key: still quarantined.
	require.NoError(t, os.WriteFile(config, []byte(`{"mcpServers": {"`+lease.Key+`": {"command": "node"}}}`), 0o644))
	r, err := s.Reconcile(ctx)
	require.NoError(t, err)
	assert.True(t, r.Quarantined)

	require.NoError(t, os.WriteFile(config, []byte(`{"mcpServers": {}}`), 0o644))
	r, err = s.Reconcile(ctx)
	require.NoError(t, err)
	assert.False(t, r.Quarantined)
	assert.True(t, r.Cleaned)
	got, _ = readMaybe(t, config)
	assert.Equal(t, `{"mcpServers": {}}`, got, "the repaired file is the operator's")
	st, err = s.Status(ctx)
	require.NoError(t, err)
	assert.False(t, st.Staged)
	assert.False(t, st.Excluded)
}

func TestRefusals(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"tracked config", func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".cursor", "mcp.json"), []byte(`{}`), 0o644))
			git(t, dir, "add", "-f", ".cursor/mcp.json")
		}},
		{".cursor is a file", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".cursor"), nil, 0o644))
		}},
		{"mcp.json is a directory", func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".cursor", "mcp.json"), 0o755))
		}},
		{".cursor is a symbolic link", func(t *testing.T, dir string) {
			if runtime.GOOS == "windows" {
				t.Skip("symbolic links need a privilege on Windows")
			}
			require.NoError(t, os.Symlink(testkit.TempDir(t), filepath.Join(dir, ".cursor")))
		}},
		{"mcp.json is a symbolic link", func(t *testing.T, dir string) {
			if runtime.GOOS == "windows" {
				t.Skip("symbolic links need a privilege on Windows")
			}
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755))
			require.NoError(t, os.Symlink(filepath.Join(testkit.TempDir(t), "x.json"), filepath.Join(dir, ".cursor", "mcp.json")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testkit.TempDir(t)
			if _, err := exec.LookPath("git"); err == nil {
				git(t, dir, "init", "-q")
			}
			tt.setup(t, dir)
			s, err := mcpstage.New(ctx, dir, mcpstage.Options{})
			require.NoError(t, err)
			_, err = s.Stage(ctx, entry)
			require.Error(t, err)
			assert.Equal(t, failure.Setup, failure.KindOf(err), err.Error())
			assert.NoFileExists(t, filepath.Join(dir, ".cursor", ".cursorkit-mcp-state.json"))
		})
	}
}

// TestDeadLeasesAreDropped: a lease whose owner (on this host) is gone is
// dropped at the next reconcile, before its TTL.
func TestDeadLeasesAreDropped(t *testing.T) {
	ctx := context.Background()
	dir := aShape(t, "repository")
	exe, err := os.Executable()
	require.NoError(t, err)
	child := exec.Command(exe)
	child.Env = testkit.ChildEnv("exit")
	require.NoError(t, child.Start())
	s, err := mcpstage.New(ctx, dir, mcpstage.Options{OwnerPID: child.Process.Pid})
	require.NoError(t, err)
	lease, err := s.Stage(ctx, entry)
	require.NoError(t, err)
	_ = child.Wait()
	r, err := s.Reconcile(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{lease.ID}, r.Dropped)
	assert.True(t, r.Cleaned)
	assert.NoDirExists(t, filepath.Join(dir, ".cursor"))
}

func TestMain(m *testing.M) {
	testkit.RunIfChild(append(mcpstage.LockRoles,
		testkit.Role{Name: "exit", Run: func([]string) int {
			// Lives long enough to be staged for.
			time.Sleep(300 * time.Millisecond)
			return 0
		}},
		testkit.Role{Name: "cycle", Run: runCycle},
		testkit.Role{Name: "operator", Run: runOperator},
		testkit.Role{Name: "stager", Run: runStager},
	)...)
	os.Exit(m.Run())
}

// TestReleaseOnExitNeverWaitsNorTakesOver: the exit backstop makes one
// attempt at the lock; while a live peer holds it nothing is written and
// the lease stays for reconcile; once that holder is gone (a stale lock)
// the backstop still does not take it over, and a normal release does.
func TestReleaseOnExitNeverWaitsNorTakesOver(t *testing.T) {
	ctx := context.Background()
	s, lease, dir, config := stagedIn(t, "repository")
	staged, _ := readMaybe(t, config)

	exe, err := os.Executable()
	require.NoError(t, err)
	w := testkit.NewWatch(t)
	holder := exec.Command(exe)
	holder.Env = testkit.ChildEnv("mcpstage-hold", "MCPSTAGE_TEST_LOCK_DIR="+filepath.Join(dir, ".cursor", mcpstage.LockDir))
	pid, err := testkit.StartReady(holder, 20*time.Second)
	require.NoError(t, err)
	w.Add(pid)

	start := time.Now()
	err = s.ReleaseOnExit(lease.ID)
	require.Error(t, err)
	assert.Equal(t, failure.Resource, failure.KindOf(err))
	assert.Less(t, time.Since(start), 5*time.Second, "one attempt, no waiting")
	got, _ := readMaybe(t, config)
	assert.Equal(t, staged, got, "nothing written while a peer holds the lock")

	require.NoError(t, holder.Process.Kill())
	_ = holder.Wait()
	err = s.ReleaseOnExit(lease.ID)
	assert.Equal(t, failure.Resource, failure.KindOf(err), "a stale lock is not the backstop's to take over")
	require.NoError(t, s.Release(ctx, lease.ID), "a normal release reclaims the dead holder's lock")
	_, present := readMaybe(t, config)
	assert.False(t, present)
}

// TestLastReleaseWaitsOutAPeersLock: a peer that takes the main lock just
// as the last release lets it go (a heartbeat that will find nothing
// staged) keeps .cursor/ from being empty for its step; the release tries
// the rmdir again once the peer's lock is gone, and .cursor/ goes, also
// when the peer's step ends between the failed rmdir and the look inside.
// With an operator's file there instead, it stays.
func TestLastReleaseWaitsOutAPeersLock(t *testing.T) {
	for _, tc := range []struct {
		name         string
		operatorFile bool
		peerEndsAt   string // the fault point where the peer's step ends
	}{
		{name: "a peer's lock", peerEndsAt: "cursor-dir-locked"},
		{name: "a peer's lock gone before the look", peerEndsAt: "cursor-dir-kept"},
		{name: "an operator's file", operatorFile: true, peerEndsAt: "cursor-dir-locked"},
	} {
		operatorFile := tc.operatorFile
		t.Run(tc.name, func(t *testing.T) {
			dir := testkit.TempDir(t)
			cursorDir := filepath.Join(dir, mcpstage.ConfigDir)
			peerLock := filepath.Join(cursorDir, mcpstage.LockDir)
			retried := false
			opts := mcpstage.WithFault(mcpstage.Options{}, func(p string) {
				switch p {
				case "unlocked":
					// The peer takes the lock the moment the release let it go.
					if _, err := os.Stat(filepath.Join(cursorDir, mcpstage.StateFile)); os.IsNotExist(err) {
						require.NoError(t, os.Mkdir(peerLock, 0o755))
						if operatorFile {
							require.NoError(t, os.WriteFile(filepath.Join(cursorDir, "rules.md"), []byte("mine"), 0o644))
						}
					}
				case tc.peerEndsAt:
					// The peer's step ends.
					if _, err := os.Stat(peerLock); err == nil {
						require.NoError(t, os.Remove(peerLock))
					}
				}
				if p == "cursor-dir-locked" {
					retried = true
				}
			})
			s, err := mcpstage.New(context.Background(), dir, opts)
			require.NoError(t, err)
			lease, err := s.Stage(context.Background(), entry)
			require.NoError(t, err)
			require.NoError(t, s.Release(context.Background(), lease.ID))
			_, err = os.Stat(cursorDir)
			if operatorFile {
				assert.NoError(t, err, ".cursor/ with an operator's file stays")
				assert.False(t, retried, "no wait for an operator's file")
				return
			}
			assert.True(t, os.IsNotExist(err), ".cursor/ is gone once the peer's lock is: %v", err)
			assert.True(t, retried, "the rmdir was tried again")
		})
	}
}

// TestHeartbeatDoesNotReviveALapsedLease: a heartbeat on a lease whose
// last one is older than LeaseTTL fails (input, as for a lease that is
// gone) and leaves it lapsed, for the next reconcile to drop; one within
// the TTL renews it.
func TestHeartbeatDoesNotReviveALapsedLease(t *testing.T) {
	for _, tc := range []struct {
		name   string
		silent time.Duration // since the stage, when the heartbeat comes
		lapsed bool
	}{
		{name: "within the TTL", silent: mcpstage.LeaseTTL - time.Minute},
		{name: "past the TTL", silent: mcpstage.LeaseTTL + time.Minute, lapsed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := aShape(t, "repository")
			staged := time.Now()
			now := staged
			s, err := mcpstage.New(ctx, dir, mcpstage.Options{Now: func() time.Time { return now }})
			require.NoError(t, err)
			lease, err := s.Stage(ctx, entry)
			require.NoError(t, err)

			now = staged.Add(tc.silent)
			err = s.Heartbeat(ctx, lease.ID)
			st, statusErr := s.Status(ctx)
			require.NoError(t, statusErr)
			require.Len(t, st.Leases, 1, "a heartbeat drops no lease")
			r, reconcileErr := s.Reconcile(ctx)
			require.NoError(t, reconcileErr)
			if !tc.lapsed {
				require.NoError(t, err)
				assert.True(t, st.Leases[0].HeartbeatAt.Equal(now), "renewed")
				assert.Empty(t, r.Dropped)
				return
			}
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
			assert.ErrorContains(t, err, "lapsed")
			assert.True(t, st.Leases[0].HeartbeatAt.Equal(staged), "the lapsed lease is not renewed")
			assert.Equal(t, []string{lease.ID}, r.Dropped, "reconcile drops the lapsed lease")
			assert.True(t, r.Cleaned)
			assert.NoDirExists(t, filepath.Join(dir, mcpstage.ConfigDir))
		})
	}
}

// TestCreatedDirGoesAfterAPeerStagedBeforeItsRmdir: a peer that stages
// the moment the last release lets the lock go (its bootstrap finds
// .cursor/ there) makes that release's rmdir fail; .cursor/, which
// cursorkit made, still goes once the peer's lease does, by its release
// or by the reconcile that drops it.
func TestCreatedDirGoesAfterAPeerStagedBeforeItsRmdir(t *testing.T) {
	for _, tc := range []struct {
		name      string
		onExit    bool // the last release is the exit backstop's
		peerLapse bool // the peer's lease lapses and a reconcile drops it
	}{
		{name: "the peer releases"},
		{name: "the backstop's release, the peer releases", onExit: true},
		{name: "a reconcile drops the peer's lapsed lease", peerLapse: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := aShape(t, "repository")
			cursorDir := filepath.Join(dir, mcpstage.ConfigDir)
			peer, err := mcpstage.New(ctx, dir, mcpstage.Options{})
			require.NoError(t, err)
			var peerLease mcpstage.Lease
			opts := mcpstage.WithFault(mcpstage.Options{}, func(p string) {
				if p == "unlocked" && peerLease.ID == "" {
					var err error
					peerLease, err = peer.Stage(ctx, entry)
					require.NoError(t, err)
				}
			})
			s, err := mcpstage.New(ctx, dir, opts)
			require.NoError(t, err)
			lease, err := s.Stage(ctx, entry)
			require.NoError(t, err)
			if tc.onExit {
				require.NoError(t, s.ReleaseOnExit(lease.ID))
			} else {
				require.NoError(t, s.Release(ctx, lease.ID))
			}
			require.NotEmpty(t, peerLease.ID, "the peer staged")
			require.DirExists(t, cursorDir, "the peer's staging keeps .cursor/")

			if tc.peerLapse {
				later, err := mcpstage.New(ctx, dir, mcpstage.Options{Now: func() time.Time { return time.Now().Add(mcpstage.LeaseTTL + time.Minute) }})
				require.NoError(t, err)
				r, err := later.Reconcile(ctx)
				require.NoError(t, err)
				assert.Equal(t, []string{peerLease.ID}, r.Dropped)
			} else {
				require.NoError(t, peer.Release(ctx, peerLease.ID))
			}
			assert.NoDirExists(t, cursorDir, "cursorkit made .cursor/: it goes once empty")
		})
	}
}

// TestDeepConfigIsQuarantinedForItsDepth: a valid config nested deeper
// than the parser goes quarantines the worktree with that reason, not as
// a syntax error.
func TestDeepConfigIsQuarantinedForItsDepth(t *testing.T) {
	ctx := context.Background()
	s, _, _, config := stagedIn(t, "none")
	const depth = 10000
	deep := `{"mcpServers": {"deep": {"command": "x", "args": ` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}}`
	require.NoError(t, os.WriteFile(config, []byte(deep), 0o644))
	r, err := s.Reconcile(ctx)
	require.NoError(t, err)
	assert.True(t, r.Quarantined)
	st, err := s.Status(ctx)
	require.NoError(t, err)
	require.NotNil(t, st.Quarantine)
	assert.Contains(t, st.Quarantine.Reason, "nested deeper than 10000 levels")
	assert.NotContains(t, st.Quarantine.Reason, "syntax error")
	got, _ := readMaybe(t, config)
	assert.Equal(t, deep, got, "a quarantined config is never written")
}

// TestMadeDirGoesAtTheNextCleanup: the exclusion block records that
// cursorkit made .cursor/ ("made"), so a .cursor/ that the last release
// could not remove (here a file in it then, standing for a crash between
// the unlock and the rmdir, or an rmdir that failed) goes at the next
// reconcile once it is empty, and the exclude file is as it was. An
// operator's file makes .cursor/ the operator's: the record goes, and
// .cursor/ stays. A .cursor/ that was there before is never recorded.
func TestMadeDirGoesAtTheNextCleanup(t *testing.T) {
	for _, tc := range []struct {
		name       string
		existed    bool   // .cursor/ was there before the stage
		leftBehind string // a file in .cursor/ when the release's rmdir comes
		operators  bool   // it is an operator's (it stays)
		wantMarked bool   // the record is still there after the release
	}{
		{name: "nothing in the way"},
		{name: "a temporary file a kill left", leftBehind: ".mcp.json.123.tmp", wantMarked: true},
		{name: "an operator's file", leftBehind: "rules.md", operators: true},
		{name: ".cursor/ was there before", existed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := aShape(t, "repository")
			cursorDir := filepath.Join(dir, mcpstage.ConfigDir)
			if tc.existed {
				require.NoError(t, os.Mkdir(cursorDir, 0o755))
			}
			_, exclude := stagerInGit(t, dir, mcpstage.Options{})
			before, _ := readMaybe(t, exclude)
			opts := mcpstage.WithFault(mcpstage.Options{}, func(p string) {
				if p == "unlocked" && tc.leftBehind != "" {
					require.NoError(t, os.WriteFile(filepath.Join(cursorDir, tc.leftBehind), nil, 0o644))
				}
			})
			s, err := mcpstage.New(ctx, dir, opts)
			require.NoError(t, err)
			lease, err := s.Stage(ctx, entry)
			require.NoError(t, err)
			st, err := s.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, !tc.existed, st.MadeDir, "recorded while staged")
			require.NoError(t, s.Release(ctx, lease.ID))

			st, err = s.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, tc.wantMarked, st.MadeDir, "recorded after the release")
			if tc.leftBehind == "" {
				assert.Equal(t, tc.existed, dirExists(cursorDir))
				got, _ := readMaybe(t, exclude)
				assert.Equal(t, before, got, "the exclude file as it was")
				return
			}
			require.DirExists(t, cursorDir, "the release's rmdir failed")
			if !tc.operators {
				require.NoError(t, os.Remove(filepath.Join(cursorDir, tc.leftBehind)))
			}
			r, err := s.Reconcile(ctx)
			require.NoError(t, err)
			assert.Equal(t, !tc.operators, r.RemovedDir)
			assert.Equal(t, tc.operators, dirExists(cursorDir), "an operator's file keeps .cursor/")
			st, err = s.Status(ctx)
			require.NoError(t, err)
			assert.False(t, st.MadeDir, "the record went")
			got, _ := readMaybe(t, exclude)
			assert.Equal(t, before, got, "the exclude file as it was")
		})
	}
}

// stagerInGit returns a stager of dir and the exclude file its worktree
// is listed in, skipping the test where dir is not in git (the Windows
// lane has no git): the record of a made .cursor/ lives in that file.
func stagerInGit(t *testing.T, dir string, opts mcpstage.Options) (*mcpstage.Stager, string) {
	t.Helper()
	s, err := mcpstage.New(context.Background(), dir, opts)
	require.NoError(t, err)
	exclude := mcpstage.ExcludePath(s)
	if exclude == "" {
		t.Skip("no git here: the record of a made .cursor/ lives in git's info/exclude")
	}
	return s, exclude
}

func dirExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// TestMadeDirAfterTheExitBackstop: the exit backstop, which never waits
// for the bootstrap lock, still removes the empty .cursor/ it made; the
// "made" line it leaves goes with the next reconcile, and the exclude
// file is as it was.
func TestMadeDirAfterTheExitBackstop(t *testing.T) {
	ctx := context.Background()
	dir := aShape(t, "repository")
	s, exclude := stagerInGit(t, dir, mcpstage.Options{})
	before, _ := readMaybe(t, exclude)
	lease, err := s.Stage(ctx, entry)
	require.NoError(t, err)
	require.NoError(t, s.ReleaseOnExit(lease.ID))
	assert.NoDirExists(t, filepath.Join(dir, mcpstage.ConfigDir), "the backstop removed .cursor/")
	_, err = s.Reconcile(ctx)
	require.NoError(t, err)
	st, err := s.Status(ctx)
	require.NoError(t, err)
	assert.False(t, st.MadeDir)
	assert.False(t, st.Excluded)
	got, _ := readMaybe(t, exclude)
	assert.Equal(t, before, got, "the exclude file as it was")
}

// TestStageOutlivesAReconcileOfItsEmptyDir: a reconcile (or a last
// release) removes the empty .cursor/ a stage has just made, before the
// stage took its lock; the stage makes it again and succeeds.
func TestStageOutlivesAReconcileOfItsEmptyDir(t *testing.T) {
	for _, kind := range []string{"repository", "none"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			dir := aShape(t, kind)
			other, err := mcpstage.New(ctx, dir, mcpstage.Options{})
			require.NoError(t, err)
			inGit := mcpstage.ExcludePath(other) != "" // else no record: the reconcile leaves .cursor/
			reconciled := false
			opts := mcpstage.WithFault(mcpstage.Options{}, func(p string) {
				if p == "bootstrap-created-dir" && !reconciled {
					reconciled = true
					r, err := other.Reconcile(ctx)
					require.NoError(t, err)
					require.Equal(t, inGit, r.RemovedDir, "the reconcile took the empty .cursor/")
				}
			})
			s, err := mcpstage.New(ctx, dir, opts)
			require.NoError(t, err)
			lease, err := s.Stage(ctx, entry)
			require.NoError(t, err)
			require.True(t, reconciled)
			got, _ := readMaybe(t, filepath.Join(dir, mcpstage.ConfigDir, mcpstage.ConfigFile))
			assert.Contains(t, got, lease.Key)
			require.NoError(t, s.Release(ctx, lease.ID))
			assert.NoDirExists(t, filepath.Join(dir, mcpstage.ConfigDir))
		})
	}
}
