package probe

import (
	"context"
	"encoding/json/v2"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/discovery/discoverytest"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// fakeRunner answers each "<path> <args>" with a scripted result and
// records the calls it got.
type fakeRunner struct {
	mu       sync.Mutex
	results  map[string]runResult
	calls    []string
	timeouts []time.Duration
}

func newFakeRunner() *fakeRunner { return &fakeRunner{results: map[string]runResult{}} }

func (f *fakeRunner) on(path, args string, r runResult) *fakeRunner {
	f.results[path+" "+args] = r
	return f
}

func (f *fakeRunner) run(_ context.Context, res discovery.Resolution, args []string, timeout time.Duration) runResult {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := res.Path + " " + strings.Join(args, " ")
	f.calls = append(f.calls, key)
	f.timeouts = append(f.timeouts, timeout)
	if r, ok := f.results[key]; ok {
		return r
	}
	return runResult{exitCode: -1, startErr: failure.New(failure.Unclassified, "unscripted call %s", key)}
}

func (f *fakeRunner) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func printed(out string) runResult { return runResult{stdout: []byte(out)} }

// posixMachine has cursor-agent in /usr/local/bin and cursor in /usr/bin.
func posixMachine() (*discovery.Env, *discoverytest.FS) {
	fsys := discoverytest.NewPOSIX().
		File("/usr/local/bin/cursor-agent", 0o755).
		File("/usr/bin/cursor", 0o755).
		File("/opt/custom/cursor-agent", 0o755).
		File("/opt/custom/noexec", 0o644)
	return &discovery.Env{GOOS: "linux", Path: "/usr/local/bin:/usr/bin", Cwd: "/home/u"}, fsys
}

func TestProbeFirstCandidateWins(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().on("/usr/local/bin/cursor-agent", "--version", printed("2026.10.15-a1b2c3d\n"))
	report, err := Probe(context.Background(), Config{env: env, fs: fsys, runner: run})
	require.NoError(t, err)
	assert.True(t, report.Available)
	assert.Equal(t, "/usr/local/bin/cursor-agent", report.Binary.Resolution.Path)
	assert.Equal(t, "cursor-agent", report.Binary.Resolution.Name)
	assert.Equal(t, discovery.POSIX, report.Binary.Resolution.Kind)
	assert.Equal(t, discovery.SourcePath, report.Binary.Resolution.Source)
	assert.False(t, (report.Binary.Resolution.Source == discovery.SourceOverride))
	assert.Equal(t, "2026.10.15-a1b2c3d", report.Version)
	assert.Equal(t, cursor.TestedInRange, report.Tested)
	assert.Equal(t, "/usr/local/bin/cursor-agent", report.Binary.Resolution.Path)
	assert.False(t, report.Binary.Configured)
	assert.Equal(t, []CandidateResult{{Candidate: "cursor-agent", Source: discovery.SourcePath,
		Path: "/usr/local/bin/cursor-agent", Outcome: outcomeOK}}, report.Candidates)
	assert.Empty(t, report.Diagnostics)
	assert.Equal(t, []string{"/usr/local/bin/cursor-agent --version"}, run.Calls(), "the next candidate is never run")
	assert.Equal(t, []time.Duration{defaultVersionTimeout}, run.timeouts)
}

func TestProbeReportJSONFields(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().on("/usr/local/bin/cursor-agent", "--version", printed("2026.10.15-a1b2c3d\n"))
	report, err := Probe(context.Background(), Config{env: env, fs: fsys, runner: run})
	require.NoError(t, err)
	data, err := json.Marshal(report)
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(data, &fields))
	for _, name := range []string{"available", "binaryPath", "binaryName", "kind", "source", "usingConfiguredBinaryPath",
		"version", "tested", "candidates", "diagnostics"} {
		assert.Contains(t, fields, name)
	}
	assert.Equal(t, []any{}, fields["diagnostics"], "an empty list, not null")
	candidate := fields["candidates"].([]any)[0].(map[string]any)
	for _, name := range []string{"candidate", "outcome"} {
		assert.Contains(t, candidate, name)
	}
	assert.NotContains(t, fields, "Resolution")
}

func TestProbeFailingOverrideFallsBackToPath(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().
		on("/opt/custom/cursor-agent", "--version", runResult{exitCode: 2, stderr: "Error: boom\n  at x"}).
		on("/usr/local/bin/cursor-agent", "--version", printed("2026.10.15-a1b2c3d"))
	report, err := Probe(context.Background(), Config{Override: "/opt/custom/cursor-agent", env: env, fs: fsys, runner: run})
	require.NoError(t, err)
	assert.Equal(t, "/usr/local/bin/cursor-agent", report.Binary.Resolution.Path)
	assert.False(t, (report.Binary.Resolution.Source == discovery.SourceOverride))
	require.Len(t, report.Candidates, 2)
	assert.Equal(t, CandidateResult{Candidate: "/opt/custom/cursor-agent", Source: discovery.SourceOverride,
		Path: "/opt/custom/cursor-agent", Outcome: outcomeExit, Detail: "exit 2: Error: boom at x"}, report.Candidates[0])
	require.NotEmpty(t, report.Diagnostics)
	assert.Equal(t, "override /opt/custom/cursor-agent: exit 2: Error: boom at x", report.Diagnostics[0])
}

func TestProbeOverrideWins(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().on("/opt/custom/cursor-agent", "--version", printed("2026.11.02-ffffff0"))
	report, err := Probe(context.Background(), Config{Override: " /opt/custom/cursor-agent ", env: env, fs: fsys, runner: run})
	require.NoError(t, err, "a newer build runs")
	assert.True(t, (report.Binary.Resolution.Source == discovery.SourceOverride))
	assert.Equal(t, discovery.SourceOverride, report.Binary.Resolution.Source)
	assert.Equal(t, cursor.TestedNewer, report.Tested)
	assert.Contains(t, report.Diagnostics[len(report.Diagnostics)-1], "newer than the tested builds")
}

func TestProbeOverrideEqualToPathNameIsTriedOnce(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().
		on("/usr/local/bin/cursor-agent", "--version", runResult{timedOut: true, exitCode: -1}).
		on("/usr/bin/cursor", "--version", printed("2026.10.15-a1b2c3d"))
	report, err := Probe(context.Background(), Config{Override: "cursor-agent", env: env, fs: fsys, runner: run})
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/local/bin/cursor-agent --version", "/usr/bin/cursor --version"}, run.Calls())
	require.Len(t, report.Candidates, 2)
	assert.Equal(t, discovery.SourceOverride, report.Candidates[0].Source)
	assert.Equal(t, outcomeTimeout, report.Candidates[0].Outcome)
	assert.True(t, strings.HasPrefix(report.Candidates[0].Detail, "timeout: --version did not finish within 3s"), report.Candidates[0].Detail)
	assert.Equal(t, "/usr/bin/cursor", report.Binary.Resolution.Path)
}

func TestProbeAllFailing(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().
		on("/usr/local/bin/cursor-agent", "--version", runResult{exitCode: -1, signal: 9}).
		on("/usr/bin/cursor", "--version", runResult{exitCode: 1, stderr: "Error: Cannot find module '../build/agent-core.js'"})
	environ := []string{cursor.EnvBinary + "=/opt/custom/noexec"}
	report, err := Probe(context.Background(), Config{Override: "/nowhere/cursor-agent", Environ: environ, env: env, fs: fsys, runner: run})
	require.Error(t, err)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
	assert.False(t, report.Available)
	assert.Equal(t, cursor.TestedUnknown, report.Tested)
	outcomes := []string{}
	for _, c := range report.Candidates {
		outcomes = append(outcomes, string(c.Source)+" "+c.Outcome)
	}
	assert.Equal(t, []string{"override not-found", "env permission-denied", "path exit-nonzero", "path exit-nonzero"}, outcomes)
	assert.True(t, strings.HasPrefix(report.Candidates[0].Detail, "ENOENT: "), report.Candidates[0].Detail)
	assert.True(t, strings.HasPrefix(report.Candidates[1].Detail, "EACCES: "), report.Candidates[1].Detail)
	assert.Equal(t, "killed by signal 9", report.Candidates[2].Detail)
	assert.Equal(t, "exit 1: Error: Cannot find module '../build/agent-core.js'", report.Candidates[3].Detail)
	msg := err.Error()
	assert.True(t, strings.Index(msg, "override /nowhere/cursor-agent") < strings.Index(msg, "env /opt/custom/noexec"), msg)
	assert.Contains(t, msg, "; path cursor: exit 1")
	assert.NotContains(t, msg, "/usr/local/bin:/usr/bin", "never PATH")
	assert.Len(t, report.Diagnostics, 4)
}

// TestProbeBlockedVersion: a --version that prints a failure
// cursor.Diagnose knows instead of a version ran; the binary is available
// and the failure is its cause's, not missing_cli (docs/contract.md,
// "Probes").
func TestProbeBlockedVersion(t *testing.T) {
	const (
		keychain = "Error: Your macOS login keychain is locked.\nRun security unlock-keychain and try again."
		ide      = "Error: No Cursor IDE installation found. Use 'cursor agent' or 'agent' to run the agent."
		dns      = "Error: getaddrinfo ENOTFOUND api2.cursor.sh"
		agent    = "/usr/local/bin/cursor-agent"
		ideCLI   = "/usr/bin/cursor"
		custom   = "/opt/custom/cursor-agent"
	)
	version := printed("2026.10.15-a1b2c3d\n")
	tests := []struct {
		name     string
		override string
		results  map[string]runResult
		kind     failure.Kind // the probe's error; "" for none
		binary   string
		blocked  cursor.Cause
		outcomes []string
	}{
		{name: "keychain locked everywhere", results: map[string]runResult{
			agent: {exitCode: 1, stderr: keychain}, ideCLI: {exitCode: 1, stderr: keychain}},
			kind: failure.Auth, binary: agent, blocked: cursor.CauseKeychainLocked, outcomes: []string{"blocked", "blocked"}},
		{name: "keychain in other words, any case", results: map[string]runResult{
			agent: {exitCode: 1, stderr: "ERROR: THE LOGIN KEYCHAIN IS LOCKED"}, ideCLI: {exitCode: 1, stderr: "Error: boom"}},
			kind: failure.Auth, binary: agent, blocked: cursor.CauseKeychainLocked, outcomes: []string{"blocked", "exit-nonzero"}},
		{name: "keychain printed in place of the version, exit 0", results: map[string]runResult{
			agent: printed(keychain), ideCLI: {exitCode: 1, stderr: "Error: boom"}},
			kind: failure.Auth, binary: agent, blocked: cursor.CauseKeychainLocked, outcomes: []string{"blocked", "exit-nonzero"}},
		{name: "cursor without the IDE", results: map[string]runResult{
			agent: {timedOut: true, exitCode: -1}, ideCLI: {exitCode: 1, stderr: ide}},
			kind: failure.Setup, binary: ideCLI, blocked: cursor.CauseIDEMissing, outcomes: []string{"timeout", "blocked"}},
		{name: "the network", results: map[string]runResult{
			agent: {exitCode: 1, stderr: dns}, ideCLI: {exitCode: 1, stderr: dns}},
			kind: failure.Network, binary: agent, blocked: cursor.CauseNetwork, outcomes: []string{"blocked", "blocked"}},
		{name: "the first blocked candidate is effective", override: custom, results: map[string]runResult{
			custom: {exitCode: 1, stderr: ide}, agent: {exitCode: 1, stderr: keychain}, ideCLI: {exitCode: 1, stderr: "Error: boom"}},
			kind: failure.Setup, binary: custom, blocked: cursor.CauseIDEMissing, outcomes: []string{"blocked", "blocked", "exit-nonzero"}},
		{name: "a later candidate that works wins", override: custom, results: map[string]runResult{
			custom: {exitCode: 1, stderr: ide}, agent: version},
			binary: agent, outcomes: []string{"blocked", "ok"}},
		{name: "a version with a network warning beside it is fine", results: map[string]runResult{
			agent: {stdout: []byte("2026.10.15-a1b2c3d\n"), stderr: "update check failed: " + dns}},
			binary: agent, outcomes: []string{"ok"}},
		{name: "another failure is still missing_cli", results: map[string]runResult{
			agent: {exitCode: 1, stderr: "Error: Cannot find module 'x'"}, ideCLI: {exitCode: 1, stderr: "Error: boom"}},
			kind: failure.MissingCLI, outcomes: []string{"exit-nonzero", "exit-nonzero"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, fsys := posixMachine()
			run := newFakeRunner()
			for path, r := range tt.results {
				run.on(path, "--version", r)
			}
			report, err := Probe(context.Background(), Config{Override: tt.override, env: env, fs: fsys, runner: run})
			assert.Equal(t, tt.kind, failure.KindOf(err), "err %v", err)
			outcomes := []string{}
			for _, c := range report.Candidates {
				outcomes = append(outcomes, c.Outcome)
				if c.Outcome == outcomeBlocked {
					assert.Regexp(t, `^(keychain_locked|ide_missing|network): exit \d`, c.Detail, "the cause, then how it ended")
				}
			}
			assert.Equal(t, tt.outcomes, outcomes)
			assert.Equal(t, tt.binary != "", report.Available, "it exists and ran")
			assert.Equal(t, tt.binary, report.Binary.Resolution.Path)
			assert.Equal(t, tt.blocked, report.Blocked)
			if tt.blocked == cursor.CauseNone {
				return
			}
			assert.Empty(t, report.Version)
			assert.Equal(t, cursor.TestedUnknown, report.Tested)
			assert.NotEmpty(t, report.BlockedDetail)
			assert.Contains(t, err.Error(), tt.blocked.Fix())
			assert.Len(t, report.Diagnostics, len(report.Candidates), "each candidate's failure")

			// Status and models answer with the same cause without running
			// the binary again.
			before := len(run.Calls())
			a, serr := Status(context.Background(), Config{env: env, fs: fsys, runner: run}, report)
			assert.Equal(t, tt.blocked, a.Cause())
			assert.Equal(t, failure.KindOf(err), failure.KindOf(serr))
			assert.Equal(t, err.Error(), serr.Error(), "the same failure on --version as on status")
			assert.False(t, a.Authenticated)
			_, merr := Models(context.Background(), Config{env: env, fs: fsys, runner: run, CacheDir: testkit.TempDir(t)}, report, true)
			assert.Equal(t, err.Error(), merr.Error())
			assert.Len(t, run.Calls(), before, "neither status nor models ran")
		})
	}
}

func TestProbeStartFailures(t *testing.T) {
	env, fsys := posixMachine()
	tests := []struct {
		name    string
		result  runResult
		outcome string
		prefix  string
	}{
		{"ENOENT at start", runResult{exitCode: -1, startErr: failure.Wrap(failure.MissingCLI, errNotExist(), "program not found")}, outcomeNotFound, "ENOENT: "},
		{"EACCES at start", runResult{exitCode: -1, startErr: failure.Wrap(failure.Setup, errPermission(), "program cannot be executed")}, outcomePermission, "EACCES: "},
		{"plan refused", runResult{exitCode: -1, refused: failure.New(failure.Input, "argument 1 holds %%")}, outcomeRefused, "refused: "},
		{"other start failure", runResult{exitCode: -1, startErr: failure.New(failure.Resource, "no pipes")}, outcomeError, "start failed: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := newFakeRunner().on("/opt/custom/cursor-agent", "--version", tt.result)
			report, err := ProbeExact(context.Background(), "/opt/custom/cursor-agent", Config{env: env, fs: fsys, runner: run})
			require.Error(t, err)
			assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
			require.Len(t, report.Candidates, 1)
			assert.Equal(t, tt.outcome, report.Candidates[0].Outcome)
			assert.True(t, strings.HasPrefix(report.Candidates[0].Detail, tt.prefix), report.Candidates[0].Detail)
			assert.Equal(t, []string{"/opt/custom/cursor-agent --version"}, run.Calls(), "never a PATH candidate")
		})
	}
}

func TestProbeExact(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().on("/opt/custom/cursor-agent", "--version", printed("2026.10.15-a1b2c3d"))
	report, err := ProbeExact(context.Background(), "/opt/custom/cursor-agent", Config{env: env, fs: fsys, runner: run, Override: "/ignored"})
	require.NoError(t, err)
	assert.True(t, (report.Binary.Resolution.Source == discovery.SourceOverride))
	assert.Equal(t, "/opt/custom/cursor-agent", report.Binary.Resolution.Path)

	_, err = ProbeExact(context.Background(), "  ", Config{env: env, fs: fsys, runner: run})
	assert.Equal(t, failure.Input, failure.KindOf(err))

	run = newFakeRunner().on("/usr/local/bin/cursor-agent", "--version", printed("2026.10.15-a1b2c3d"))
	report, err = ProbeExact(context.Background(), "/nowhere/cursor-agent", Config{env: env, fs: fsys, runner: run})
	require.Error(t, err)
	assert.False(t, report.Available, "a working PATH candidate does not count")
	assert.Empty(t, run.Calls())
}

func TestProbeOlderBuildIsSetup(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().on("/usr/local/bin/cursor-agent", "--version", printed("2026.08.11-e8db854"))
	report, err := Probe(context.Background(), Config{env: env, fs: fsys, runner: run})
	require.Error(t, err)
	assert.Equal(t, failure.Setup, failure.KindOf(err))
	assert.True(t, report.Available)
	assert.Equal(t, cursor.TestedOlder, report.Tested)
	assert.Contains(t, err.Error(), "2026.08.11")

	run = newFakeRunner().on("/usr/local/bin/cursor-agent", "--version", printed("2026.08.11-e8db854"))
	iv := cursor.Interval{From: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)}
	report, err = Probe(context.Background(), Config{env: env, fs: fsys, runner: run, tested: iv})
	require.NoError(t, err)
	assert.Equal(t, cursor.TestedInRange, report.Tested)
}

func TestProbeUnknownVersionIsNotAnError(t *testing.T) {
	env, fsys := posixMachine()
	run := newFakeRunner().on("/usr/local/bin/cursor-agent", "--version", printed("weird-build\n"))
	report, err := Probe(context.Background(), Config{env: env, fs: fsys, runner: run, VersionTimeout: time.Second})
	require.NoError(t, err)
	assert.Equal(t, cursor.TestedUnknown, report.Tested)
	assert.Equal(t, "weird-build", report.Version)
	assert.Equal(t, []time.Duration{time.Second}, run.timeouts)
}

func TestProbeCancelled(t *testing.T) {
	env, fsys := posixMachine()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Probe(ctx, Config{env: env, fs: fsys, runner: newFakeRunner()})
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))

	run := newFakeRunner().on("/usr/local/bin/cursor-agent", "--version", runResult{cancelled: true, exitCode: -1})
	_, err = Probe(context.Background(), Config{env: env, fs: fsys, runner: run})
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
}

func TestProbeWindowsOverrideWithSpaces(t *testing.T) {
	const override = `C:\Users\A User\AppData\Roaming\npm\cursor-agent.cmd`
	fsys := discoverytest.NewWindows().File(override, 0o644).File(`C:\Tools\cursor-agent.exe`, 0o644)
	env := &discovery.Env{GOOS: "windows", Path: `C:\Tools`, Cwd: `C:\work`, SystemDir: `C:\Windows\System32`}
	run := newFakeRunner().on(override, "--version", printed("2026.10.15-a1b2c3d\r\n"))
	report, err := Probe(context.Background(), Config{Override: override, env: env, fs: fsys, runner: run})
	require.NoError(t, err)
	assert.Equal(t, override, report.Binary.Resolution.Path)
	assert.Equal(t, "cursor-agent.cmd", report.Binary.Resolution.Name)
	assert.Equal(t, discovery.CmdShim, report.Binary.Resolution.Kind)
	assert.True(t, (report.Binary.Resolution.Source == discovery.SourceOverride))
	assert.Equal(t, []string{override + " --version"}, run.Calls())
}

func errNotExist() error {
	return &fs.PathError{Op: "fork/exec", Path: "/opt/custom/cursor-agent", Err: fs.ErrNotExist}
}

func errPermission() error {
	return &fs.PathError{Op: "fork/exec", Path: "/opt/custom/cursor-agent", Err: fs.ErrPermission}
}

func TestClassifyWrapperExits(t *testing.T) {
	tests := []struct {
		name    string
		result  runResult
		outcome string
		detail  string
	}{
		{"cmd shim target gone", runResult{exitCode: 1, stderr: "'node' is not recognized as an internal or external command,\r\noperable program or batch file."},
			outcomeNotFound, "ENOENT: exit 1: the shim's target is missing: 'node' is not recognized as an internal or external command, operable program or batch file."},
		{"shell: not found", runResult{exitCode: 127, stderr: "/x/cursor-agent: 3: exec: node: not found"}, outcomeNotFound, "ENOENT: exit 127: /x/cursor-agent: 3: exec: node: not found"},
		{"shell: cannot execute", runResult{exitCode: 126, stderr: "Permission denied"}, outcomePermission, "EACCES: exit 126: Permission denied"},
		{"plain exit", runResult{exitCode: 4}, outcomeExit, "exit 4"},
		{"stdout only", runResult{exitCode: 4, stdout: []byte("oops\n")}, outcomeExit, "exit 4: oops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outcome, detail := classify(tt.result, "--version", time.Second)
			assert.Equal(t, tt.outcome, outcome)
			assert.Equal(t, tt.detail, detail)
		})
	}
}
