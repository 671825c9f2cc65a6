package main

import (
	"encoding/json/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// expect is what one command answers in a diagnosis case: its exit code,
// the kind of its JSON error ("" for none) and more checks on its object.
type expect struct {
	code  int
	kind  string
	check func(t *testing.T, obj map[string]any)
}

// outcomeOf is the error kind a `run --json` answered with: the error
// object's before the agent started, else the outcome line's ("" when
// done), and the outcome line (nil when the turn never started).
func outcomeOf(t *testing.T, stdout string) (kind string, outcome map[string]any) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	obj := decodeObject(t, lines[len(lines)-1])
	if e, ok := obj["error"].(map[string]any); ok {
		require.Len(t, lines, 1, "a failure before the turn is the error object alone")
		kind, _ := e["kind"].(string)
		return kind, nil
	}
	require.Equal(t, "outcome", obj["type"])
	kind, _ = obj["kind"].(string)
	return kind, obj
}

// noLogin checks that a network failure is never told to log in.
func noLogin(t *testing.T, text string) {
	t.Helper()
	lower := strings.ToLower(text)
	assert.NotContains(t, lower, "log in", "%q", text)
	assert.NotContains(t, lower, "login", "%q", text)
}

// asMap is v as a JSON object, empty when it is not one (so a check on
// the wrong shape fails instead of panicking).
func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}

// errorMessage is the message of a JSON error object.
func errorMessage(obj map[string]any) string {
	msg, _ := asMap(obj["error"])["message"].(string)
	return msg
}

// TestDiagnosisAcrossCommands: the keychain, a missing Cursor IDE and
// network failures, as the simulator plays them on --version, status,
// models and a turn, get the same kind and exit code from every command
// (docs/contract.md, "Agent messages"): a binary whose --version names
// them is available, never missing_cli, and the network is never a login
// problem.
func TestDiagnosisAcrossCommands(t *testing.T) {
	available := func(t *testing.T, obj map[string]any) {
		assert.Equal(t, true, obj["available"], "it exists and ran")
		outcomes := []any{}
		candidates, _ := obj["candidates"].([]any)
		for _, c := range candidates {
			outcomes = append(outcomes, asMap(c)["outcome"])
		}
		assert.Contains(t, outcomes, "blocked")
	}
	authState := func(state, reason string) func(t *testing.T, obj map[string]any) {
		return func(t *testing.T, obj map[string]any) {
			status := asMap(obj["status"])
			assert.Equal(t, true, status["available"])
			assert.Equal(t, false, status["authenticated"])
			assert.Equal(t, state, status["authState"])
			assert.Equal(t, reason, status["reason"])
			if reason == "network" {
				noLogin(t, errorMessage(obj))
			}
		}
	}
	doctor := func(state, fix string) func(t *testing.T, obj map[string]any) {
		return func(t *testing.T, obj map[string]any) {
			doc := asMap(obj["doctor"])
			assert.Equal(t, false, doc["ok"])
			assert.Equal(t, state, asMap(doc["status"])["authState"])
			problems, _ := doc["problems"].([]any)
			require.NotEmpty(t, problems)
			first := asMap(problems[0])
			fixText, _ := first["fix"].(string)
			assert.Contains(t, fixText, fix)
			if state == "unknown" {
				message, _ := first["message"].(string)
				noLogin(t, fixText)
				noLogin(t, message)
			}
			for i, p := range problems {
				for _, q := range problems[:i] {
					assert.NotEqual(t, asMap(q)["message"], asMap(p)["message"], "each problem once")
				}
			}
		}
	}
	tests := []struct {
		name     string
		scenario string
		network  string // CURSORKIT_SIM_NETWORK_ERROR
		onPath   string // install the simulator on PATH under this name instead of --binary
		probe    *expect
		status   *expect
		models   *expect
		doctor   *expect
		run      *expect // kind: the error object's or the outcome's
	}{
		{name: "keychain locked, printed by every command",
			scenario: agentsim.ScenarioVersionKeychainLocked + "," + agentsim.ScenarioKeychainLocked,
			probe:    &expect{5, "auth", available},
			status:   &expect{5, "auth", authState("keychain_locked", "keychain_locked")},
			models:   &expect{5, "auth", nil},
			doctor:   &expect{5, "auth", doctor("keychain_locked", "unlock-keychain")},
			run:      &expect{5, "auth", nil}},
		{name: "cursor without a Cursor IDE, printed by every command", onPath: "cursor",
			scenario: agentsim.ScenarioVersionIDEMissing + "," + agentsim.ScenarioIDEMissing,
			probe:    &expect{4, "setup", available},
			status:   &expect{4, "setup", authState("ide_missing", "ide_missing")},
			models:   &expect{4, "setup", nil},
			doctor:   &expect{4, "setup", doctor("ide_missing", "cursor-agent")},
			run:      &expect{4, "setup", nil}},
		{name: "keychain locked after --version answered", scenario: agentsim.ScenarioKeychainLocked,
			probe:  &expect{0, "", nil},
			status: &expect{5, "auth", authState("keychain_locked", "keychain_locked")},
			models: &expect{5, "auth", nil},
			doctor: &expect{5, "auth", doctor("keychain_locked", "unlock-keychain")},
			run:    &expect{5, "auth", nil}},
		{name: "DNS failure everywhere", scenario: agentsim.ScenarioNetworkError,
			probe:  &expect{0, "", nil},
			status: &expect{7, "network", authState("unknown", "network")},
			models: &expect{7, "network", func(t *testing.T, obj map[string]any) { noLogin(t, errorMessage(obj)) }},
			doctor: &expect{7, "network", doctor("unknown", "proxy")},
			run:    &expect{7, "network", nil}},
		{name: "connection refused", scenario: agentsim.ScenarioNetworkError, network: "connect ECONNREFUSED 127.0.0.1:443",
			status: &expect{7, "network", authState("unknown", "network")}, run: &expect{7, "network", nil}},
		{name: "connection reset", scenario: agentsim.ScenarioNetworkError, network: "read ECONNRESET",
			status: &expect{7, "network", authState("unknown", "network")}, run: &expect{7, "network", nil}},
		{name: "connection timed out", scenario: agentsim.ScenarioNetworkError, network: "connect ETIMEDOUT 104.18.2.3:443",
			status: &expect{7, "network", authState("unknown", "network")}, run: &expect{7, "network", nil}},
		{name: "TLS interception", scenario: agentsim.ScenarioNetworkError, network: "self-signed certificate in certificate chain",
			status: &expect{7, "network", authState("unknown", "network")}, run: &expect{7, "network", nil}},
		{name: "proxy", scenario: agentsim.ScenarioNetworkError, network: "407 Proxy Authentication Required",
			status: &expect{7, "network", authState("unknown", "network")}, run: &expect{7, "network", nil}},
		{name: "status prints getaddrinfo ENOTFOUND", scenario: agentsim.ScenarioStatusError,
			status: &expect{7, "network", authState("unknown", "network")}},
		{name: "status logged out while offline", scenario: agentsim.ScenarioStatusLoggedOutOffline,
			status: &expect{7, "network", authState("unknown", "network")}},
		{name: "a turn's network error on stderr only", scenario: agentsim.ScenarioNetworkErrorStderr,
			run: &expect{7, "network", nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pathDir := ""
			if tt.onPath != "" {
				pathDir = testkit.TempDir(t)
			}
			settings := cursorEnv(t, pathDir, tt.scenario)
			t.Setenv(agentsim.EnvNetworkError, tt.network)
			w := testkit.NewWatch(t)
			t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
			global := []string{"--settings", settings}
			if tt.onPath != "" {
				testkit.Install(t, pathDir, tt.onPath, testkit.Simulator)
			} else {
				global = append(global, "--binary", testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator))
			}
			for _, c := range []struct {
				args []string
				want *expect
				key  string // where the partial report sits beside the error
			}{
				{[]string{"probe", "--json"}, tt.probe, "probe"},
				{[]string{"status", "--json"}, tt.status, "status"},
				{[]string{"models", "--json", "--refresh"}, tt.models, "models"},
				{[]string{"doctor", "--json"}, tt.doctor, "doctor"},
			} {
				if c.want == nil {
					continue
				}
				code, stdout, stderr := runCLI(t, map[string]string{}, "", append(global, c.args...)...)
				assert.Equal(t, c.want.code, code, "%s: stderr %s", c.args[0], stderr)
				obj := decodeObject(t, stdout)
				if c.want.kind == "" {
					assert.NotContains(t, obj, "error", c.args[0])
				} else {
					require.Contains(t, obj, "error", c.args[0])
					assert.Equal(t, c.want.kind, asMap(obj["error"])["kind"], "%s: %s", c.args[0], stdout)
					if c.key == "probe" {
						obj = asMap(obj["probe"])
					}
				}
				if c.want.check != nil {
					c.want.check(t, obj)
				}
			}
			if tt.run != nil {
				args := append(global, "run", "--json", "--", "Summarise README.md")
				code, stdout, stderr := runCLI(t, map[string]string{}, "", args...)
				assert.Equal(t, tt.run.code, code, "run: stderr %s", stderr)
				kind, outcome := outcomeOf(t, stdout)
				assert.Equal(t, tt.run.kind, kind, "run: %s", stdout)
				if outcome != nil {
					assert.Equal(t, "error", outcome["status"])
				}
			}
			w.RequireGone(10 * time.Second)
		})
	}
}

// TestDiagnosisHumanOutput: without --json the same causes are named, with
// their fix, and the network is not a login problem.
func TestDiagnosisHumanOutput(t *testing.T) {
	t.Run("network", func(t *testing.T) {
		settings := cursorEnv(t, "", agentsim.ScenarioNetworkError)
		bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
		code, stdout, stderr := runCLI(t, map[string]string{}, "", "--settings", settings, "--binary", bin, "status")
		assert.Equal(t, 7, code)
		assert.Contains(t, stdout, "auth     unknown (network)")
		assert.Contains(t, stderr, "(network)")
		assert.Contains(t, stderr, "proxy")
		assert.Contains(t, stderr, "ENOTFOUND")
		noLogin(t, stderr)

		code, stdout, _ = runCLI(t, map[string]string{}, "", "--settings", settings, "--binary", bin, "doctor")
		assert.Equal(t, 7, code)
		assert.Contains(t, stdout, "[network]")
		_, fix, _ := strings.Cut(stdout, "fix: ")
		noLogin(t, fix)
	})
	t.Run("keychain printed by --version", func(t *testing.T) {
		settings := cursorEnv(t, "", agentsim.ScenarioVersionKeychainLocked)
		bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
		code, stdout, stderr := runCLI(t, map[string]string{}, "", "--settings", settings, "--binary", bin, "probe")
		assert.Equal(t, 5, code)
		assert.Contains(t, stdout, "Cursor CLI: available")
		assert.Contains(t, stdout, "blocked  the macOS login keychain is locked")
		assert.Contains(t, stderr, "unlock-keychain")
		assert.Contains(t, stderr, "(auth)")
	})
}

// TestServeDiagnosis: the settings endpoint answers the same causes with
// the same kinds: a path whose --version says the keychain is locked is
// not saved (400, auth), and status and models of a saved binary report
// the keychain and the network as such (502).
func TestServeDiagnosis(t *testing.T) {
	dir := testkit.TempDir(t)
	bin := testkit.Install(t, filepath.Join(dir, "Cursor Agent"), "cursor-agent", testkit.Simulator)
	token := strings.Repeat("t", 32)
	tokenFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token), 0o600))
	serve := func(t *testing.T, scenario string) (base, settings string) {
		settings = filepath.Join(testkit.TempDir(t), "settings.json")
		require.NoError(t, os.WriteFile(settings, mustJSON(t, map[string]string{"cursorCliBinaryPath": bin}), 0o600))
		s := startServe(t, nil, settings, simProbes(t, agentsim.Scenario(scenario)), time.Second, "--token-file", tokenFile)
		return s.base, settings
	}
	type answer struct {
		Error struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"error"`
		Status map[string]any `json:"status"`
	}
	decode := func(t *testing.T, body []byte) answer {
		var a answer
		require.NoError(t, json.Unmarshal(body, &a), "%s", body)
		return a
	}

	t.Run("a path whose --version says the keychain is locked is not saved", func(t *testing.T) {
		base, settings := serve(t, agentsim.ScenarioVersionKeychainLocked)
		before, err := os.ReadFile(settings)
		require.NoError(t, err)
		other := testkit.Install(t, filepath.Join(testkit.TempDir(t), "other"), "cursor-agent", testkit.Simulator)
		code, body := request(t, "PUT", base+"/v1/cursor-cli/settings", token, string(mustJSON(t, map[string]string{"binaryPath": other})))
		assert.Equal(t, 400, code, "%s", body)
		a := decode(t, body)
		assert.Equal(t, "auth", a.Error.Kind)
		assert.True(t, strings.HasPrefix(a.Error.Message, "Cannot save Cursor CLI binary path: the macOS login keychain is locked"), a.Error.Message)
		after, err := os.ReadFile(settings)
		require.NoError(t, err)
		assert.Equal(t, before, after, "the settings file is untouched")

		code, body = request(t, "GET", base+"/v1/cursor-cli/status", token, "")
		assert.Equal(t, 502, code, "%s", body)
		a = decode(t, body)
		assert.Equal(t, "auth", a.Error.Kind)
		assert.Equal(t, true, a.Status["available"])
		assert.Equal(t, "keychain_locked", a.Status["authState"])
	})
	t.Run("the network", func(t *testing.T) {
		base, _ := serve(t, agentsim.ScenarioNetworkError)
		code, body := request(t, "GET", base+"/v1/cursor-cli/status", token, "")
		assert.Equal(t, 502, code, "%s", body)
		a := decode(t, body)
		assert.Equal(t, "network", a.Error.Kind)
		noLogin(t, a.Error.Message)
		assert.Equal(t, "unknown", a.Status["authState"])
		assert.Equal(t, "network", a.Status["reason"])

		code, body = request(t, "GET", base+"/v1/cursor-cli/models?refresh=true", token, "")
		assert.Equal(t, 502, code, "%s", body)
		assert.Equal(t, "network", decode(t, body).Error.Kind)
	})
}
