//go:build !windows

package discovery_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestRealFSPOSIX resolves real files laid out like the Linux/macOS
// installer, and agrees with exec.LookPath.
func TestRealFSPOSIX(t *testing.T) {
	root := testkit.TempDir(t)
	const version = "2025.11.25-a1b2c3d"
	bin := filepath.Join(root, ".local", "bin")
	target := filepath.Join(root, ".local", "share", "cursor-agent", "versions", version, "cursor-agent")
	plain := filepath.Join(root, "plain")
	for _, d := range []string{bin, filepath.Dir(target), plain} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(target, []byte("#!/bin/sh\necho ok\n"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join("..", "share", "cursor-agent", "versions", version, "cursor-agent"), filepath.Join(bin, "cursor-agent")))
	require.NoError(t, os.WriteFile(filepath.Join(plain, "cursor-agent"), []byte("not executable"), 0o644))

	env := discovery.EnvFromOS()
	assert.Equal(t, runtime.GOOS, env.GOOS)
	env.Path = plain + ":" + bin
	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}, env, discovery.OSFS())
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(bin, "cursor-agent"), res.Path)
	assert.Equal(t, "cursor-agent", res.Name)
	assert.Equal(t, discovery.POSIX, res.Kind)
	assert.Equal(t, []string{filepath.Join(bin, "cursor-agent"), target}, res.Links)
	assert.NotEmpty(t, stepsWith(res.Trail, discovery.OutcomeSkipped), "the non-executable file is reported")

	t.Setenv("PATH", env.Path)
	lp, err := exec.LookPath("cursor-agent")
	require.NoError(t, err)
	assert.Equal(t, lp, res.Path, "same answer as exec.LookPath")

	// A relative configured path resolves against the real current directory.
	t.Chdir(root)
	env = discovery.EnvFromOS()
	assert.Equal(t, root, env.Cwd)
	res, err = discovery.Resolve(context.Background(), discovery.Candidate{Value: ".local/bin/cursor-agent", Source: discovery.SourceOverride}, env, discovery.OSFS())
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(bin, "cursor-agent"), res.Path)
	assert.Len(t, res.Warnings, 1)

	// The current directory is never searched for a bare name.
	t.Chdir(filepath.Dir(target))
	env = discovery.EnvFromOS()
	env.Path = plain
	_, err = discovery.Resolve(context.Background(), discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}, env, discovery.OSFS())
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
}

func TestWhereCheckIsWindowsOnly(t *testing.T) {
	w := discovery.WhereCheck(context.Background(), "cursor-agent", discovery.EnvFromOS())
	assert.Equal(t, discovery.WhereUnavailable, w.Status)
	assert.Equal(t, -1, w.ExitCode)
	assert.Empty(t, w.Disagreement(discovery.Resolution{Path: "/x/cursor-agent"}))
	for _, name := range []string{"/x/cursor-agent", "cursor*", "$PATH:x", ""} {
		assert.Equal(t, discovery.WhereSkipped, discovery.WhereCheck(context.Background(), name, discovery.EnvFromOS()).Status, name)
	}
}
