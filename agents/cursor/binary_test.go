package cursor

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/discovery/discoverytest"
	"github.com/cursorkit/cursorkit/failure"
)

func TestInstalledBuild(t *testing.T) {
	const version = "2026.10.15-a1b2c3d"
	tests := []struct {
		name string
		res  discovery.Resolution
		want string
	}{
		{"the installer's link", discovery.Resolution{
			Path:  "/home/me/.local/bin/cursor-agent",
			Links: []string{"/home/me/.local/bin/cursor-agent", "/home/me/.local/share/cursor-agent/versions/" + version + "/cursor-agent"},
		}, version},
		{"two hops, the last one decides", discovery.Resolution{
			Path:  "/usr/local/bin/cursor-agent",
			Links: []string{"/usr/local/bin/cursor-agent", "/opt/cursor/current", "/opt/cursor/versions/1.2.3/cursor-agent"},
		}, "1.2.3"},
		{"a plain file", discovery.Resolution{Path: "/usr/bin/cursor-agent"}, ""},
		{"a Windows install", discovery.Resolution{Path: `C:\Users\me\AppData\Local\cursor-agent\Versions\2026.10.15-a1b2c3d\cursor-agent.cmd`}, version},
		{"versions at the root", discovery.Resolution{Path: "/versions/cursor-agent"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, InstalledBuild(tt.res))
		})
	}
}

// TestRetryWithCursor: only a vanished cursor-agent found on PATH, with
// nothing configured, is retried as cursor, once.
func TestRetryWithCursor(t *testing.T) {
	vanished := failure.Wrap(failure.MissingCLI, &fs.PathError{Op: "fork/exec", Path: "/a/cursor-agent", Err: fs.ErrNotExist}, "program not found")
	onPath := func(candidate string) discovery.Resolution {
		return discovery.Resolution{Path: "/a/" + candidate, Name: candidate, Kind: discovery.POSIX, Source: discovery.SourcePath, Candidate: candidate}
	}
	withCursor := discoverytest.NewPOSIX().File("/b/cursor", 0o755)
	env := discovery.Env{GOOS: "linux", Path: "/a:/b", Cwd: "/"}
	tests := []struct {
		name   string
		bin    Binary
		err    error
		fsys   discovery.FS
		retry  bool
		wantAt string
	}{
		{"cursor-agent vanished: cursor", Binary{Resolution: onPath(nameCursorAgent)}, vanished, withCursor, true, "/b/cursor"},
		{"something configured: never", Binary{Resolution: onPath(nameCursorAgent), Configured: true}, vanished, withCursor, false, ""},
		{"an override's file: never", Binary{Resolution: discovery.Resolution{Path: "/a/cursor-agent", Source: discovery.SourceOverride, Candidate: "/a/cursor-agent"}}, vanished, withCursor, false, ""},
		{"cursor itself vanished: no second retry", Binary{Resolution: onPath(nameCursor)}, vanished, withCursor, false, ""},
		{"another start failure: never", Binary{Resolution: onPath(nameCursorAgent)}, failure.New(failure.Setup, "permission denied"), withCursor, false, ""},
		{"missing_cli without ENOENT: never", Binary{Resolution: onPath(nameCursorAgent)}, failure.New(failure.MissingCLI, "x"), withCursor, false, ""},
		{"cursor absent too", Binary{Resolution: onPath(nameCursorAgent)}, vanished, discoverytest.NewPOSIX(), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := retryWithCursor(context.Background(), tt.bin, tt.err, env, tt.fsys)
			assert.Equal(t, tt.retry, ok)
			assert.Equal(t, tt.wantAt, got.Resolution.Path)
			if ok {
				assert.False(t, got.Configured)
				assert.Equal(t, nameCursor, got.Resolution.Candidate)
			}
		})
	}
	assert.True(t, errors.Is(vanished, fs.ErrNotExist))
}
