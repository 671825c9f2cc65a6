//go:build windows

package discovery_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func writeFiles(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("@echo off\r\necho ok\r\n"), 0o644))
	}
}

// TestRealFSWindows resolves real files with the real machine's Env: the
// npm layout, PATHEXT order, the first-directory rule, a planted file in the
// current directory, and a configured path with spaces and trailing dots.
func TestRealFSWindows(t *testing.T) {
	root := testkit.TempDir(t)
	sh := filepath.Join(root, "first")                                // only npm's extensionless sh script
	npm := filepath.Join(root, "A User", "AppData", "Roaming", "npm") // sh, .cmd, .ps1
	later := filepath.Join(root, "later")                             // an .exe that must lose to npm's .cmd
	repo := filepath.Join(root, "repo")                               // a planted .cmd
	writeFiles(t,
		filepath.Join(sh, "cursor-agent"),
		filepath.Join(npm, "cursor-agent"), filepath.Join(npm, "cursor-agent.cmd"), filepath.Join(npm, "cursor-agent.ps1"),
		filepath.Join(later, "cursor-agent.exe"),
		filepath.Join(repo, "cursor-agent.cmd"),
	)
	t.Chdir(repo)
	env := discovery.EnvFromOS()
	assert.Equal(t, "windows", env.GOOS)
	assert.True(t, strings.EqualFold(repo, env.Cwd), "%s vs %s", repo, env.Cwd)
	require.NotEmpty(t, env.SystemDir)
	_, err := os.Stat(filepath.Join(env.SystemDir, "cmd.exe"))
	require.NoError(t, err, "SystemDir is the real system directory")
	env.Path = sh + ";;relative;" + npm + ";" + later
	env.PathExt = ".com;.EXE;.Bat;.CMD;.PS1"

	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}, env, discovery.OSFS())
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(npm, "cursor-agent.cmd"), res.Path)
	assert.Equal(t, discovery.CmdShim, res.Kind)
	assert.Equal(t, "cursor-agent.cmd", res.Name)
	assert.Contains(t, strings.Join(res.Warnings, "\n"), "current directory holds cursor-agent.cmd")
	var details []string
	for _, s := range res.Trail {
		details = append(details, s.Outcome+": "+s.Detail)
	}
	trail := strings.Join(details, "\n")
	assert.Contains(t, trail, "skipped: no extension")
	assert.Contains(t, trail, "refused: relative PATH entry")
	assert.Contains(t, trail, "ignored: current directory is never searched")

	// exec.LookPath agrees when the current directory is off the table.
	t.Setenv("PATH", env.Path)
	t.Setenv("PATHEXT", env.PathExt)
	t.Setenv("NoDefaultCurrentDirectoryInExePath", "1")
	lp, err := exec.LookPath("cursor-agent")
	require.NoError(t, err)
	assert.True(t, strings.EqualFold(lp, res.Path), "LookPath %s, ours %s", lp, res.Path)

	// A configured path with spaces and trailing dots and spaces is one
	// path, and a batch file.
	over := filepath.Join(npm, "cursor-agent.CMD. .")
	res, err = discovery.Resolve(context.Background(), discovery.Candidate{Value: over, Source: discovery.SourceOverride}, env, discovery.OSFS())
	require.NoError(t, err)
	assert.True(t, strings.EqualFold(filepath.Join(npm, "cursor-agent.cmd"), res.Path), res.Path)
	assert.Equal(t, discovery.CmdShim, res.Kind)

	// The .ps1 named explicitly is PowerShell.
	res, err = discovery.Resolve(context.Background(), discovery.Candidate{Value: filepath.Join(npm, "cursor-agent.ps1"), Source: discovery.SourceOverride}, env, discovery.OSFS())
	require.NoError(t, err)
	assert.Equal(t, discovery.PowerShell, res.Kind)

	// A relative configured path resolves against the real cwd, with a warning.
	res, err = discovery.Resolve(context.Background(), discovery.Candidate{Value: `.\cursor-agent.cmd`, Source: discovery.SourceOverride}, env, discovery.OSFS())
	require.NoError(t, err)
	assert.True(t, strings.EqualFold(filepath.Join(repo, "cursor-agent.cmd"), res.Path), res.Path)
	assert.Len(t, res.Warnings, 1)
}

// TestWhereCheckChangesNothing: where.exe is diagnostics only. Under Wine it
// prints nothing; on Windows it must agree with the resolution.
func TestWhereCheckChangesNothing(t *testing.T) {
	root := testkit.TempDir(t)
	dir := filepath.Join(root, "bin dir")
	writeFiles(t, filepath.Join(dir, "cursor-agent.cmd"))
	env := discovery.EnvFromOS()
	env.Path = dir
	env.Cwd = root
	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}, env, discovery.OSFS())
	require.NoError(t, err)

	w := discovery.WhereCheck(context.Background(), "cursor-agent", env)
	if testkit.UnderWine() {
		assert.Contains(t, []string{discovery.WhereSilent, discovery.WhereUnavailable}, w.Status, "%+v", w)
	}
	assert.Empty(t, w.Disagreement(res), "%+v", w)

	again, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}, env, discovery.OSFS())
	require.NoError(t, err)
	assert.Equal(t, res.Path, again.Path)
}

func TestWhereCheckFindsOnWindows(t *testing.T) {
	testkit.SkipIfWine(t, "where.exe prints nothing")
	root := testkit.TempDir(t)
	first := filepath.Join(root, "first")
	second := filepath.Join(root, "second")
	writeFiles(t, filepath.Join(first, "cursor-agent"), filepath.Join(first, "cursor-agent.cmd"), filepath.Join(second, "cursor-agent.exe"))
	env := discovery.EnvFromOS()
	env.Path = first + ";" + second
	env.Cwd = root
	w := discovery.WhereCheck(context.Background(), "cursor-agent", env)
	assert.Equal(t, discovery.WhereFound, w.Status, "%+v", w)
	require.NotEmpty(t, w.Paths)
	assert.True(t, strings.EqualFold(first, filepath.Dir(w.Paths[0])), "%+v", w)
	assert.Equal(t, 0, w.ExitCode)

	w = discovery.WhereCheck(context.Background(), "cursor-agent-nowhere", env)
	assert.Equal(t, discovery.WhereNotFound, w.Status, "%+v", w)
	assert.Equal(t, 1, w.ExitCode)
}

func TestWhereCheckUnavailableOrSkipped(t *testing.T) {
	env := discovery.EnvFromOS()
	env.SystemDir = testkit.TempDir(t) // no where.exe there
	w := discovery.WhereCheck(context.Background(), "cursor-agent", env)
	assert.Equal(t, discovery.WhereUnavailable, w.Status)
	assert.Empty(t, w.Disagreement(discovery.Resolution{Path: `C:\x\cursor-agent.exe`}))

	env = discovery.EnvFromOS()
	for _, name := range []string{`C:\x\cursor-agent.exe`, "cursor*", "$PATH:cursor-agent", `a"b`, ""} {
		w = discovery.WhereCheck(context.Background(), name, env)
		assert.Equal(t, discovery.WhereSkipped, w.Status, name)
	}
}
