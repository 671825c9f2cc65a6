package probe

import (
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
)

// fakeClock is a settable clock for cache expiry tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestCatalogCacheRoundTripAndExpiry(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	c := &catalogCache{cacheFiles{Dir: filepath.Join(testkit.TempDir(t), "nested", "models"), Now: clock.Now}}
	models := []Model{{ID: "gpt-5", Label: "GPT-5", Current: true}, {ID: "auto", Label: "Auto", Default: true}}

	_, _, ok := c.Load("/bin/cursor-agent", "2026.10.15-abc1234")
	assert.False(t, ok, "nothing cached yet")

	require.NoError(t, c.Store("/bin/cursor-agent", "2026.10.15-abc1234", models))
	got, fetched, ok := c.Load("/bin/cursor-agent", "2026.10.15-abc1234")
	require.True(t, ok)
	assert.Equal(t, models, got)
	assert.True(t, fetched.Equal(clock.Now()))

	_, _, ok = c.Load("/bin/cursor-agent", "2026.10.16-abc1234")
	assert.False(t, ok, "another build")
	_, _, ok = c.Load("/other/cursor-agent", "2026.10.15-abc1234")
	assert.False(t, ok, "another binary")

	clock.Advance(59 * time.Minute)
	_, _, ok = c.Load("/bin/cursor-agent", "2026.10.15-abc1234")
	assert.True(t, ok, "still fresh")
	clock.Advance(time.Minute)
	_, _, ok = c.Load("/bin/cursor-agent", "2026.10.15-abc1234")
	assert.False(t, ok, "expired after the TTL")

	require.NoError(t, c.Store("/bin/cursor-agent", "2026.10.15-abc1234", nil))
	got, _, ok = c.Load("/bin/cursor-agent", "2026.10.15-abc1234")
	require.True(t, ok, "an empty catalog is cached too")
	assert.Empty(t, got)

	clock.Advance(-time.Hour)
	_, _, ok = c.Load("/bin/cursor-agent", "2026.10.15-abc1234")
	assert.False(t, ok, "a file dated in the future is not trusted")

}

func TestCatalogCacheCorruptFileIgnoredAndRewritten(t *testing.T) {
	c := &catalogCache{cacheFiles{Dir: testkit.TempDir(t)}}
	file := c.file("/bin/cursor-agent", "b")
	for _, corrupt := range []string{"", "{", "null", `{"format":1,"binaryPath":"/bin/cursor-agent","build":"b","fetchedAt":"2026-01-01T00:00:00Z"}`,
		`{"format":99,"binaryPath":"/bin/cursor-agent","build":"b","fetchedAt":"2026-01-01T00:00:00Z","models":[]}`} {
		require.NoError(t, os.WriteFile(file, []byte(corrupt), 0o600))
		_, _, ok := c.Load("/bin/cursor-agent", "b")
		assert.False(t, ok, "corrupt %q", corrupt)
	}
	require.NoError(t, c.Store("/bin/cursor-agent", "b", []Model{{ID: "x", Label: "X"}}))
	got, _, ok := c.Load("/bin/cursor-agent", "b")
	require.True(t, ok)
	assert.Equal(t, []Model{{ID: "x", Label: "X"}}, got)
	entries, err := os.ReadDir(c.Dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary files left behind")
}

func TestCatalogCacheWithoutDir(t *testing.T) {
	var c catalogCache
	assert.Error(t, c.Store("/x", "b", nil))
}

func TestConfigCacheDir(t *testing.T) {
	home := testkit.TempDir(t)
	// os.UserCacheDir reads one of these per OS.
	t.Setenv("XDG_CACHE_HOME", home)
	t.Setenv("LocalAppData", home)
	t.Setenv("HOME", home)
	cache, err := Config{}.catalogCache()
	require.NoError(t, err)
	assert.Equal(t, "models", filepath.Base(cache.Dir))
	assert.Equal(t, "cursorkit", filepath.Base(filepath.Dir(cache.Dir)))
	assert.True(t, strings.HasPrefix(cache.Dir, home), "%s under %s", cache.Dir, home)
	assert.Nil(t, Config{}.versionCache(), "no version cache without ReuseVersion")
	vc := Config{ReuseVersion: true, CacheDir: "/c"}.versionCache()
	require.NotNil(t, vc)
	assert.Equal(t, filepath.Join("/c", "version"), vc.Dir)
}

// TestCacheFilesReadOnlyWhatTheyWrite: encoding/json/v2 reads a cache
// file strictly, so a member given twice, a name in another case, an
// unknown member, invalid UTF-8 or a null catalog is a corrupt entry, ignored and rewritten; what
// JSON cannot hold as it is (invalid UTF-8) is never written.
func TestCacheFilesReadOnlyWhatTheyWrite(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	c := &catalogCache{cacheFiles{Dir: testkit.TempDir(t), Now: clock.Now}}
	file := c.file("/bin/cursor-agent", "b")
	require.NoError(t, c.Store("/bin/cursor-agent", "b", []Model{{ID: "x", Label: "X"}}))
	good, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, `{"format":1,"binaryPath":"/bin/cursor-agent","build":"b","fetchedAt":"2026-11-30T09:00:00Z",`+
		`"models":[{"id":"x","label":"X","current":false,"default":false}]}`, string(good))

	tests := []struct {
		name, old, new string
	}{
		{"a member given twice", `"build":"b"`, `"build":"b","build":"b"`},
		{"the format given twice, the last one right", `"format":1`, `"format":2,"format":1`},
		{"a name in another case", `"binaryPath"`, `"BinaryPath"`},
		{"a model's name in another case", `"id"`, `"ID"`},
		{"an unknown member", `"build":"b"`, `"build":"b","extra":1`},
		{"invalid UTF-8", `"X"`, "\"X\xff\""},
		{"an escaped lone surrogate", `"X"`, `"X\ud800"`},
		{"a null catalog", `[{"id":"x","label":"X","current":false,"default":false}]`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			corrupt := strings.Replace(string(good), tt.old, tt.new, 1)
			require.NotEqual(t, string(good), corrupt)
			require.NoError(t, os.WriteFile(file, []byte(corrupt), 0o600))
			_, _, ok := c.Load("/bin/cursor-agent", "b")
			assert.False(t, ok, "%s is corrupt", corrupt)
			require.NoError(t, c.Store("/bin/cursor-agent", "b", []Model{{ID: "x", Label: "X"}}))
			_, _, ok = c.Load("/bin/cursor-agent", "b")
			assert.True(t, ok, "rewritten")
		})
	}

	t.Run("no models is an empty array", func(t *testing.T) {
		require.NoError(t, c.Store("/bin/cursor-agent", "b", nil))
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Contains(t, string(data), `"models":[]`)
		got, _, ok := c.Load("/bin/cursor-agent", "b")
		require.True(t, ok)
		assert.Equal(t, []Model{}, got)
	})

	versions := &versionCache{cacheFiles{Dir: testkit.TempDir(t), Now: clock.Now}}
	writes := []struct {
		name  string
		store func() error
		file  string
	}{
		{"a model id", func() error { return c.Store("/bin/other", "b", []Model{{ID: "x\xff", Label: "X"}}) }, c.file("/bin/other", "b")},
		{"a binary path", func() error { return c.Store("/bin/\xff", "b", []Model{}) }, c.file("/bin/\xff", "b")},
		{"a --version output", func() error {
			return versions.store(fileIdentity{Path: "/a", Size: 1, ModTime: 2}, []byte("2026.10.15-a1b2c3d \xff\n"))
		}, versions.file("/a")},
	}
	for _, tt := range writes {
		t.Run("invalid UTF-8 in "+tt.name+" is not written", func(t *testing.T) {
			err := tt.store()
			require.Error(t, err)
			assert.Equal(t, failure.Unclassified, failure.KindOf(err))
			assert.NoFileExists(t, tt.file)
		})
	}

	t.Run("a file identity without device and inode has neither member", func(t *testing.T) {
		id := fileIdentity{Path: "/a", Size: 1, ModTime: 2}
		require.NoError(t, versions.store(id, []byte("2026.10.15-a1b2c3d\n")))
		data, err := os.ReadFile(versions.file("/a"))
		require.NoError(t, err)
		assert.Contains(t, string(data), `"file":{"path":"/a","size":1,"modTimeNs":2}`)
		out, _, ok := versions.load(id)
		require.True(t, ok)
		assert.Equal(t, "2026.10.15-a1b2c3d\n", out)
	})
}
