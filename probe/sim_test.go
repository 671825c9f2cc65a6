package probe

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestMain(m *testing.M) {
	testkit.RunIfChild() // exits here when this binary runs as cursor-agent
	// No probe may leave a goroutine behind (a reader, a timer, a waiter).
	goleak.VerifyTestMain(m)
}

// simMachine is a machine whose PATH holds only a directory with a space in
// its name; the simulator can be installed there as cursor-agent or cursor.
// Each has its own directories, PATH and Watch, so the simulator tests,
// which mostly wait on their processes, run in parallel.
type simMachine struct {
	root   string
	bin    string         // the PATH directory
	w      *testkit.Watch // covers the simulator processes (their PIDDir)
	record string
	cfg    Config
}

// waitSurvivors bounds how long killed simulator processes may take to go.
const waitSurvivors = 10 * time.Second

// Bounds for the simulator tests: roomy for commands that should finish (a
// loaded machine under Wine can take seconds to start a process), short
// for the scenarios that hang on purpose.
const (
	roomyBound = 30 * time.Second
	shortBound = time.Second
)

func newSimMachine(t testing.TB, scenarios ...string) *simMachine {
	t.Helper()
	root := testkit.TempDir(t)
	w := testkit.NewWatch(t) // after root: its cleanup kills before root is removed
	m := &simMachine{root: root, bin: filepath.Join(root, "bin dir"), w: w,
		record: filepath.Join(root, "record.jsonl")}
	require.NoError(t, os.MkdirAll(m.bin, 0o755))
	env := discovery.EnvFromOS()
	env.Path = m.bin
	env.Cwd = root
	m.cfg = Config{
		env: &env,

		Environ: testkit.ChildEnv(testkit.Simulator, agentsim.Scenario(scenarios...), agentsim.EnvPIDDir+"="+w.PIDDir(),
			agentsim.EnvRecord+"="+m.record, agentsim.EnvHangLimit+"=2m"),
		CacheDir:       filepath.Join(root, "cache"),
		VersionTimeout: roomyBound,
		StatusTimeout:  roomyBound,
		ModelsTimeout:  roomyBound,
	}
	return m
}

// install puts the simulator on PATH under name.
func (m *simMachine) install(t testing.TB, name string) string {
	t.Helper()
	return testkit.Install(t, m.bin, name, testkit.Simulator)
}

// failing writes a script that prints an error and exits 3: a broken
// install that exists and runs.
func (m *simMachine) failing(t *testing.T, dir string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	if runtime.GOOS == "windows" {
		p := filepath.Join(dir, "broken-agent.cmd")
		require.NoError(t, os.WriteFile(p, []byte("@echo Error: broken install 1>&2\r\n@exit /b 3\r\n"), 0o755))
		return p
	}
	p := filepath.Join(dir, "broken-agent")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\necho 'Error: broken install' >&2\nexit 3\n"), 0o755))
	return p
}

// invocations counts the simulator runs whose argv starts with args.
func (m *simMachine) invocations(t *testing.T, args ...string) int {
	t.Helper()
	records, err := agentsim.ReadRecords(m.record)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	n := 0
	for _, r := range records {
		if len(r.Args) >= len(args) && strings.Join(r.Args[:len(args)], " ") == strings.Join(args, " ") {
			n++
		}
	}
	return n
}

func TestSimProbeStatusModels(t *testing.T) {
	t.Parallel()
	m := newSimMachine(t)
	agent := m.install(t, "cursor-agent")
	ctx := context.Background()

	report, err := Probe(ctx, m.cfg)
	require.NoError(t, err)
	assert.Equal(t, agent, report.Binary.Resolution.Path)
	assert.Equal(t, agentsim.DefaultVersion, report.Version)
	assert.Equal(t, cursor.TestedInRange, report.Tested)
	assert.Equal(t, discovery.SourcePath, report.Binary.Resolution.Source)

	a, err := Status(ctx, m.cfg, report)
	require.NoError(t, err)
	assert.Equal(t, AuthAuthenticated, a.State)
	assert.JSONEq(t, `{"email":"`+agentsim.DefaultEmail+`"}`, string(a.UserInfo))

	mr, err := Models(ctx, m.cfg, report, false)
	require.NoError(t, err)
	assert.Equal(t, sourceCLI, mr.Source)
	want := agentsim.Models()
	require.Len(t, mr.Models, len(want))
	for i, w := range want {
		assert.Equal(t, Model{ID: w.ID, Label: w.Label, Current: w.Current, Default: w.Default}, mr.Models[i])
	}
	mr, err = Models(ctx, m.cfg, report, false)
	require.NoError(t, err)
	assert.Equal(t, sourceCache, mr.Source)
	assert.Equal(t, 1, m.invocations(t, "models"), "the cache answered the second call")
	assert.Equal(t, 0, m.invocations(t, "--list-models"))

	got, err := resolve(mr.Models, "gpt-5.1-codex", "xhigh")
	require.NoError(t, err)
	assert.Equal(t, resolved{ID: "gpt-5.1-codex-extra-high", EffortApplied: true}, got)
	got, err = resolve(mr.Models, "gpt-5.1-codex-fast", "high")
	require.NoError(t, err)
	assert.Equal(t, resolved{ID: "gpt-5.1-codex-high-fast", EffortApplied: true}, got)
	got, err = resolve(mr.Models, "grok", "high")
	require.NoError(t, err)
	assert.Equal(t, resolved{ID: "grok"}, got)
	_, _, err = ResolveModel(mr.Models, "auto", "")
	assert.Equal(t, failure.Input, failure.KindOf(err))
}

func TestSimOverrideWithSpaces(t *testing.T) {
	t.Parallel()
	m := newSimMachine(t)
	m.install(t, "cursor-agent")
	dir := filepath.Join(m.root, "A User", "AppData", "Roaming", "npm")
	sim := testkit.Install(t, filepath.Join(m.root, "A User", "sim (x86)"), "cursor-agent", testkit.Simulator)
	override := sim
	if runtime.GOOS == "windows" {
		// The npm-style shim: a .cmd that runs the real program.
		require.NoError(t, os.MkdirAll(dir, 0o755))
		override = filepath.Join(dir, "cursor-agent.cmd")
		require.NoError(t, os.WriteFile(override, []byte("@\""+sim+"\" %*\r\n"), 0o755))
	}
	cfg := m.cfg
	cfg.Override = override
	report, err := Probe(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, override, report.Binary.Resolution.Path)
	assert.True(t, (report.Binary.Resolution.Source == discovery.SourceOverride))
	if runtime.GOOS == "windows" {
		assert.Equal(t, discovery.CmdShim, report.Binary.Resolution.Kind)
	}
	assert.Equal(t, cursor.TestedInRange, report.Tested)

	a, err := Status(context.Background(), cfg, report)
	require.NoError(t, err, "status runs through the same shim")
	assert.True(t, a.Authenticated)

	exact, err := ProbeExact(context.Background(), override, m.cfg)
	require.NoError(t, err)
	assert.Equal(t, override, exact.Binary.Resolution.Path)
}

func TestSimFailingOverrideWithWorkingPath(t *testing.T) {
	t.Parallel()
	m := newSimMachine(t)
	agent := m.install(t, "cursor-agent")
	broken := m.failing(t, filepath.Join(m.root, "broken dir"))
	cfg := m.cfg
	cfg.Override = broken

	report, err := Probe(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, agent, report.Binary.Resolution.Path)
	assert.False(t, (report.Binary.Resolution.Source == discovery.SourceOverride))
	require.Len(t, report.Candidates, 2)
	assert.Equal(t, outcomeExit, report.Candidates[0].Outcome)
	assert.Equal(t, "exit 3: Error: broken install", report.Candidates[0].Detail)
	require.NotEmpty(t, report.Diagnostics)
	assert.Contains(t, report.Diagnostics[0], "override ")
	assert.Contains(t, report.Diagnostics[0], "exit 3")

	// The settings endpoint's exact probe never accepts the PATH fallback.
	exact, err := ProbeExact(context.Background(), broken, m.cfg)
	require.Error(t, err)
	assert.False(t, exact.Available)
	assert.Len(t, exact.Candidates, 1)
}

func TestSimBothFailing(t *testing.T) {
	t.Parallel()
	m := newSimMachine(t)
	cfg := m.cfg
	cfg.Override = filepath.Join(m.root, "missing dir", "cursor-agent")
	report, err := Probe(context.Background(), cfg)
	require.Error(t, err)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	assert.False(t, report.Available)
	require.Len(t, report.Candidates, 3)
	for _, c := range report.Candidates {
		assert.Equal(t, outcomeNotFound, c.Outcome, c.Detail)
		assert.True(t, strings.HasPrefix(c.Detail, "ENOENT: "), c.Detail)
	}
	msg := err.Error()
	assert.True(t, strings.Index(msg, "override") < strings.Index(msg, "path cursor-agent"), msg)
	assert.NotContains(t, msg, m.bin, "never PATH")
}

func TestSimOverrideEqualToCursorAgentTriedOnce(t *testing.T) {
	t.Parallel()
	m := newSimMachine(t, agentsim.ScenarioVersionError)
	m.install(t, "cursor-agent")
	cfg := m.cfg
	cfg.Override = "cursor-agent"
	report, err := Probe(context.Background(), cfg)
	require.Error(t, err)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	require.Len(t, report.Candidates, 2, "cursor-agent once, then cursor")
	assert.Equal(t, discovery.SourceOverride, report.Candidates[0].Source)
	assert.Equal(t, outcomeExit, report.Candidates[0].Outcome)
	assert.Contains(t, report.Candidates[0].Detail, "Cannot find module")
	assert.Equal(t, outcomeNotFound, report.Candidates[1].Outcome)
	assert.Equal(t, 1, m.invocations(t, "--version"))
}

func TestSimSlowVersionKilledWithItsTree(t *testing.T) {
	t.Parallel()
	m := newSimMachine(t, agentsim.ScenarioSlowVersion)
	m.install(t, "cursor-agent")
	cfg := m.cfg
	// Long enough for the simulator to start its worker grandchild even on
	// a loaded machine, far shorter than its 30 s sleep.
	cfg.VersionTimeout = 5 * time.Second
	report, err := Probe(context.Background(), cfg)
	require.Error(t, err)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	require.NotEmpty(t, report.Candidates)
	assert.Equal(t, outcomeTimeout, report.Candidates[0].Outcome)
	assert.Contains(t, report.Candidates[0].Detail, "timeout: --version did not finish within 5s")
	procs := m.w.Recorded()
	roles := map[string]bool{}
	for _, p := range procs {
		roles[p.Role] = true
	}
	assert.True(t, roles["slow-version"], "the worker grandchild was started: %+v", procs)
	m.w.RequireGone(waitSurvivors)
}

func TestSimAuthStates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scenario string
		state    AuthState
		reason   string
	}{
		{"", AuthAuthenticated, reasonLoggedIn},
		{agentsim.ScenarioUnauthenticated, AuthUnauthenticated, reasonNotLoggedIn},
		{agentsim.ScenarioKeychainLocked, AuthKeychainLocked, reasonKeychainLocked},
		{agentsim.ScenarioIDEMissing, AuthIDEMissing, reasonIDEMissing},
		{agentsim.ScenarioStatusNoise, AuthAuthenticated, reasonLoggedIn},
		{agentsim.ScenarioStatusMalformed, AuthUnauthenticated, reasonMalformedJSON},
		{agentsim.ScenarioStatusEmpty, AuthUnauthenticated, reasonEmptyOutput},
		{agentsim.ScenarioStatusMissingField, AuthUnauthenticated, reasonMissingField},
		{agentsim.ScenarioStatusError, AuthUnknown, reasonNetwork},
		{agentsim.ScenarioNetworkError, AuthUnknown, reasonNetwork},
		{agentsim.ScenarioStatusLoggedOutOffline, AuthUnknown, reasonNetwork},
		{agentsim.ScenarioSlowStatus, AuthUnknown, reasonStatusTimeout},
	}
	for _, tt := range tests {
		t.Run("scenario "+tt.scenario, func(t *testing.T) {
			t.Parallel()
			m := newSimMachine(t, tt.scenario)
			m.install(t, "cursor-agent")
			cfg := m.cfg
			if tt.scenario == agentsim.ScenarioSlowStatus {
				cfg.StatusTimeout = shortBound
			}
			report, err := Probe(context.Background(), cfg)
			require.NoError(t, err)
			sr, err := Status(context.Background(), cfg, report)
			assert.Equal(t, tt.state, sr.State)
			assert.Equal(t, tt.reason, sr.Reason, sr.Detail)
			assert.Equal(t, tt.state == AuthAuthenticated, sr.Authenticated)
			assert.Equal(t, tt.state == AuthAuthenticated, err == nil, "err %v", err)
			m.w.RequireGone(waitSurvivors)
		})
	}
}

func TestSimModelsShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scenario string
		models   int
		empty    bool
		kind     failure.Kind
	}{
		{"", len(agentsim.Models()), false, ""},
		{agentsim.ScenarioModelsANSI, len(agentsim.Models()), false, ""},
		{agentsim.ScenarioModelsEmpty, 0, true, ""},
		{agentsim.ScenarioModelsError, 0, false, failure.Process},
		{agentsim.ScenarioNetworkError, 0, false, failure.Network},
		{agentsim.ScenarioKeychainLocked, 0, false, failure.Auth},
		{agentsim.ScenarioIDEMissing, 0, false, failure.Setup},
		{agentsim.ScenarioSlowModels, 0, false, failure.Timeout},
	}
	for _, tt := range tests {
		t.Run("scenario "+tt.scenario, func(t *testing.T) {
			t.Parallel()
			m := newSimMachine(t, tt.scenario)
			m.install(t, "cursor-agent")
			cfg := m.cfg
			if tt.scenario == agentsim.ScenarioSlowModels {
				cfg.ModelsTimeout = shortBound
			}
			report, err := Probe(context.Background(), cfg)
			require.NoError(t, err)
			mr, err := Models(context.Background(), cfg, report, true)
			assert.Equal(t, tt.kind, failure.KindOf(err), "err %v", err)
			assert.Len(t, mr.Models, tt.models)
			assert.Equal(t, tt.empty, mr.Empty)
			if tt.scenario == agentsim.ScenarioModelsANSI {
				want := agentsim.Models()
				for i := range mr.Models {
					assert.Equal(t, want[i].ID, mr.Models[i].ID)
					assert.Equal(t, want[i].Label, mr.Models[i].Label)
				}
			}
			m.w.RequireGone(waitSurvivors)
		})
	}
}

// TestSimBlockedVersion: a --version that prints the keychain or IDE
// message ran: the binary is available with that cause's failure, and
// status and models report it without running the binary again.
func TestSimBlockedVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scenario string
		name     string // the simulator's name on PATH
		kind     failure.Kind
		state    AuthState
	}{
		{agentsim.ScenarioVersionKeychainLocked, "cursor-agent", failure.Auth, AuthKeychainLocked},
		{agentsim.ScenarioVersionIDEMissing, "cursor", failure.Setup, AuthIDEMissing},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			t.Parallel()
			m := newSimMachine(t, tt.scenario)
			bin := m.install(t, tt.name)
			report, err := Probe(context.Background(), m.cfg)
			assert.Equal(t, tt.kind, failure.KindOf(err), "err %v", err)
			assert.True(t, report.Available, "it exists and ran")
			assert.Equal(t, bin, report.Binary.Resolution.Path)
			assert.Equal(t, tt.state, authFor(report.Blocked, "").State)
			outcomes := map[string]string{}
			for _, c := range report.Candidates {
				outcomes[c.Candidate] = c.Outcome
			}
			assert.Equal(t, outcomeBlocked, outcomes[tt.name], "%+v", report.Candidates)

			a, serr := Status(context.Background(), m.cfg, report)
			assert.Equal(t, tt.state, a.State)
			assert.Equal(t, tt.kind, failure.KindOf(serr))
			_, merr := Models(context.Background(), m.cfg, report, true)
			assert.Equal(t, tt.kind, failure.KindOf(merr))
			assert.Equal(t, 1, m.invocations(t, "--version"))
			assert.Equal(t, 0, m.invocations(t, "status"), "status is not asked again")
			assert.Equal(t, 0, m.invocations(t, "models"), "models is not asked again")
			m.w.RequireGone(waitSurvivors)
		})
	}
}

// TestSimBrokenWrapper: the override is a wrapper (an npm .cmd shim on
// Windows, a shell script elsewhere) whose program is gone, as after an
// uninstall; that is a not-found, and the working PATH candidate is used.
func TestSimBrokenWrapper(t *testing.T) {
	t.Parallel()
	m := newSimMachine(t)
	agent := m.install(t, "cursor-agent")
	dir := filepath.Join(m.root, "npm global")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	var wrapper string
	if runtime.GOOS == "windows" {
		wrapper = filepath.Join(dir, "cursor-agent.cmd")
		require.NoError(t, os.WriteFile(wrapper, []byte("@\""+filepath.Join(m.root, "gone", "node.exe")+"\" %*\r\n"), 0o755))
	} else {
		wrapper = filepath.Join(dir, "cursor-agent")
		require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec gone-node-binary \"$@\"\n"), 0o755))
	}
	cfg := m.cfg
	cfg.Override = wrapper
	report, err := Probe(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, agent, report.Binary.Resolution.Path)
	require.Len(t, report.Candidates, 2)
	assert.Equal(t, outcomeNotFound, report.Candidates[0].Outcome, report.Candidates[0].Detail)
	assert.True(t, strings.HasPrefix(report.Candidates[0].Detail, "ENOENT: "), report.Candidates[0].Detail)
}

// TestSimCancelStopsTheTree: cancelling the probe's context while
// --version runs ends the probe as cancelled and kills the whole tree.
func TestSimCancelStopsTheTree(t *testing.T) {
	t.Parallel()
	m := newSimMachine(t, agentsim.ScenarioSlowVersion)
	m.install(t, "cursor-agent")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		report Report
		err    error
	}
	done := make(chan result, 1)
	go func() {
		report, err := Probe(ctx, m.cfg)
		done <- result{report, err}
	}()
	m.w.WaitRecorded("slow-version", roomyBound)
	cancel()
	select {
	case r := <-done:
		assert.Equal(t, failure.Cancelled, failure.KindOf(r.err), "err %v", r.err)
		assert.False(t, r.report.Available)
	case <-time.After(roomyBound):
		t.Fatal("Probe did not return after cancel")
	}
	m.w.RequireGone(waitSurvivors)
}
