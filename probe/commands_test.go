package probe

import (
	"context"
	"encoding/json/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

const agentPath = "/usr/local/bin/cursor-agent"

func probedConfig(t *testing.T, run *fakeRunner) (Config, Report) {
	t.Helper()
	env, fsys := posixMachine()
	run.on(agentPath, "--version", printed("2026.10.15-a1b2c3d\n"))
	cfg := Config{env: env, fs: fsys, runner: run, CacheDir: testkit.TempDir(t)}
	report, err := Probe(context.Background(), cfg)
	require.NoError(t, err)
	return cfg, report
}

func TestStatus(t *testing.T) {
	tests := []struct {
		name   string
		result runResult
		state  AuthState
		reason string
		kind   failure.Kind
	}{
		{"authenticated", printed(`{"isAuthenticated":true,"status":"ok"}`), AuthAuthenticated, reasonLoggedIn, ""},
		{"unauthenticated", printed(`{"isAuthenticated":false}`), AuthUnauthenticated, reasonNotLoggedIn, failure.Auth},
		{"keychain", runResult{exitCode: 1, stderr: "Error: Your macOS login keychain is locked."}, AuthKeychainLocked, reasonKeychainLocked, failure.Auth},
		{"IDE missing", runResult{exitCode: 1, stderr: "Error: No Cursor IDE installation found."}, AuthIDEMissing, reasonIDEMissing, failure.Setup},
		{"DNS failure", runResult{exitCode: 1, stderr: "Error: getaddrinfo ENOTFOUND api2.cursor.sh"}, AuthUnknown, reasonNetwork, failure.Network},
		{"proxy", runResult{exitCode: 1, stderr: "Error: tunneling socket could not be established, cause=connect ECONNREFUSED 10.1.1.1:3128"},
			AuthUnknown, reasonNetwork, failure.Network},
		{"logged out offline", runResult{stdout: []byte(`{"isAuthenticated":false}`), stderr: "Warning: connect ETIMEDOUT 104.18.2.3:443"},
			AuthUnknown, reasonNetwork, failure.Network},
		{"malformed", printed(`{"isAuth`), AuthUnauthenticated, reasonMalformedJSON, failure.Auth},
		{"timeout", runResult{timedOut: true, exitCode: -1}, AuthUnknown, reasonStatusTimeout, failure.Timeout},
		{"start failure", runResult{exitCode: -1, startErr: failure.New(failure.Process, "gone")}, AuthUnknown, reasonStatusStartFailed, failure.Process},
		{"killed by a signal after printing true", runResult{stdout: []byte(`{"isAuthenticated":true}`), exitCode: -1, signal: 9},
			AuthUnauthenticated, reasonNonZeroExit, failure.Auth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := newFakeRunner().on(agentPath, "status --format json", tt.result)
			cfg, report := probedConfig(t, run)
			a, err := Status(context.Background(), cfg, report)
			assert.Equal(t, tt.state, a.State)
			assert.Equal(t, tt.reason, a.Reason)
			assert.Equal(t, tt.kind, failure.KindOf(err))
			assert.Equal(t, []string{agentPath + " --version", agentPath + " status --format json"}, run.Calls(),
				"status runs on the binary that passed --version")
			assert.Equal(t, defaultStatusTimeout, run.timeouts[1])
		})
	}
}

// TestStatusRunsTheProbedBinary: status asks exactly the binary the probe
// chose, never a failed override, and says so when there is none.
func TestStatusRunsTheProbedBinary(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().
		on("/opt/custom/cursor-agent", "--version", runResult{exitCode: 1}).
		on(agentPath, "--version", printed("2026.10.15-a1b2c3d")).
		on(agentPath, "status --format json", printed(`{"isAuthenticated":true,"hasAccessToken":true,"userInfo":{"email":"a@b.c"}}`))
	cfg := Config{Override: "/opt/custom/cursor-agent", env: env, fs: fsys, runner: run}
	report, err := Probe(context.Background(), cfg)
	require.NoError(t, err)
	a, err := Status(context.Background(), cfg, report)
	require.NoError(t, err)
	assert.True(t, a.Authenticated)
	assert.Equal(t, agentPath, report.Binary.Resolution.Path)
	assert.NotContains(t, run.Calls(), "/opt/custom/cursor-agent status --format json", "never the failed override")

	data, err := json.Marshal(a)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(data, &fields))
	for _, name := range []string{"authenticated", "authState", "reason", "hasAccessToken", "userInfo"} {
		assert.Contains(t, fields, name)
	}
	assert.Equal(t, "authenticated", fields["authState"])

	cfg = Config{env: env, fs: fsys, runner: newFakeRunner()}
	report, err = Probe(context.Background(), cfg)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	a, err = Status(context.Background(), cfg, report)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	assert.Equal(t, AuthUnknown, a.State)
	assert.False(t, a.Authenticated)
}

func TestModelsCachesPerBinaryAndBuild(t *testing.T) {
	run := newFakeRunner().on(agentPath, "models", printed("Available models\n\nauto - Auto (default)\ngpt-5 - GPT-5 (current)\n\nTip: x\n"))
	clock := &fakeClock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	cfg, report := probedConfig(t, run)
	cfg.now = clock.Now

	mr, err := Models(context.Background(), cfg, report, false)
	require.NoError(t, err)
	assert.Equal(t, sourceCLI, mr.Source)
	assert.Equal(t, []Model{{ID: "auto", Label: "Auto", Default: true}, {ID: "gpt-5", Label: "GPT-5", Current: true}}, mr.Models)
	assert.Equal(t, defaultModelsTimeout, run.timeouts[1])

	mr, err = Models(context.Background(), cfg, report, false)
	require.NoError(t, err)
	assert.Equal(t, sourceCache, mr.Source)
	assert.Len(t, mr.Models, 2)
	assert.Len(t, run.Calls(), 2, "the second call is served from the cache")

	mr, err = Models(context.Background(), cfg, report, true)
	require.NoError(t, err)
	assert.Equal(t, sourceCLI, mr.Source, "refresh reads the CLI again")
	assert.Len(t, run.Calls(), 3)

	clock.Advance(catalogTTL)
	mr, err = Models(context.Background(), cfg, report, false)
	require.NoError(t, err)
	assert.Equal(t, sourceCLI, mr.Source, "an hour later the cache is stale")
	for _, call := range run.Calls() {
		assert.NotContains(t, call, "--list-models")
	}
}

func TestModelsShapesAndFailures(t *testing.T) {
	tests := []struct {
		name   string
		result runResult
		models int
		empty  bool
		kind   failure.Kind
	}{
		{"ANSI and CRLF", printed("\x1b[2K⠋ Loading models…\r\x1b[2KAvailable models\r\n\r\na - A\r\nb - B (current)\r\na - dup\r\n"), 2, false, ""},
		{"empty account", printed("No models available for this account.\n"), 0, true, ""},
		{"nothing printed", printed(""), 0, false, ""},
		{"garbage only", printed("something else entirely\n"), 0, false, failure.Protocol},
		{"keychain", runResult{exitCode: 1, stderr: "Error: Your macOS login keychain is locked."}, 0, false, failure.Auth},
		{"not logged in", runResult{exitCode: 1, stderr: "Authentication required"}, 0, false, failure.Auth},
		{"IDE missing", runResult{exitCode: 1, stderr: "Error: No Cursor IDE installation found."}, 0, false, failure.Setup},
		{"DNS failure", runResult{exitCode: 1, stderr: "Error: Failed to fetch models: getaddrinfo ENOTFOUND api2.cursor.sh"}, 0, false, failure.Network},
		{"TLS failure printed instead of the catalog", printed("Error: unable to get local issuer certificate\n"), 0, false, failure.Network},
		{"rate limited", runResult{exitCode: 1, stderr: "Error: 429 Too Many Requests"}, 0, false, failure.RateLimited},
		{"other error", runResult{exitCode: 1, stderr: "Error: Failed to fetch models: 503 Service Unavailable"}, 0, false, failure.Process},
		{"timeout", runResult{timedOut: true, exitCode: -1}, 0, false, failure.Timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := newFakeRunner().on(agentPath, "models", tt.result)
			cfg, report := probedConfig(t, run)
			mr, err := Models(context.Background(), cfg, report, false)
			assert.Equal(t, tt.kind, failure.KindOf(err))
			assert.Len(t, mr.Models, tt.models)
			assert.NotNil(t, mr.Models)
			assert.Equal(t, tt.empty, mr.Empty)
			printedCause := tt.kind != "" && tt.kind != failure.Protocol && tt.kind != failure.Process && tt.kind != failure.Timeout
			assert.Equal(t, printedCause, mr.Cause != cursor.CauseNone, "the cause the CLI printed instead of the catalog: %q", mr.Cause)
			if tt.kind != "" {
				cache, err := cfg.catalogCache()
				require.NoError(t, err)
				_, _, cached := cache.Load(report.Binary.Resolution.Path, report.Version)
				assert.False(t, cached, "a failure is never cached")
			}
		})
	}
}

func TestModelsWithoutBinary(t *testing.T) {
	env, fsys := posixMachine()
	cfg := Config{env: env, fs: fsys, runner: newFakeRunner(), CacheDir: testkit.TempDir(t)}
	report, _ := Probe(context.Background(), cfg)
	mr, err := Models(context.Background(), cfg, report, false)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	assert.NotNil(t, mr.Models)
}

func TestAuthErr(t *testing.T) {
	assert.NoError(t, Auth{State: AuthAuthenticated}.Err())
	err := Auth{State: AuthUnauthenticated, Reason: reasonNotLoggedIn, Detail: "x"}.Err()
	assert.Equal(t, failure.Auth, failure.KindOf(err))
	assert.Contains(t, err.Error(), "cursor-agent login")
	assert.Contains(t, Auth{State: AuthKeychainLocked}.Err().Error(), "unlock-keychain")

	// A network failure's error speaks of the network and proxies, never
	// of logging in.
	err = Auth{State: AuthUnknown, Reason: reasonNetwork, Detail: "Error: getaddrinfo ENOTFOUND api2.cursor.sh"}.Err()
	assert.Equal(t, failure.Network, failure.KindOf(err))
	assert.Contains(t, err.Error(), "proxy")
	assert.Contains(t, err.Error(), "ENOTFOUND")
	assert.NotContains(t, strings.ToLower(err.Error()), "log in")
	assert.NotContains(t, strings.ToLower(err.Error()), "login")
	for _, reason := range []string{reasonStatusTimeout, reasonStatusStartFailed} {
		assert.Equal(t, cursor.CauseNone, Auth{State: AuthUnknown, Reason: reason}.Cause())
	}
}
