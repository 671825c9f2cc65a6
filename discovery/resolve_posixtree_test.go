package discovery_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/discovery/discoverytest"
	"github.com/cursorkit/cursorkit/failure"
)

func posixEnv(path string) discovery.Env {
	return discovery.Env{GOOS: "linux", Path: path, Cwd: "/repo"}
}

// TestResolvePOSIXTree exercises the POSIX rules against synthetic trees.
func TestResolvePOSIXTree(t *testing.T) {
	const (
		bin     = "/home/u/.local/bin"
		version = "2025.11.25-a1b2c3d"
		target  = "/home/u/.local/share/cursor-agent/versions/" + version + "/cursor-agent"
	)
	pathCand := discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}
	override := func(v string) discovery.Candidate {
		return discovery.Candidate{Value: v, Source: discovery.SourceOverride}
	}
	tests := []struct {
		name      string
		fs        func(*discoverytest.FS)
		env       func(*discovery.Env)
		cand      discovery.Candidate
		wantPath  string
		wantLinks []string
		wantErr   failure.Kind
		errHas    string
		warnHas   string
		trailHas  []string
	}{
		{
			name:     "executable bit required",
			fs:       func(f *discoverytest.FS) { f.File("/a/cursor-agent", 0o644).File("/b/cursor-agent", 0o755) },
			env:      func(e *discovery.Env) { e.Path = "/a:/b" },
			cand:     pathCand,
			wantPath: "/b/cursor-agent",
			trailHas: []string{"skipped:not executable (mode -rw-r--r--)", "chosen:posix"},
		},
		{
			name:     "group or other execute bit is enough",
			fs:       func(f *discoverytest.FS) { f.File("/a/cursor-agent", 0o601) },
			env:      func(e *discovery.Env) { e.Path = "/a" },
			cand:     pathCand,
			wantPath: "/a/cursor-agent",
		},
		{
			name: "installer symlink chain is recorded and the version folder is the build",
			fs: func(f *discoverytest.FS) {
				f.Symlink(bin+"/cursor-agent", "../share/cursor-agent/versions/"+version+"/cursor-agent").File(target, 0o755)
			},
			env:       func(e *discovery.Env) { e.Path = "/usr/bin:" + bin },
			cand:      pathCand,
			wantPath:  bin + "/cursor-agent",
			wantLinks: []string{bin + "/cursor-agent", target},
		},
		{
			name: "two-hop chain with an absolute hop",
			fs: func(f *discoverytest.FS) {
				f.Symlink("/usr/local/bin/cursor-agent", "/opt/cursor/current").
					Symlink("/opt/cursor/current", "versions/1.2.3/cursor-agent").
					File("/opt/cursor/versions/1.2.3/cursor-agent", 0o755)
			},
			env:       func(e *discovery.Env) { e.Path = "/usr/local/bin" },
			cand:      pathCand,
			wantPath:  "/usr/local/bin/cursor-agent",
			wantLinks: []string{"/usr/local/bin/cursor-agent", "/opt/cursor/current", "/opt/cursor/versions/1.2.3/cursor-agent"},
		},
		{
			name: "a link to a non-executable target is skipped",
			fs: func(f *discoverytest.FS) {
				f.Symlink("/a/cursor-agent", "/data/cursor-agent").File("/data/cursor-agent", 0o644).File("/b/cursor-agent", 0o755)
			},
			env:      func(e *discovery.Env) { e.Path = "/a:/b" },
			cand:     pathCand,
			wantPath: "/b/cursor-agent",
			trailHas: []string{"skipped:not executable"},
		},
		{
			name:     "a dangling link is skipped",
			fs:       func(f *discoverytest.FS) { f.Symlink("/a/cursor-agent", "gone").File("/b/cursor-agent", 0o755) },
			env:      func(e *discovery.Env) { e.Path = "/a:/b" },
			cand:     pathCand,
			wantPath: "/b/cursor-agent",
			trailHas: []string{"skipped:symbolic link whose target cannot be opened"},
		},
		{
			name:     "a link loop is skipped",
			fs:       func(f *discoverytest.FS) { f.Symlink("/a/cursor-agent", "/a/x").Symlink("/a/x", "/a/cursor-agent") },
			env:      func(e *discovery.Env) { e.Path = "/a" },
			cand:     pathCand,
			wantErr:  failure.MissingCLI,
			errHas:   "cannot be opened",
			trailHas: []string{"skipped:symbolic link"},
		},
		{
			name:     "a directory is skipped",
			fs:       func(f *discoverytest.FS) { f.Dir("/a/cursor-agent").File("/b/cursor-agent", 0o755) },
			env:      func(e *discovery.Env) { e.Path = "/a:/b" },
			cand:     pathCand,
			wantPath: "/b/cursor-agent",
			trailHas: []string{"skipped:is a directory"},
		},
		{
			name: "empty and relative entries never search the current directory",
			fs: func(f *discoverytest.FS) {
				f.File("/repo/cursor-agent", 0o755).File("/repo/bin/cursor-agent", 0o755).File("/z/cursor-agent", 0o755)
			},
			env:      func(e *discovery.Env) { e.Path = ":.:bin::/z" },
			cand:     pathCand,
			wantPath: "/z/cursor-agent",
			trailHas: []string{"refused:relative PATH entry", "skipped:2 empty PATH entries"},
		},
		{
			name:     "a path is checked directly, without PATH",
			fs:       func(f *discoverytest.FS) { f.File("/opt/x/cursor-agent", 0o755).File("/a/cursor-agent", 0o755) },
			env:      func(e *discovery.Env) { e.Path = "/a" },
			cand:     override("/opt/x/cursor-agent"),
			wantPath: "/opt/x/cursor-agent",
		},
		{
			name:     "a Windows-looking name is just a POSIX file",
			fs:       func(f *discoverytest.FS) { f.File("/a/cursor-agent.cmd", 0o755) },
			env:      func(e *discovery.Env) { e.Path = "/a" },
			cand:     override("cursor-agent.cmd"),
			wantPath: "/a/cursor-agent.cmd",
		},
		{
			name:     "a backslash is not a separator on POSIX",
			fs:       func(f *discoverytest.FS) { f.File(`/a/odd\name`, 0o755) },
			env:      func(e *discovery.Env) { e.Path = "/a" },
			cand:     override(`odd\name`),
			wantPath: `/a/odd\name`,
		},
		{
			name:     "relative override resolves against the current directory, with a warning",
			fs:       func(f *discoverytest.FS) { f.File("/repo/bin/cursor-agent", 0o755) },
			env:      func(e *discovery.Env) {},
			cand:     override("./bin/../bin/cursor-agent"),
			wantPath: "/repo/bin/cursor-agent",
			warnHas:  "resolved against the current directory: /repo/bin/cursor-agent",
		},
		{
			name:    "relative override without a current directory is refused",
			fs:      func(f *discoverytest.FS) {},
			env:     func(e *discovery.Env) { e.Cwd = "" },
			cand:    override("bin/cursor-agent"),
			wantErr: failure.Input,
			errHas:  "relative path",
		},
		{
			name:    "a non-executable override is not launchable",
			fs:      func(f *discoverytest.FS) { f.File("/opt/x/cursor-agent", 0o644) },
			env:     func(e *discovery.Env) {},
			cand:    override("/opt/x/cursor-agent"),
			wantErr: failure.MissingCLI,
			errHas:  "not launchable: cursor-agent (not executable",
		},
		{
			name:     "a bare name is any program's: agent is searched like every other",
			fs:       func(f *discoverytest.FS) { f.File("/a/agent", 0o755) },
			env:      func(e *discovery.Env) { e.Path = "/a" },
			cand:     override("agent"),
			wantPath: "/a/agent",
		},
		{
			name:    "control characters are refused",
			fs:      func(f *discoverytest.FS) {},
			env:     func(e *discovery.Env) {},
			cand:    override("/opt/x/cursor\nagent"),
			wantErr: failure.Input,
			errHas:  "control character",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := discoverytest.NewPOSIX()
			tt.fs(fsys)
			env := posixEnv("")
			tt.env(&env)
			res, err := discovery.Resolve(context.Background(), tt.cand, env, fsys)
			require.NotEmpty(t, res.Trail)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, failure.KindOf(err), "%v", err)
				assert.Contains(t, err.Error(), tt.errHas)
				assert.Empty(t, res.Path)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.wantPath, res.Path)
				assert.Equal(t, discovery.POSIX, res.Kind)
				assert.Equal(t, tt.wantLinks, res.Links)
				assert.Equal(t, res.Path[strings.LastIndex(res.Path, "/")+1:], res.Name)
			}
			if tt.warnHas != "" {
				assert.Contains(t, strings.Join(res.Warnings, "\n"), tt.warnHas)
			}
			for _, want := range tt.trailHas {
				outcome, detail, _ := strings.Cut(want, ":")
				found := false
				for _, s := range stepsWith(res.Trail, outcome) {
					found = found || strings.Contains(s.Detail, detail)
				}
				assert.True(t, found, "trail lacks %s with %q: %+v", outcome, detail, res.Trail)
			}
		})
	}
}
