package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestMain runs the benchmarks isolated from the user's files. Started as
// a copy made by testkit.Install (the replay stand-in of BenchmarkAgentStream,
// the agents of BenchmarkFallbackHandoff), the test binary plays that role
// instead.
func TestMain(m *testing.M) {
	testkit.RunIfChild()
	os.Exit(isolated(m))
}

// isolated runs the benchmarks with their own cache and settings, so the
// binaries they start never read or write the user's (catalog and version
// caches, settings file). The go command that builds them keeps the user's
// build cache: it would otherwise follow XDG_CACHE_HOME into an empty one
// and rebuild the standard library first.
func isolated(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cursorkit-bench-*")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if os.Getenv("GOCACHE") == "" {
		if user, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(user, "go-build"))
		}
	}
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	os.Setenv("CURSORKIT_SETTINGS", filepath.Join(dir, "settings.json"))
	return m.Run()
}
