package probe

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// countRunner answers every --version with the same result and counts
// the runs.
type countRunner struct {
	mu     sync.Mutex
	result runResult
	runs   int
}

func (c *countRunner) run(context.Context, discovery.Resolution, []string, time.Duration) runResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs++
	return c.result
}

func (c *countRunner) Runs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs
}

// cachedBinary is a real file configured as the override, probed by a
// counting runner with a version cache on a settable clock.
type cachedBinary struct {
	path  string
	clock *fakeClock
	run   *countRunner
	cache *versionCache
	cfg   Config
}

func newCachedBinary(t *testing.T, stdout string) *cachedBinary {
	t.Helper()
	root := testkit.TempDir(t)
	name := "agent"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	b := &cachedBinary{path: filepath.Join(root, "bin", name),
		clock: &fakeClock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)},
		run:   &countRunner{result: printed(stdout)}}
	require.NoError(t, os.MkdirAll(filepath.Dir(b.path), 0o755))
	require.NoError(t, os.WriteFile(b.path, []byte("build one"), 0o755))
	env := discovery.EnvFromOS()
	env.Cwd = root
	b.cfg = Config{Override: b.path, env: &env, runner: b.run, CacheDir: filepath.Join(root, "cache"), ReuseVersion: true, now: b.clock.Now}
	b.cache = b.cfg.versionCache()
	return b
}

// probe runs Probe and reports whether --version was spawned for it.
func (b *cachedBinary) probe(t *testing.T) (Report, error, bool) {
	t.Helper()
	before := b.run.Runs()
	report, err := Probe(context.Background(), b.cfg)
	return report, err, b.run.Runs() > before
}

func TestVersionCacheHitSkipsTheRun(t *testing.T) {
	b := newCachedBinary(t, agentsim.DefaultVersion+"\n")

	first, err, ran := b.probe(t)
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Equal(t, sourceCLI, versionSource(first))

	second, err, ran := b.probe(t)
	require.NoError(t, err)
	assert.False(t, ran, "the cached answer is used")
	assert.Equal(t, sourceCache, versionSource(second))
	assert.Equal(t, first.Version, second.Version)
	assert.Equal(t, cursor.TestedInRange, second.Tested)
	assert.Equal(t, first.Binary.Resolution.Path, second.Binary.Resolution.Path)
	require.Len(t, second.Candidates, 1)
	assert.Equal(t, outcomeOK, second.Candidates[0].Outcome)
	assert.Equal(t, "version from cache (probed 2026-11-30T09:00:00Z; file unchanged)", second.Candidates[0].Detail)
	assert.Contains(t, second.Diagnostics, second.Candidates[0].Detail)
	assert.Empty(t, first.Candidates[0].Detail)
}

func TestVersionCacheInvalidation(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, b *cachedBinary)
	}{
		{"the binary is rewritten", func(t *testing.T, b *cachedBinary) {
			require.NoError(t, os.WriteFile(b.path, []byte("build two, longer"), 0o755))
		}},
		{"only the mtime changes", func(t *testing.T, b *cachedBinary) {
			info, err := os.Stat(b.path)
			require.NoError(t, err)
			later := info.ModTime().Add(time.Second)
			require.NoError(t, os.Chtimes(b.path, later, later))
		}},
		{"the entry expires", func(t *testing.T, b *cachedBinary) { b.clock.Advance(versionTTL) }},
		{"the entry is dated in the future", func(t *testing.T, b *cachedBinary) { b.clock.Advance(-time.Hour) }},
		{"the cache file is corrupt", func(t *testing.T, b *cachedBinary) {
			files, err := filepath.Glob(filepath.Join(b.cache.Dir, "version-*.json"))
			require.NoError(t, err)
			require.Len(t, files, 1)
			require.NoError(t, os.WriteFile(files[0], []byte(`{"format":1,"file":`), 0o600))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCachedBinary(t, agentsim.DefaultVersion+"\n")
			_, err, ran := b.probe(t)
			require.NoError(t, err)
			require.True(t, ran)
			_, _, ran = b.probe(t)
			require.False(t, ran, "cached before the change")

			tt.change(t, b)
			report, err, ran := b.probe(t)
			require.NoError(t, err)
			assert.True(t, ran, "the change invalidates the entry")
			assert.Equal(t, sourceCLI, versionSource(report))

			report, err, ran = b.probe(t)
			require.NoError(t, err)
			assert.False(t, ran, "the entry was rewritten")
			assert.Equal(t, sourceCache, versionSource(report))
		})
	}
}

func TestVersionCacheKeepsOnlySuccesses(t *testing.T) {
	b := newCachedBinary(t, "")
	b.run.result = runResult{stderr: "Error: broken", exitCode: 1}
	for range 2 {
		_, err, ran := b.probe(t)
		assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
		assert.True(t, ran, "a failure is never cached")
	}
	b.run.result = printed("") // exit 0 without a version: nothing worth keeping
	for range 2 {
		report, err, ran := b.probe(t)
		require.NoError(t, err)
		assert.True(t, ran)
		assert.Equal(t, cursor.TestedUnknown, report.Tested)
	}
	entries, err := os.ReadDir(b.cache.Dir)
	if !os.IsNotExist(err) {
		require.NoError(t, err)
		assert.Empty(t, entries)
	}
}

func TestVersionCacheOlderBuildStillFailsAsSetup(t *testing.T) {
	b := newCachedBinary(t, "2026.08.11-e8db854\n")
	for i, want := range []string{sourceCLI, sourceCache} {
		report, err, ran := b.probe(t)
		assert.Equal(t, failure.Setup, failure.KindOf(err), "probe %d", i)
		assert.True(t, report.Available)
		assert.Equal(t, cursor.TestedOlder, report.Tested)
		assert.Equal(t, want, versionSource(report))
		assert.Equal(t, i == 0, ran)
	}
}

func TestVersionCacheUnusedUnlessConfigured(t *testing.T) {
	b := newCachedBinary(t, agentsim.DefaultVersion+"\n")
	_, err, _ := b.probe(t)
	require.NoError(t, err)

	exact, err := ProbeExact(context.Background(), b.path, b.cfg)
	require.NoError(t, err)
	assert.Equal(t, sourceCLI, versionSource(exact), "the settings endpoint's exact probe always runs")
	assert.Equal(t, 2, b.run.Runs())

	noCache := b.cfg
	noCache.ReuseVersion = false
	report, err := Probe(context.Background(), noCache)
	require.NoError(t, err)
	assert.Equal(t, sourceCLI, versionSource(report))
	assert.Equal(t, 3, b.run.Runs())
}

func TestVersionCacheEntryIsForOneFile(t *testing.T) {
	c := &versionCache{cacheFiles{Dir: testkit.TempDir(t)}}
	id := fileIdentity{Path: "/bin/cursor-agent", Links: []string{"/bin/cursor-agent", "/opt/v1/cursor-agent"},
		Size: 10, ModTime: 1, Dev: 2, Ino: 3}
	require.NoError(t, c.store(id, []byte(agentsim.DefaultVersion+"\n")))
	out, _, ok := c.load(id)
	require.True(t, ok)
	assert.Equal(t, agentsim.DefaultVersion+"\n", out)

	for name, other := range map[string]func(f *fileIdentity){
		"links":      func(f *fileIdentity) { f.Links = []string{"/bin/cursor-agent", "/opt/v2/cursor-agent"} },
		"no links":   func(f *fileIdentity) { f.Links = nil },
		"size":       func(f *fileIdentity) { f.Size++ },
		"mtime":      func(f *fileIdentity) { f.ModTime++ },
		"device":     func(f *fileIdentity) { f.Dev++ },
		"inode":      func(f *fileIdentity) { f.Ino++ },
		"other path": func(f *fileIdentity) { f.Path = "/usr/bin/cursor-agent" },
	} {
		changed := id
		other(&changed)
		_, _, ok := c.load(changed)
		assert.False(t, ok, name)
	}
	assert.NoError(t, c.store(id, make([]byte, maxCachedVersionOutput+1)), "too large to keep, not an error")
	out, _, ok = c.load(id)
	require.True(t, ok, "the earlier entry stays")
	assert.Equal(t, agentsim.DefaultVersion+"\n", out)

	require.Error(t, (&versionCache{}).store(id, []byte("x")))
	_, _, ok = (&versionCache{}).load(id)
	assert.False(t, ok)
}

func FuzzVersionCacheLoad(f *testing.F) {
	f.Add([]byte(`{"format":1,"file":{"path":"/a","size":1,"modTimeNs":2},"probedAt":"2026-11-30T08:00:00Z","output":"2026.10.15-a1b2c3d\n"}`))
	f.Add([]byte(`{"format":1,"file":{"path":"/a"},"output":""}`))
	f.Add([]byte(`not json`))
	dir := testkit.TempDir(f)
	id := fileIdentity{Path: "/a", Size: 1, ModTime: 2}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	c := &versionCache{cacheFiles{Dir: dir, Now: func() time.Time { return now }}}
	f.Fuzz(func(t *testing.T, data []byte) {
		require.NoError(t, os.WriteFile(c.file(id.Path), data, 0o600))
		out, at, ok := c.load(id)
		if ok {
			assert.NotEmpty(t, out)
			assert.LessOrEqual(t, len(out), maxCachedVersionOutput)
			assert.False(t, at.After(now))
			assert.Less(t, now.Sub(at), versionTTL)
		}
	})
}

// TestSimVersionCacheSkipsTheSpawn proves with the simulator's record that
// a cached answer starts no process, and that status still runs.
func TestSimVersionCacheSkipsTheSpawn(t *testing.T) {
	t.Parallel()
	m := newSimMachine(t)
	agent := m.install(t, "cursor-agent")
	m.cfg.ReuseVersion = true
	ctx := context.Background()

	for i, want := range []string{sourceCLI, sourceCache, sourceCache} {
		report, err := Probe(ctx, m.cfg)
		require.NoError(t, err)
		assert.Equal(t, agent, report.Binary.Resolution.Path)
		assert.Equal(t, agentsim.DefaultVersion, report.Version)
		assert.Equal(t, want, versionSource(report), "probe %d", i)
	}
	assert.Equal(t, 1, m.invocations(t, "--version"), "one spawn for three probes")

	report, err := Probe(ctx, m.cfg)
	require.NoError(t, err)
	_, err = Status(ctx, m.cfg, report)
	require.NoError(t, err)
	assert.Equal(t, 1, m.invocations(t, "status"))

	// A new file at the same path (an update in place) is probed again.
	self, err := os.Executable()
	require.NoError(t, err)
	data, err := os.ReadFile(self)
	require.NoError(t, err)
	require.NoError(t, os.Remove(agent))
	require.NoError(t, os.WriteFile(agent, data, 0o755))
	report, err = Probe(ctx, m.cfg)
	require.NoError(t, err)
	assert.Equal(t, sourceCLI, versionSource(report))
	assert.Equal(t, 2, m.invocations(t, "--version"))
}

// versionSource says where a report's version came from: "cache" when the
// effective candidate's detail says so, "cli" when --version ran.
func versionSource(r Report) string {
	if n := len(r.Candidates); n > 0 && strings.HasPrefix(r.Candidates[n-1].Detail, "version from cache") {
		return sourceCache
	}
	return sourceCLI
}
