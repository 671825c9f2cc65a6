package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// versionRuns counts the recorded `--version` spawns and the turns.
func versionRuns(t *testing.T, record string) (versions, turns int) {
	t.Helper()
	records, err := agentsim.ReadRecords(record)
	if os.IsNotExist(err) {
		return 0, 0
	}
	require.NoError(t, err)
	for _, r := range records {
		switch {
		case len(r.Args) == 1 && r.Args[0] == "--version":
			versions++
		case len(r.Args) > 0 && r.Args[0] == "--print":
			turns++
		}
	}
	return versions, turns
}

// TestRunUsesTheVersionCacheAndNothingElseDoes: a second turn starts no
// --version process, while probe, status, models and doctor always run it.
func TestRunUsesTheVersionCacheAndNothingElseDoes(t *testing.T) {
	settings := cursorEnv(t, "", agentsim.ScenarioNormal)
	record := filepath.Join(testkit.TempDir(t), "record.ndjson")
	t.Setenv(agentsim.EnvRecord, record)
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	cli := func(args ...string) (int, string, string) {
		return runCLI(t, map[string]string{}, "", append([]string{"--settings", settings, "--binary", bin}, args...)...)
	}

	for i := range 3 {
		code, stdout, stderr := cli("run", "--json", "hi")
		require.Equal(t, 0, code, stderr)
		_, outcome := runEvents(t, stdout)
		assert.Equal(t, "done", outcome["status"])
		versions, turns := versionRuns(t, record)
		assert.Equal(t, 1, versions, "turn %d: only the first turn probed", i)
		assert.Equal(t, i+1, turns)
	}
	cacheDir, err := os.UserCacheDir()
	require.NoError(t, err)
	entries, err := os.ReadDir(filepath.Join(cacheDir, "cursorkit", "version"))
	require.NoError(t, err)
	assert.Len(t, entries, 1)

	for i, cmd := range []string{"probe", "status", "models", "doctor"} {
		code, stdout, stderr := cli(cmd, "--json")
		require.Equal(t, 0, code, "%s: %s", cmd, stderr)
		versions, _ := versionRuns(t, record)
		assert.Equal(t, 2+i, versions, "%s runs --version", cmd)
		if cmd == "probe" {
			cands := decodeObject(t, stdout)["candidates"].([]any)
			last := cands[len(cands)-1].(map[string]any)
			assert.NotContains(t, fmt.Sprint(last["detail"]), "from cache", "probe ran --version itself")
		}
	}
}

// TestRunOlderBuildFromTheCacheFailsAsSetup: the cached answer of an old
// build is judged like a fresh one; no turn starts.
func TestRunOlderBuildFromTheCacheFailsAsSetup(t *testing.T) {
	settings := cursorEnv(t, "", agentsim.ScenarioNormal)
	t.Setenv(agentsim.EnvVersion, "2026.08.11-e8db854")
	record := filepath.Join(testkit.TempDir(t), "record.ndjson")
	t.Setenv(agentsim.EnvRecord, record)
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	for range 2 {
		code, stdout, _ := runCLI(t, map[string]string{}, "", "--settings", settings, "--binary", bin, "run", "--json", "hi")
		assert.Equal(t, 4, code)
		obj := decodeObject(t, stdout)
		require.Contains(t, obj, "error")
		assert.Equal(t, "setup", obj["error"].(map[string]any)["kind"])
	}
	versions, turns := versionRuns(t, record)
	assert.Equal(t, 1, versions, "the second run took the old build from the cache")
	assert.Zero(t, turns)
}
