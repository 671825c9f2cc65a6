package settingsapi

import (
	"bytes"
	"context"
	"encoding/json/v2"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/probe"
)

// saverRole makes the test binary a child that saves settings in a loop
// into the file its one argument names (see runSaver); the kill-mid-save
// test starts it.
var saverRole = testkit.Role{Name: "saver", Run: func(args []string) int { return runSaver(args[0]) }}

func TestMain(m *testing.M) {
	testkit.RunIfChild(saverRole)
	os.Exit(m.Run())
}

// runSaver saves ever longer binary paths into the settings file at path
// through the Handler's file store, printing "ready" after the first
// save, until it is killed.
func runSaver(path string) int {
	store := fileStore{path: path}
	for i := 0; ; i++ {
		if err := store.setBinaryPath(saverPath(i)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if i == 0 {
			fmt.Println("ready")
		}
	}
}

// saverPath is the i-th path the saver writes; its length varies so a torn
// write would show.
func saverPath(i int) string {
	return fmt.Sprintf("/opt/cursor-%d/%s/cursor-agent", i, strings.Repeat("d", i%4096))
}

// realOptions returns the Options of a real Handler on the settings file at
// settingsPath, with pathDir as the whole PATH and the simulator's
// environment. The tests of real probes each have their own directory and
// Handler and mostly wait on the simulator, so they run in parallel (all
// but the one that changes the working directory, which t.Chdir forbids).
func realOptions(settingsPath, pathDir string, simEnv ...string) Options {
	environ := testkit.ChildEnv(testkit.Simulator, simEnv...)
	environ = append(environ, "PATH="+pathDir, cursor.EnvBinary+"=")
	return Options{
		SettingsPath: settingsPath,
		Token:        testToken,
		Probe: probe.Config{
			Environ:  environ,
			CacheDir: filepath.Join(filepath.Dir(settingsPath), "cache dir"),
		},
	}
}

func realHandler(t *testing.T, opts Options) string {
	t.Helper()
	h, err := New(opts)
	require.NoError(t, err)
	return testServer(t, h)
}

func putPath(t *testing.T, base, path string) response {
	t.Helper()
	body, err := json.Marshal(map[string]string{"binaryPath": path})
	require.NoError(t, err)
	return do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, bytes.NewReader(body))
}

func TestRealProbeSavesAGoodPathWithSpaces(t *testing.T) {
	t.Parallel()
	dir := testkit.TempDir(t)
	bin := testkit.Install(t, filepath.Join(dir, "Cursor Agent", "bin dir"), "cursor-agent", testkit.Simulator)
	settings := filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(settings, []byte(`{"theme":"dark","cursorCliBinaryPath":"/old/agent"}`), 0o600))
	base := realHandler(t, realOptions(settings, ""))

	r := putPath(t, base, "  "+bin+"  ")
	require.Equal(t, 200, r.status, "body %s", r.body)
	var report map[string]any
	require.NoError(t, json.Unmarshal(r.body, &report))
	assert.Equal(t, true, report["available"])
	assert.Equal(t, bin, report["binaryPath"])
	assert.Equal(t, true, report["usingConfiguredBinaryPath"])
	assert.Equal(t, agentsim.DefaultVersion, report["version"])
	assert.Equal(t, "in-range", report["tested"])

	r = do(t, "GET", base+"/v1/cursor-cli/settings", testToken, nil)
	require.Equal(t, 200, r.status)
	var got settingsBody
	require.NoError(t, json.Unmarshal(r.body, &got))
	require.NotNil(t, got.BinaryPath)
	assert.Equal(t, bin, *got.BinaryPath)
	raw, err := os.ReadFile(settings)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"theme": "dark"`, "other keys are kept")

	r = do(t, "GET", base+"/v1/cursor-cli/status", testToken, nil)
	require.Equal(t, 200, r.status, "body %s", r.body)
	var status map[string]any
	require.NoError(t, json.Unmarshal(r.body, &status))
	assert.Equal(t, bin, status["binaryPath"])
	assert.Equal(t, true, status["authenticated"])
	assert.Equal(t, "authenticated", status["authState"])

	r = do(t, "GET", base+"/v1/cursor-cli/models?refresh=true", testToken, nil)
	require.Equal(t, 200, r.status, "body %s", r.body)
	var models struct {
		Models []struct {
			ID string `json:"id"`
		} `json:"models"`
		Source string `json:"source"`
	}
	require.NoError(t, json.Unmarshal(r.body, &models))
	assert.NotEmpty(t, models.Models)
	assert.Equal(t, "cli", models.Source)
}

func TestRealStatusOfALoggedOutMachine(t *testing.T) {
	t.Parallel()
	dir := testkit.TempDir(t)
	bin := testkit.Install(t, filepath.Join(dir, "bin"), "cursor-agent", testkit.Simulator)
	settings := filepath.Join(dir, "settings.json")
	opts := realOptions(settings, "", agentsim.Scenario(agentsim.ScenarioUnauthenticated))
	require.NoError(t, fileStore{path: settings}.setBinaryPath(bin))
	base := realHandler(t, opts)
	r := do(t, "GET", base+"/v1/cursor-cli/status", testToken, nil)
	require.Equal(t, http.StatusBadGateway, r.status, "body %s", r.body)
	var body struct {
		Error  errorDetail    `json:"error"`
		Status map[string]any `json:"status"`
	}
	require.NoError(t, json.Unmarshal(r.body, &body))
	assert.Equal(t, failure.Auth, body.Error.Kind)
	assert.Equal(t, bin, body.Status["binaryPath"])
	assert.Equal(t, false, body.Status["authenticated"])
	assert.Equal(t, "unauthenticated", body.Status["authState"])
}

func TestRealProbeRefusesAFailingPathThatOnlyWorksThroughPATH(t *testing.T) {
	t.Parallel()
	dir := testkit.TempDir(t)
	pathDir := filepath.Join(dir, "on path")
	testkit.Install(t, pathDir, "cursor-agent", testkit.Simulator)
	broken := filepath.Join(dir, "broken dir", "cursor-agent")
	if runtime.GOOS == "windows" {
		broken += ".exe"
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(broken), 0o755))
	require.NoError(t, os.WriteFile(broken, []byte("not a program\n"), 0o755))
	settings := filepath.Join(dir, "settings.json")
	before := []byte("{\n  \"cursorCliBinaryPath\": \"/kept/agent\",\n  \"other\": [1, 2, 3]\n}\n")
	require.NoError(t, os.WriteFile(settings, before, 0o600))
	opts := realOptions(settings, pathDir)

	// The scenario is real: a fallback probe would succeed through PATH.
	cfg := opts.Probe
	cfg.Override = broken
	fallback, err := probe.Probe(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, fallback.Available)
	require.Equal(t, discovery.SourcePath, fallback.Binary.Resolution.Source)

	base := realHandler(t, opts)
	for _, p := range []string{broken, filepath.Join(dir, "no such dir", "cursor-agent")} {
		t.Run(filepath.Base(filepath.Dir(p)), func(t *testing.T) {
			r := putPath(t, base, p)
			require.Equal(t, 400, r.status, "body %s", r.body)
			e := r.errorBody(t)
			assert.True(t, strings.HasPrefix(e.Message, "Cannot save Cursor CLI binary path: "), e.Message)
			assert.Equal(t, failure.MissingCLI, e.Kind)
			assert.NotEmpty(t, e.Diagnostics)
			assert.NotContains(t, string(r.body), pathDir, "PATH is never dumped")
			after, err := os.ReadFile(settings)
			require.NoError(t, err)
			assert.Equal(t, before, after, "the settings file is untouched, byte for byte")
		})
	}
}

func TestRealProbeRefusesAnOldBuild(t *testing.T) {
	t.Parallel()
	dir := testkit.TempDir(t)
	bin := testkit.Install(t, filepath.Join(dir, "old"), "cursor-agent", testkit.Simulator)
	settings := filepath.Join(dir, "settings.json")
	base := realHandler(t, realOptions(settings, "", agentsim.EnvVersion+"=2026.08.11-e8db854"))
	r := putPath(t, base, bin)
	require.Equal(t, 400, r.status, "body %s", r.body)
	e := r.errorBody(t)
	assert.Equal(t, failure.Setup, e.Kind)
	assert.Contains(t, e.Message, "Cannot save Cursor CLI binary path: Cursor CLI build 2026.08.11 is older")
	_, err := os.Stat(settings)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestFiftyConcurrentSavesKeepTheFileWhole(t *testing.T) {
	dir := testkit.TempDir(t)
	settings := filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(settings, []byte(`{"keep":"me"}`), 0o600))
	h, err := newHandler(Options{Token: testToken}, fileStore{path: settings}, &fakeProber{})
	require.NoError(t, err)
	base := testServer(t, h)

	const n = 50
	paths := make(map[string]bool, n)
	for i := range n {
		paths[abs(fmt.Sprintf(`/Program Files/Cursor %02d/%s/cursor-agent.cmd`, i, strings.Repeat("x", i*40)))] = true
	}
	var wg sync.WaitGroup
	for p := range paths {
		wg.Go(func() {
			r := putPath(t, base, p)
			assert.Equal(t, 200, r.status, "body %s", r.body)
			// Read while the other saves go on: always a whole file. (A
			// tight read loop would instead starve the writer's replace on
			// Windows, where an open file delays MoveFileEx.)
			s, err := cursor.LoadSettings(settings)
			if assert.NoError(t, err) {
				assert.True(t, paths[s.BinaryPath], "a torn value %.80q", s.BinaryPath)
			}
		})
	}
	wg.Wait()
	final, err := cursor.LoadSettings(settings)
	require.NoError(t, err)
	assert.True(t, paths[final.BinaryPath], "the file ends as one of the saved paths, not %q", final.BinaryPath)
	raw, err := os.ReadFile(settings)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"keep": "me"`)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary files are left behind")
}

// TestCoalescedRealProbe checks that concurrent saves of one path share one
// real --version run: the simulator records each run.
func TestCoalescedRealProbe(t *testing.T) {
	t.Parallel()
	dir := testkit.TempDir(t)
	bin := testkit.Install(t, filepath.Join(dir, "bin"), "cursor-agent", testkit.Simulator)
	record := filepath.Join(dir, "record.jsonl")
	settings := filepath.Join(dir, "settings.json")
	w := testkit.NewWatch(t) // after dir: its cleanup kills before dir is removed
	// slow-version keeps the first probe in flight while the others join.
	opts := realOptions(settings, "", agentsim.EnvRecord+"="+record, agentsim.EnvPIDDir+"="+w.PIDDir(),
		agentsim.Scenario(agentsim.ScenarioSlowVersion), agentsim.EnvDelay+"=3s")
	opts.Probe.VersionTimeout = 30 * time.Second
	h, err := New(opts)
	require.NoError(t, err)
	const n = 6
	joined := make(chan string, n)
	h.probes.joined = func(key string) { joined <- key }
	base := testServer(t, h)

	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			r := putPath(t, base, bin)
			assert.Equal(t, 200, r.status, "body %s", r.body)
		})
	}
	deadline := time.After(30 * time.Second)
	for range n {
		select {
		case <-joined:
		case <-deadline:
			t.Fatal("the requests never joined the probe in flight")
		}
	}
	wg.Wait()
	data, err := os.ReadFile(record)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(data), "--version"), "one --version run for %d requests:\n%s", n, data)
	w.RequireGone(10 * time.Second)
}

// TestCancelledProbeContextStopsTheProbeTree is the shutdown path: the
// probe of a hung binary (with a grandchild) is stopped with its whole
// process tree when ProbeContext is cancelled, the request gets 503 and
// nothing is saved.
func TestCancelledProbeContextStopsTheProbeTree(t *testing.T) {
	t.Parallel()
	dir := testkit.TempDir(t)
	bin := testkit.Install(t, filepath.Join(dir, "hung"), "cursor-agent", testkit.Simulator)
	settings := filepath.Join(dir, "settings.json")
	w := testkit.NewWatch(t) // after dir: its cleanup kills before dir is removed
	opts := realOptions(settings, "", agentsim.EnvPIDDir+"="+w.PIDDir(),
		agentsim.Scenario(agentsim.ScenarioSlowVersion), agentsim.EnvDelay+"=2m")
	opts.Probe.VersionTimeout = 5 * time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.ProbeContext = ctx
	h, err := New(opts)
	require.NoError(t, err)
	base := testServer(t, h)

	result := make(chan response, 1)
	go func() { result <- putPath(t, base, bin) }()
	w.WaitRecorded("slow-version", 30*time.Second)
	cancel()
	r := <-result
	assert.Equal(t, 503, r.status, "body %s", r.body)
	assert.Equal(t, failure.Cancelled, r.errorBody(t).Kind)
	w.RequireGone(10 * time.Second)
	procs := w.Recorded()
	assert.GreaterOrEqual(t, len(procs), 2, "the probe had a grandchild to stop: %+v", procs)
	_, err = os.Stat(settings)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing is saved")
}

// TestRealProbeSavesOnlyAnAbsoluteCursorBinary: what is not exactly a
// Cursor binary is refused with the file untouched, byte for byte: a
// relative path and a bare name (both of which resolve to a working
// simulator), and a program whose --version is not a Cursor build.
func TestRealProbeSavesOnlyAnAbsoluteCursorBinary(t *testing.T) {
	dir := testkit.TempDir(t)
	pathDir := filepath.Join(dir, "on path")
	onPath := testkit.Install(t, pathDir, "cursor-agent", testkit.Simulator)
	// The server's directory is pathDir, so the relative path resolves.
	t.Chdir(pathDir)
	relative := filepath.Join("..", "on path", filepath.Base(onPath))
	settings := filepath.Join(dir, "settings.json")
	before := []byte("{\n  \"cursorCliBinaryPath\": \"/kept/agent\"\n}\n")
	require.NoError(t, os.WriteFile(settings, before, 0o600))

	tests := []struct {
		name, path string
		version    string // the simulator's --version output
		kind       failure.Kind
		message    string
	}{
		{name: "relative path", path: relative, kind: failure.Input, message: "the path must be absolute"},
		{name: "bare name on PATH", path: "cursor-agent", kind: failure.Input, message: "the path must be absolute"},
		{name: "not a Cursor build", path: onPath, version: "1.2.3", kind: failure.MissingCLI,
			message: `that program is not the Cursor CLI: its --version printed "1.2.3", not a Cursor build identifier`},
		{name: "prints nothing", path: onPath, version: " ", kind: failure.MissingCLI,
			message: "that program is not the Cursor CLI: its --version printed nothing, not a Cursor build identifier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var simEnv []string
			if tt.version != "" {
				simEnv = append(simEnv, agentsim.EnvVersion+"="+tt.version)
			}
			base := realHandler(t, realOptions(settings, pathDir, simEnv...))
			r := putPath(t, base, tt.path)
			require.Equal(t, 400, r.status, "body %s", r.body)
			e := r.errorBody(t)
			assert.Equal(t, tt.kind, e.Kind)
			assert.Contains(t, e.Message, "Cannot save Cursor CLI binary path: "+tt.message)
			after, err := os.ReadFile(settings)
			require.NoError(t, err)
			assert.Equal(t, before, after, "the settings file is untouched, byte for byte")
		})
	}
}

// TestProbesNeverSeeTheServeToken: the binaries the endpoint probes
// (--version, status, models) do not inherit CURSORKIT_TOKEN.
func TestProbesNeverSeeTheServeToken(t *testing.T) {
	t.Parallel()
	const secret = "serve-token-0123456789abcdef"
	dir := testkit.TempDir(t)
	bin := testkit.Install(t, filepath.Join(dir, "bin"), "cursor-agent", testkit.Simulator)
	record := filepath.Join(dir, "record.jsonl")
	opts := realOptions(filepath.Join(dir, "settings.json"), "", agentsim.EnvRecord+"="+record, "CURSORKIT_TOKEN="+secret)
	base := realHandler(t, opts)
	r := putPath(t, base, bin)
	require.Equal(t, 200, r.status, "body %s", r.body)
	r = do(t, "GET", base+"/v1/cursor-cli/status", testToken, nil)
	require.Equal(t, 200, r.status, "body %s", r.body)
	r = do(t, "GET", base+"/v1/cursor-cli/models?refresh=true", testToken, nil)
	require.Equal(t, 200, r.status, "body %s", r.body)

	records, err := agentsim.ReadRecords(record)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(records), 3, "--version, status and models ran")
	for _, rec := range records {
		require.NotEmpty(t, rec.Env)
		for _, kv := range rec.Env {
			assert.NotContains(t, kv, secret, "%v saw the token", rec.Args)
		}
	}
}
