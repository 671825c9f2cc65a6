package main

import (
	"encoding/json/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpbridge"
)

// TestMain lets the test binary play the children of its own tests: the
// bridge program of a run --tools turn (the test binary is the bridge's
// embedder, so the simulator starts it), the exec tests' roles
// (execRoles), the tools' programs (toolRoles) and, built in, the
// cursor-agent simulator that testkit.Install puts where the CLI looks for
// cursor-agent.
func TestMain(m *testing.M) {
	mcpbridge.RunIfBridge()
	testkit.RunIfChild(append(append(execRoles(), cliRoles()...), toolRoles()...)...)
	if v := probeTimeoutForTests(); v != "" {
		// The same bound for the cursorkit processes tests start.
		_ = os.Setenv(envProbeTimeout, v)
	}
	os.Exit(m.Run())
}

// cursorEnv isolates a test from this machine: PATH holds only pathDir (or
// an empty directory), the caches and settings live in temp dirs, and the
// simulator plays scenario. It returns the settings file path.
func cursorEnv(t *testing.T, pathDir, scenario string) (settings string) {
	t.Helper()
	if pathDir == "" {
		pathDir = testkit.TempDir(t)
	}
	t.Setenv("PATH", pathDir)
	t.Setenv("CURSOR_AGENT_BIN", "")
	t.Setenv("XDG_CACHE_HOME", testkit.TempDir(t))
	if runtime.GOOS == "windows" {
		t.Setenv("LOCALAPPDATA", testkit.TempDir(t))
	}
	t.Setenv(agentsim.EnvScenario, scenario)
	return filepath.Join(testkit.TempDir(t), "settings.json")
}

func decodeObject(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &obj), "stdout must be exactly one JSON object: %q", stdout)
	return obj
}

func TestProbeStatusModelsAgainstTheSimulator(t *testing.T) {
	tests := []struct {
		name      string
		scenario  string
		args      []string
		code      int
		errorKind string
		check     func(t *testing.T, obj map[string]any)
	}{
		{name: "probe in range", args: []string{"probe", "--json"}, code: 0, check: func(t *testing.T, obj map[string]any) {
			for _, field := range []string{"available", "binaryPath", "binaryName", "kind", "source", "usingConfiguredBinaryPath", "version", "tested", "candidates", "diagnostics"} {
				assert.Contains(t, obj, field)
			}
			assert.Equal(t, true, obj["available"])
			assert.Equal(t, "in-range", obj["tested"])
			assert.Equal(t, "override", obj["source"])
			assert.Equal(t, true, obj["usingConfiguredBinaryPath"])
		}},
		{name: "status authenticated", args: []string{"status", "--json"}, code: 0, check: func(t *testing.T, obj map[string]any) {
			assert.Equal(t, true, obj["authenticated"])
			assert.Equal(t, "authenticated", obj["authState"])
			assert.Contains(t, obj, "reason")
			assert.Contains(t, obj, "binaryPath")
		}},
		{name: "status unauthenticated exits 5", scenario: agentsim.ScenarioUnauthenticated, args: []string{"status", "--json"}, code: 5, errorKind: "auth",
			check: func(t *testing.T, obj map[string]any) {
				status := obj["status"].(map[string]any)
				assert.Equal(t, "unauthenticated", status["authState"])
			}},
		{name: "keychain locked is its own state", scenario: agentsim.ScenarioKeychainLocked, args: []string{"status", "--json"}, code: 5, errorKind: "auth",
			check: func(t *testing.T, obj map[string]any) {
				assert.Equal(t, "keychain_locked", obj["status"].(map[string]any)["authState"])
			}},
		{name: "IDE missing is its own state", scenario: agentsim.ScenarioIDEMissing, args: []string{"status", "--json"}, code: 4, errorKind: "setup",
			check: func(t *testing.T, obj map[string]any) {
				assert.Equal(t, "ide_missing", obj["status"].(map[string]any)["authState"])
			}},
		{name: "models", args: []string{"models", "--json", "--refresh"}, code: 0, check: func(t *testing.T, obj map[string]any) {
			models := obj["models"].([]any)
			require.NotEmpty(t, models)
			first := models[0].(map[string]any)
			for _, field := range []string{"id", "label", "current", "default"} {
				assert.Contains(t, first, field)
			}
			assert.Equal(t, "cli", obj["source"])
		}},
		{name: "models of an empty account", scenario: agentsim.ScenarioModelsEmpty, args: []string{"models", "--json"}, code: 0, check: func(t *testing.T, obj map[string]any) {
			assert.Empty(t, obj["models"])
		}},
		{name: "old build fails as setup", scenario: "", args: []string{"probe", "--json"}, code: 4, errorKind: "setup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			settings := cursorEnv(t, "", tt.scenario)
			if tt.name == "old build fails as setup" {
				t.Setenv(agentsim.EnvVersion, "2026.08.11-e8db854")
			}
			bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
			args := append([]string{"--settings", settings, "--binary", bin}, tt.args...)
			code, stdout, stderr := runCLI(t, map[string]string{}, "", args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			obj := decodeObject(t, stdout)
			if tt.errorKind != "" {
				require.Contains(t, obj, "error")
				assert.Equal(t, tt.errorKind, obj["error"].(map[string]any)["kind"])
			} else {
				assert.NotContains(t, obj, "error")
			}
			if tt.check != nil {
				tt.check(t, obj)
			}
		})
	}
}

func TestMissingCLIExits3(t *testing.T) {
	settings := cursorEnv(t, "", "")
	for _, cmd := range []string{"probe", "status", "models", "doctor"} {
		t.Run(cmd, func(t *testing.T) {
			code, stdout, _ := runCLI(t, map[string]string{}, "", "--settings", settings, cmd, "--json")
			assert.Equal(t, 3, code)
			obj := decodeObject(t, stdout)
			assert.Equal(t, "missing_cli", obj["error"].(map[string]any)["kind"])
		})
	}
	t.Run("human doctor says what to do", func(t *testing.T) {
		code, stdout, _ := runCLI(t, map[string]string{}, "", "--settings", settings, "doctor")
		assert.Equal(t, 3, code)
		assert.Contains(t, stdout, "not usable")
		assert.Contains(t, stdout, "fix: install the Cursor CLI")
	})
}

func TestConfiguredBinaryFromSettingsAndFallback(t *testing.T) {
	pathDir := testkit.TempDir(t)
	onPath := testkit.Install(t, pathDir, "cursor-agent", testkit.Simulator)
	settings := cursorEnv(t, pathDir, "")

	t.Run("settings override is used", func(t *testing.T) {
		other := testkit.Install(t, filepath.Join(testkit.TempDir(t), "A User", "npm"), "cursor-agent", testkit.Simulator)
		require.NoError(t, os.WriteFile(settings, mustJSON(t, map[string]string{"cursorCliBinaryPath": other}), 0o600))
		code, stdout, stderr := runCLI(t, map[string]string{}, "", "--settings", settings, "probe", "--json")
		require.Equal(t, 0, code, stderr)
		obj := decodeObject(t, stdout)
		assert.Equal(t, other, obj["binaryPath"])
		assert.Equal(t, true, obj["usingConfiguredBinaryPath"])
	})

	t.Run("failing override falls back to PATH and doctor says so", func(t *testing.T) {
		missing := filepath.Join(testkit.TempDir(t), "gone", "cursor-agent")
		require.NoError(t, os.WriteFile(settings, mustJSON(t, map[string]string{"cursorCliBinaryPath": missing}), 0o600))
		code, stdout, stderr := runCLI(t, map[string]string{}, "", "--settings", settings, "probe", "--json")
		require.Equal(t, 0, code, stderr)
		obj := decodeObject(t, stdout)
		assert.Equal(t, onPath, obj["binaryPath"])
		assert.Equal(t, false, obj["usingConfiguredBinaryPath"])
		assert.NotEmpty(t, obj["diagnostics"])

		code, stdout, _ = runCLI(t, map[string]string{}, "", "--settings", settings, "doctor", "--json")
		assert.Equal(t, 4, code)
		doc := decodeObject(t, stdout)["doctor"].(map[string]any)
		problems := doc["problems"].([]any)
		require.Len(t, problems, 1)
		assert.Contains(t, problems[0].(map[string]any)["message"], "configured binary did not work")
	})

	t.Run("override equal to cursor-agent is the PATH candidate, tried once", func(t *testing.T) {
		require.NoError(t, os.WriteFile(settings, mustJSON(t, map[string]string{"cursorCliBinaryPath": "cursor-agent"}), 0o600))
		code, stdout, stderr := runCLI(t, map[string]string{}, "", "--settings", settings, "probe", "--json")
		require.Equal(t, 0, code, stderr)
		obj := decodeObject(t, stdout)
		assert.Equal(t, onPath, obj["binaryPath"])
		assert.Len(t, obj["candidates"], 1)
	})
}

func TestDoctorAllGood(t *testing.T) {
	settings := cursorEnv(t, "", "")
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	code, stdout, stderr := runCLI(t, map[string]string{}, "", "--settings", settings, "--binary", bin, "doctor", "--json")
	require.Equal(t, 0, code, stderr)
	obj := decodeObject(t, stdout)
	assert.Equal(t, true, obj["ok"])
	assert.Empty(t, obj["problems"])
	assert.Equal(t, "authenticated", obj["status"].(map[string]any)["authState"])
	assert.NotEmpty(t, obj["models"].(map[string]any)["models"])
	plan := obj["explain"].(map[string]any)["plan"].(map[string]any)
	assert.NotEmpty(t, plan["commandLine"])
}

func TestShimExplain(t *testing.T) {
	settings := cursorEnv(t, "", "")
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)

	code, stdout, stderr := runCLI(t, map[string]string{}, "", "--settings", settings, "shim", "explain", "--json", bin, "--", "--print", "model[x=1]")
	require.Equal(t, 0, code, stderr)
	obj := decodeObject(t, stdout)
	res := obj["resolution"].(map[string]any)
	for _, field := range []string{"path", "name", "kind", "source", "trail"} {
		assert.Contains(t, res, field)
	}
	assert.Equal(t, bin, res["path"])
	plan := obj["plan"].(map[string]any)
	for _, field := range []string{"program", "commandLine", "args", "kind"} {
		assert.Contains(t, plan, field)
	}
	assert.Equal(t, []any{"--print", "model[x=1]"}, plan["args"].([]any)[1:])
	assert.Contains(t, obj, "warnings")

	t.Run("without target explains the Cursor candidates", func(t *testing.T) {
		code, stdout, _ := runCLI(t, map[string]string{}, "", "--settings", settings, "--binary", bin, "shim", "explain", "--json")
		require.Equal(t, 0, code)
		assert.Equal(t, bin, decodeObject(t, stdout)["resolution"].(map[string]any)["path"])
	})
	t.Run("nothing found", func(t *testing.T) {
		code, stdout, _ := runCLI(t, map[string]string{}, "", "--settings", settings, "shim", "explain", "--json")
		assert.Equal(t, 3, code)
		assert.Equal(t, "missing_cli", decodeObject(t, stdout)["error"].(map[string]any)["kind"])
	})
	t.Run("human output names the plan", func(t *testing.T) {
		code, stdout, _ := runCLI(t, map[string]string{}, "", "--settings", settings, "shim", "explain", bin)
		require.Equal(t, 0, code)
		assert.Contains(t, stdout, "chosen: "+bin)
		assert.Contains(t, stdout, "command line")
	})
	t.Run("usage errors", func(t *testing.T) {
		code, _, _ := runCLI(t, map[string]string{}, "", "shim")
		assert.Equal(t, 2, code)
		code, _, _ = runCLI(t, map[string]string{}, "", "shim", "explain", "a", "b")
		assert.Equal(t, 2, code)
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestNothingOutlivesAProbe: a --version that leaves a daemon behind (a
// double fork into its own session, without the launch token) and exits 0
// leaves nothing running once probe, status, models or doctor returned.
func TestNothingOutlivesAProbe(t *testing.T) {
	for _, args := range [][]string{{"probe", "--json"}, {"status", "--json"}, {"models", "--json", "--refresh"}, {"doctor", "--json"}} {
		t.Run(args[0], func(t *testing.T) {
			settings := cursorEnv(t, "", agentsim.ScenarioVersionDaemon)
			bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
			w := testkit.NewWatch(t)
			t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
			code, _, stderr := runCLI(t, map[string]string{}, "", append([]string{"--settings", settings, "--binary", bin}, args...)...)
			assert.Equal(t, 0, code, "stderr: %s", stderr)
			w.WaitRecorded("version-daemon", execWait)
			w.RequireGone(execWait)
		})
	}
}

// TestProbeTimeoutFromTheEnvironment: CURSORKIT_PROBE_TIMEOUT bounds the
// --version probe; a bad value is input, named.
func TestProbeTimeoutFromTheEnvironment(t *testing.T) {
	settings := cursorEnv(t, "", agentsim.ScenarioSlowVersion)
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	w := testkit.NewWatch(t)
	t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
	t.Setenv(agentsim.EnvDelay, "60s")

	code, stdout, _ := runCLI(t, map[string]string{envProbeTimeout: "soon"}, "", "--settings", settings, "--binary", bin, "probe", "--json")
	assert.Equal(t, 2, code)
	assert.Contains(t, decodeObject(t, stdout)["error"].(map[string]any)["message"], envProbeTimeout)

	start := time.Now()
	code, stdout, _ = runCLI(t, map[string]string{envProbeTimeout: "1s"}, "", "--settings", settings, "--binary", bin, "probe", "--json")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stdout, "did not finish within 1s")
	assert.Less(t, time.Since(start), 30*time.Second, "the 60 s version was cut at the bound")
	w.RequireGone(execWait)
}
