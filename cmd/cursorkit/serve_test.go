package main

import (
	"bytes"
	"context"
	"encoding/json/v2"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/probe"
)

// lineWriter is a concurrency-safe stderr that also hands each complete
// line to a channel, so a test can wait for "listening on".
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	part  []byte
	lines chan string
}

func newLineWriter() *lineWriter { return &lineWriter{lines: make(chan string, 64)} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		select {
		case w.lines <- string(w.part[:i]):
		default:
		}
		w.part = w.part[i+1:]
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitLine returns the first line containing substr, failing after 20 s.
func (w *lineWriter) waitLine(t *testing.T, substr string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case line := <-w.lines:
			if strings.Contains(line, substr) {
				return line
			}
		case <-deadline:
			t.Fatalf("no stderr line with %q; stderr so far:\n%s", substr, w.String())
		}
	}
}

// simProbes is the probe configuration of a serve under test: the
// simulator's environment (scenario and its variables) for the probed
// commands, PATH empty, caches in a temp dir.
func simProbes(t *testing.T, simEnv ...string) probe.Config {
	return probe.Config{
		Environ:  append(testkit.ChildEnv(testkit.Simulator, simEnv...), "PATH=", "CURSOR_AGENT_BIN="),
		CacheDir: testkit.TempDir(t),
	}
}

// served is a running `cursorkit serve`.
type served struct {
	base   string
	stderr *lineWriter
	cancel context.CancelFunc
	done   chan struct{} // closed when serve returned exitCode
	exit   int
}

// stop sends the shutdown signal and returns the exit code.
func (s *served) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	return s.wait(t)
}

// wait returns the exit code once serve has returned.
func (s *served) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-s.done:
		return s.exit
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not shut down")
		return -1
	}
}

var listenLine = regexp.MustCompile(`listening on (http://\S+)`)

// startServe runs a.serve in-process on a free loopback port.
func startServe(t *testing.T, env map[string]string, settingsPath string, probes probe.Config, grace time.Duration, args ...string) *served {
	t.Helper()
	stderr := newLineWriter()
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: stderr,
		getenv: func(k string) string { return env[k] }, settingsPath: settingsPath}
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{stderr: stderr, cancel: cancel, done: make(chan struct{})}
	cfg := serveConfig{probe: probes, grace: grace}
	go func() {
		defer close(s.done)
		s.exit = a.serve(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), cfg)
	}()
	m := listenLine.FindStringSubmatch(stderr.waitLine(t, "listening on"))
	require.Len(t, m, 2)
	s.base = m[1]
	t.Cleanup(func() { s.stop(t) })
	return s
}

func request(t *testing.T, method, url, token, body string) (int, []byte) {
	t.Helper()
	code, data, err := tryRequest(method, url, token, body)
	require.NoError(t, err)
	return code, data
}

// tryRequest is request for a goroutine other than the test's, where
// require cannot stop the test: it returns the error instead.
func tryRequest(method, url, token, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

func TestServeRefusesBadSetup(t *testing.T) {
	dir := testkit.TempDir(t)
	settings := filepath.Join(dir, "settings.json")
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		code       int
		wantStderr string
	}{
		{"non-loopback addr", nil, []string{"--addr", "0.0.0.0:0"}, failure.ExitInput, "loopback only unless --allow-remote"},
		{"all interfaces", nil, []string{"--addr", ":7878"}, failure.ExitInput, "loopback only"},
		{"remote without token file", nil, []string{"--addr", "0.0.0.0:0", "--allow-remote"}, failure.ExitInput, "--allow-remote requires --token-file"},
		{"remote with env token only", map[string]string{"CURSORKIT_TOKEN": strings.Repeat("t", 32)}, []string{"--addr", "0.0.0.0:0", "--allow-remote"}, failure.ExitInput, "--allow-remote requires --token-file"},
		{"bad addr", nil, []string{"--addr", "nonsense"}, failure.ExitInput, "is not HOST:PORT"},
		{"argument", nil, []string{"extra"}, failure.ExitInput, "serve takes no arguments"},
		{"unknown flag", nil, []string{"--nope"}, failure.ExitInput, "unknown flag: --nope"},
		{"short env token", map[string]string{"CURSORKIT_TOKEN": "short-secret"}, []string{"--addr", "127.0.0.1:0"}, failure.ExitSetup, "CURSORKIT_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			a := &app{stdout: &out, stderr: &errOut, getenv: func(k string) string { return tt.env[k] }, settingsPath: settings}
			code := a.serve(context.Background(), tt.args, serveConfig{probe: simProbes(t), grace: time.Second})
			assert.Equal(t, tt.code, code)
			assert.Contains(t, errOut.String(), tt.wantStderr)
			assert.NotContains(t, errOut.String(), "short-secret")
			assert.Empty(t, out.String())
		})
	}
	_, err := os.Stat(settings)
	assert.ErrorIs(t, err, os.ErrNotExist, "a refused serve writes nothing")
}

func TestServeHelp(t *testing.T) {
	code, stdout, _ := runCLI(t, nil, "", "serve", "--help")
	assert.Equal(t, failure.ExitOK, code)
	assert.Contains(t, stdout, "usage: cursorkit serve")
	assert.Contains(t, stdout, "--allow-remote")
}

func TestServeDefaultTokenFileAndRoutes(t *testing.T) {
	dir := testkit.TempDir(t)
	settings := filepath.Join(dir, "config dir", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(settings), 0o700))
	require.NoError(t, os.WriteFile(settings, []byte(`{"theme":"dark","cursorCliBinaryPath":"/old/agent"}`), 0o600))
	s := startServe(t, nil, settings, simProbes(t), time.Second)

	tokenFile := filepath.Join(filepath.Dir(settings), "serve-token")
	data, err := os.ReadFile(tokenFile)
	require.NoError(t, err, "the token file is created beside the settings file")
	token := strings.TrimSpace(string(data))
	assert.Contains(t, s.stderr.String(), tokenFile)
	assert.NotContains(t, s.stderr.String(), token, "the token is never printed")

	code, _ := request(t, "GET", s.base+"/healthz", "", "")
	assert.Equal(t, 200, code)
	code, _ = request(t, "GET", s.base+"/v1/cursor-cli/settings", "", "")
	assert.Equal(t, 401, code)
	code, _ = request(t, "GET", s.base+"/v1/cursor-cli/settings", "wrong-token-wrong-token", "")
	assert.Equal(t, 401, code)
	code, body := request(t, "GET", s.base+"/v1/cursor-cli/settings", token, "")
	assert.Equal(t, 200, code)
	assert.JSONEq(t, `{"binaryPath":"/old/agent"}`, string(body))

	p := testkit.Install(t, filepath.Join(dir, "Cursor Agent"), "cursor-agent", testkit.Simulator)
	reqBody, _ := json.Marshal(map[string]string{"binaryPath": " " + p + " "})
	code, body = request(t, "PUT", s.base+"/v1/cursor-cli/settings", token, string(reqBody))
	require.Equal(t, 200, code, "body %s", body)
	saved, err := cursor.LoadSettings(settings)
	require.NoError(t, err)
	assert.Equal(t, p, saved.BinaryPath)
	raw, err := os.ReadFile(settings)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"theme": "dark"`, "other keys are kept")

	code, body = request(t, "GET", s.base+"/v1/cursor-cli/status", token, "")
	assert.Equal(t, 200, code, "body %s", body)
	code, body = request(t, "GET", s.base+"/v1/cursor-cli/models", token, "")
	assert.Equal(t, 200, code, "body %s", body)

	code, _ = request(t, "PUT", s.base+"/v1/cursor-cli/settings", token, `{"binaryPath":null}`)
	require.Equal(t, 200, code)
	saved, err = cursor.LoadSettings(settings)
	require.NoError(t, err)
	assert.Empty(t, saved.BinaryPath)

	assert.Equal(t, failure.ExitOK, s.stop(t))
	assert.NotContains(t, s.stderr.String(), token)
}

func TestServeTokenSources(t *testing.T) {
	dir := testkit.TempDir(t)
	settings := filepath.Join(dir, "settings.json")
	envToken := strings.Repeat("e", 40)

	t.Run("CURSORKIT_TOKEN", func(t *testing.T) {
		s := startServe(t, map[string]string{"CURSORKIT_TOKEN": envToken}, settings, simProbes(t), time.Second)
		code, _ := request(t, "GET", s.base+"/v1/cursor-cli/settings", envToken, "")
		assert.Equal(t, 200, code)
		assert.Contains(t, s.stderr.String(), "from CURSORKIT_TOKEN")
		assert.NotContains(t, s.stderr.String(), envToken)
		_, err := os.Stat(filepath.Join(dir, "serve-token"))
		assert.ErrorIs(t, err, os.ErrNotExist, "no token file is created when the environment has one")
		assert.Equal(t, failure.ExitOK, s.stop(t))
	})
	t.Run("--token-file wins over CURSORKIT_TOKEN", func(t *testing.T) {
		tf := filepath.Join(dir, "my token")
		fileToken := strings.Repeat("f", 40)
		require.NoError(t, os.WriteFile(tf, []byte(fileToken+"\n"), 0o600))
		s := startServe(t, map[string]string{"CURSORKIT_TOKEN": envToken}, settings, simProbes(t), time.Second, "--token-file", tf)
		code, _ := request(t, "GET", s.base+"/v1/cursor-cli/settings", fileToken, "")
		assert.Equal(t, 200, code)
		code, _ = request(t, "GET", s.base+"/v1/cursor-cli/settings", envToken, "")
		assert.Equal(t, 401, code)
		assert.Equal(t, failure.ExitOK, s.stop(t))
	})
	t.Run("--allow-remote with a token file", func(t *testing.T) {
		tf := filepath.Join(dir, "remote token")
		s := startServe(t, nil, settings, simProbes(t), time.Second, "--allow-remote", "--token-file", tf)
		data, err := os.ReadFile(tf)
		require.NoError(t, err)
		code, _ := request(t, "GET", s.base+"/v1/cursor-cli/settings", strings.TrimSpace(string(data)), "")
		assert.Equal(t, 200, code)
		assert.Equal(t, failure.ExitOK, s.stop(t))
	})
}

func TestServeShutdown(t *testing.T) {
	token := strings.Repeat("s", 32)
	env := map[string]string{"CURSORKIT_TOKEN": token}

	// A slow --version keeps the probe in flight; the simulator records
	// its start, so the test knows when to shut down.
	putSlow := func(t *testing.T, delay string, grace time.Duration) (s *served, settings, bin string, result chan int) {
		dir := testkit.TempDir(t)
		settings = filepath.Join(dir, "settings.json")
		bin = testkit.Install(t, filepath.Join(dir, "slow"), "cursor-agent", testkit.Simulator)
		w := testkit.NewWatch(t)
		probes := simProbes(t, agentsim.Scenario(agentsim.ScenarioSlowVersion), agentsim.EnvDelay+"="+delay, agentsim.EnvPIDDir+"="+w.PIDDir())
		probes.VersionTimeout = 5 * time.Minute
		s = startServe(t, env, settings, probes, grace)
		body, _ := json.Marshal(map[string]string{"binaryPath": bin})
		result = make(chan int, 1)
		go func() {
			code, _, err := tryRequest("PUT", s.base+"/v1/cursor-cli/settings", token, string(body))
			if err != nil {
				t.Errorf("PUT: %v", err)
			}
			result <- code
		}()
		w.WaitRecorded("slow-version", 30*time.Second)
		t.Cleanup(func() { w.RequireGone(10 * time.Second) })
		return s, settings, bin, result
	}
	t.Run("an in-flight probe finishes within the grace", func(t *testing.T) {
		s, settings, bin, result := putSlow(t, "1s", 30*time.Second)
		s.cancel()
		s.stderr.waitLine(t, "shutting down")
		assert.Equal(t, 200, <-result)
		assert.Equal(t, failure.ExitOK, s.wait(t))
		saved, err := cursor.LoadSettings(settings)
		require.NoError(t, err)
		assert.Equal(t, bin, saved.BinaryPath)
	})
	t.Run("a probe still running after the grace is stopped", func(t *testing.T) {
		// The grace also bounds the wait for the handler once its probe is
		// stopped: 50 ms was too short for a tree kill under Wine (exit 10,
		// 1 run in 10), 2 s is still far below the probe's 2 minutes.
		s, settings, _, result := putSlow(t, "2m", 2*time.Second)
		assert.Equal(t, failure.ExitOK, s.stop(t))
		assert.Equal(t, http.StatusServiceUnavailable, <-result)
		_, err := os.Stat(settings)
		assert.ErrorIs(t, err, os.ErrNotExist, "a stopped probe saves nothing")
	})
}
