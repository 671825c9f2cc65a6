package settingsapi

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/probe"
)

const testToken = "test-token-0123456789abcdef"

// abs makes a POSIX-style absolute path absolute on this OS too ("C:" in
// front on Windows), for the paths a fake prober answers for.
func abs(p string) string {
	if runtime.GOOS == "windows" {
		return "C:" + p
	}
	return p
}

// memStore is a Store in memory that fails the test if two saves overlap.
type memStore struct {
	mu     sync.Mutex
	path   string
	saves  atomic.Int64
	active atomic.Int32
	t      *testing.T
	err    error
}

func (s *memStore) binaryPath() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path, s.err
}

func (s *memStore) setBinaryPath(path string) error {
	if n := s.active.Add(1); n != 1 {
		s.t.Errorf("%d saves ran at once; they must be serialized", n)
	}
	defer s.active.Add(-1)
	s.saves.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.path = path
	return nil
}

// fakeProber answers from a table; a path listed in block waits for the
// channel (or the probe context) before answering.
type fakeProber struct {
	verdicts map[string]verdict
	errs     map[string]error
	block    map[string]chan struct{}
	calls    sync.Map // path -> *atomic.Int64
	statusV  any
	statErr  error
	partial  any
	modelsF  func(refresh bool) (any, error)
}

func (p *fakeProber) count(path string) int64 {
	v, _ := p.calls.LoadOrStore(path, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func (p *fakeProber) probeExact(ctx context.Context, path string) (verdict, error) {
	v, _ := p.calls.LoadOrStore(path, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	if ch, ok := p.block[path]; ok {
		select {
		case <-ch:
		case <-ctx.Done():
			return verdict{}, failure.Wrap(failure.Cancelled, ctx.Err(), "probe stopped")
		}
	}
	if err := p.errs[path]; err != nil {
		return p.verdicts[path], err
	}
	if verdict, ok := p.verdicts[path]; ok {
		return verdict, nil
	}
	return verdict{ok: true, exact: true, cursorBuild: true, report: map[string]any{"available": true, "binaryPath": path}}, nil
}

func (p *fakeProber) status(context.Context) (any, error) {
	if p.statErr != nil {
		return p.partial, p.statErr
	}
	return p.statusV, nil
}

func (p *fakeProber) models(_ context.Context, refresh bool) (any, error) {
	if p.modelsF == nil {
		return map[string]any{"models": []any{}, "source": "fake"}, nil
	}
	return p.modelsF(refresh)
}

// testServer serves h on a real loopback port with NewServer's settings.
func testServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := NewServer(h)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		require.ErrorIs(t, <-done, http.ErrServerClosed)
	})
	return "http://" + ln.Addr().String()
}

func newTestHandler(t *testing.T, store *memStore, prober *fakeProber) *Handler {
	t.Helper()
	store.t = t
	h, err := newHandler(Options{Token: testToken}, store, prober)
	require.NoError(t, err)
	return h
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) errorBody(t *testing.T) errorDetail {
	t.Helper()
	var e struct {
		Error *errorDetail `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &e), "body %s", r.body)
	require.NotNil(t, e.Error, "body %s", r.body)
	require.NotNil(t, e.Error.Diagnostics, "diagnostics must be an array, never null")
	return *e.Error
}

func do(t *testing.T, method, url, token string, body io.Reader) response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

func TestNewRequiresOptions(t *testing.T) {
	for name, opts := range map[string]Options{
		"no settings file": {Token: testToken},
		"no token":         {SettingsPath: "settings.json"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(opts)
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
		})
	}
}

func TestRoutesAndStatusCodes(t *testing.T) {
	store := &memStore{path: `/opt/cursor/cursor-agent`}
	prober := &fakeProber{
		statusV: map[string]any{"available": true, "authenticated": true, "authState": "authenticated"},
		modelsF: func(refresh bool) (any, error) {
			return map[string]any{"models": []any{map[string]any{"id": "gpt-5"}}, "source": map[bool]string{true: "refreshed", false: "cache"}[refresh]}, nil
		},
	}
	base := testServer(t, newTestHandler(t, store, prober))

	tests := []struct {
		name, method, path, token, body string
		want                            int
		wantKind                        failure.Kind
		wantAllow                       string
		wantBody                        string
	}{
		{name: "healthz without token", method: "GET", path: "/healthz", want: 200, wantBody: `{"status":"ok"}`},
		{name: "healthz with wrong token", method: "GET", path: "/healthz", token: "nope", want: 200},
		{name: "healthz POST", method: "POST", path: "/healthz", want: 405, wantKind: failure.Input, wantAllow: "GET, HEAD"},
		{name: "settings", method: "GET", path: "/v1/cursor-cli/settings", token: testToken, want: 200, wantBody: `{"binaryPath":"/opt/cursor/cursor-agent"}`},
		{name: "settings without token", method: "GET", path: "/v1/cursor-cli/settings", want: 401, wantKind: failure.Auth},
		{name: "settings wrong token", method: "GET", path: "/v1/cursor-cli/settings", token: testToken + "x", want: 401, wantKind: failure.Auth},
		{name: "settings token prefix", method: "GET", path: "/v1/cursor-cli/settings", token: testToken[:10], want: 401, wantKind: failure.Auth},
		{name: "settings DELETE", method: "DELETE", path: "/v1/cursor-cli/settings", token: testToken, want: 405, wantKind: failure.Input, wantAllow: "GET, HEAD, PUT"},
		{name: "settings HEAD", method: "HEAD", path: "/v1/cursor-cli/settings", token: testToken, want: 200},
		{name: "settings HEAD without token", method: "HEAD", path: "/v1/cursor-cli/settings", want: 401},
		{name: "settings POST without token", method: "POST", path: "/v1/cursor-cli/settings", want: 401, wantKind: failure.Auth},
		{name: "status", method: "GET", path: "/v1/cursor-cli/status", token: testToken, want: 200, wantBody: `{"authState":"authenticated","authenticated":true,"available":true}`},
		{name: "status query", method: "GET", path: "/v1/cursor-cli/status?x=1", token: testToken, want: 400, wantKind: failure.Input},
		{name: "status PUT", method: "PUT", path: "/v1/cursor-cli/status", token: testToken, want: 405, wantKind: failure.Input, wantAllow: "GET, HEAD"},
		{name: "status HEAD", method: "HEAD", path: "/v1/cursor-cli/status", token: testToken, want: 200},
		{name: "status without token", method: "GET", path: "/v1/cursor-cli/status", want: 401, wantKind: failure.Auth},
		{name: "models", method: "GET", path: "/v1/cursor-cli/models", token: testToken, want: 200, wantBody: `{"models":[{"id":"gpt-5"}],"source":"cache"}`},
		{name: "models refresh", method: "GET", path: "/v1/cursor-cli/models?refresh=true", token: testToken, want: 200, wantBody: `{"models":[{"id":"gpt-5"}],"source":"refreshed"}`},
		{name: "models bad query", method: "GET", path: "/v1/cursor-cli/models?refresh=maybe", token: testToken, want: 400, wantKind: failure.Input},
		{name: "models POST", method: "POST", path: "/v1/cursor-cli/models", token: testToken, want: 405, wantKind: failure.Input, wantAllow: "GET, HEAD"},
		{name: "models HEAD", method: "HEAD", path: "/v1/cursor-cli/models?refresh=true", token: testToken, want: 200},
		{name: "models without token", method: "GET", path: "/v1/cursor-cli/models", want: 401, wantKind: failure.Auth},
		{name: "unknown route", method: "GET", path: "/v1/nope", token: testToken, want: 404, wantKind: failure.Input},
		{name: "unknown route without token", method: "GET", path: "/v1/nope", want: 401, wantKind: failure.Auth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			r := do(t, tt.method, base+tt.path, tt.token, body)
			assert.Equal(t, tt.want, r.status, "body %s", r.body)
			assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
			if tt.wantKind != "" {
				assert.Equal(t, tt.wantKind, r.errorBody(t).Kind)
				assert.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
			}
			if tt.want == 401 {
				assert.Equal(t, `Bearer realm="cursorkit"`, r.header.Get("WWW-Authenticate"))
				assert.NotContains(t, string(r.body), testToken)
			}
			assert.Equal(t, tt.wantAllow, r.header.Get("Allow"))
			if tt.wantBody != "" {
				assert.JSONEq(t, tt.wantBody, string(r.body))
			}
		})
	}
}

func TestAuthorizationHeaderForms(t *testing.T) {
	base := testServer(t, newTestHandler(t, &memStore{}, &fakeProber{}))
	tests := []struct {
		header string
		want   int
	}{
		{"Bearer " + testToken, 200},
		{"bearer " + testToken, 200},
		{"Bearer  " + testToken + " ", 200},
		{"Basic " + testToken, 401},
		{testToken, 401},
		{"Bearer", 401},
		{"Bearer ", 401},
		{"", 401},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.header), func(t *testing.T) {
			req, err := http.NewRequest("GET", base+"/v1/cursor-cli/settings", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", tt.header)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, tt.want, resp.StatusCode)
		})
	}
}

func TestSaveAndReadBack(t *testing.T) {
	paths := []string{abs("/opt/cursor/bin/cursor-agent"), abs("/home/a user/my tools/cursor-agent")}
	if runtime.GOOS == "windows" {
		paths = append(paths, `C:\Program Files\Cursor Agent\cursor-agent.cmd`, `\\server\share\cursor-agent.cmd`)
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			store := &memStore{}
			prober := &fakeProber{}
			base := testServer(t, newTestHandler(t, store, prober))
			body, err := json.Marshal(map[string]string{"binaryPath": "  " + p + "\t"})
			require.NoError(t, err)

			r := do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, bytes.NewReader(body))
			require.Equal(t, 200, r.status, "body %s", r.body)
			var report map[string]any
			require.NoError(t, json.Unmarshal(r.body, &report))
			assert.Equal(t, map[string]any{"available": true, "binaryPath": p}, report)
			assert.EqualValues(t, 1, prober.count(p), "the trimmed path is probed exactly once")

			r = do(t, "GET", base+"/v1/cursor-cli/settings", testToken, nil)
			require.Equal(t, 200, r.status)
			var got settingsBody
			require.NoError(t, json.Unmarshal(r.body, &got))
			require.NotNil(t, got.BinaryPath)
			assert.Equal(t, p, *got.BinaryPath)
		})
	}
}

func TestClear(t *testing.T) {
	for _, body := range []string{`{"binaryPath":null}`, `{"binaryPath":""}`, `{"binaryPath":"  \t "}`} {
		t.Run(body, func(t *testing.T) {
			store := &memStore{path: "/old/cursor-agent"}
			prober := &fakeProber{}
			base := testServer(t, newTestHandler(t, store, prober))
			r := do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, strings.NewReader(body))
			require.Equal(t, 200, r.status, "body %s", r.body)
			assert.JSONEq(t, `{"binaryPath":null}`, string(r.body))
			r = do(t, "GET", base+"/v1/cursor-cli/settings", testToken, nil)
			assert.JSONEq(t, `{"binaryPath":null}`, string(r.body))
			assert.EqualValues(t, 1, store.saves.Load())
			n := 0
			prober.calls.Range(func(any, any) bool { n++; return true })
			assert.Zero(t, n, "clearing probes nothing")
		})
	}
}

// bodyFor is the PUT body saving p.
func bodyFor(p string) string {
	b, err := json.Marshal(map[string]string{"binaryPath": p})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// pathBody is the PUT body saving abs(p).
func pathBody(p string) string { return bodyFor(abs(p)) }

// probeCount is the number of probes prober ran, for every path.
func probeCount(prober *fakeProber) int64 {
	var n int64
	prober.calls.Range(func(_, v any) bool { n += v.(*atomic.Int64).Load(); return true })
	return n
}

// notAbsolute is the refusal of a path that is not absolute.
const notAbsolute = "Cannot save Cursor CLI binary path: the path must be absolute; a relative path or a bare name would be resolved against the server's working directory or PATH, not what the settings screen shows"

func TestPutRefusals(t *testing.T) {
	manyDiags := make([]string, 100)
	for i := range manyDiags {
		manyDiags[i] = fmt.Sprintf("%03d %s", i, strings.Repeat("x", 5000))
	}
	prober := &fakeProber{
		errs: map[string]error{
			abs("/missing/cursor-agent"): failure.New(failure.MissingCLI, "no such file").WithDetail("tried /missing/cursor-agent: not found"),
			abs("/slow/cursor-agent"):    failure.New(failure.Timeout, "--version did not answer within 3s"),
			abs("/twice/cursor-agent"):   failure.New(failure.MissingCLI, "no candidate ran").WithDetail("override /twice/cursor-agent: ENOENT"),
		},
		verdicts: map[string]verdict{
			abs("/old/cursor-agent"):     {ok: false, exact: true, reason: "build 2026.08.11 is older than the tested interval", diagnostics: []string{"version: 2026.08.11-e8db854"}},
			abs("/noisy/agent"):          {ok: false, exact: true, diagnostics: manyDiags},
			abs("/broken/agent"):         {ok: true, exact: false, diagnostics: []string{"/broken/agent: exec format error", "cursor-agent (PATH): ok"}},
			abs("/usr/bin/python3"):      {ok: true, exact: true, version: "Python", diagnostics: []string{`version "Python" is not a Cursor build identifier; the build could not be judged`}},
			abs("/bin/true"):             {ok: true, exact: true, diagnostics: []string{}},
			abs("/missing/cursor-agent"): {diagnostics: []string{"candidate /missing/cursor-agent: not found"}},
			abs("/twice/cursor-agent"):   {diagnostics: []string{"override /twice/cursor-agent: ENOENT", "another line", "another line"}},
		},
	}
	tests := []struct {
		name, body  string
		want        int
		wantKind    failure.Kind
		wantMessage string
		wantDiags   []string
	}{
		{name: "failing path", body: pathBody("/missing/cursor-agent"), want: 400, wantKind: failure.MissingCLI,
			wantMessage: "Cannot save Cursor CLI binary path: no such file",
			wantDiags:   []string{"tried /missing/cursor-agent: not found", "candidate /missing/cursor-agent: not found"}},
		{name: "repeated diagnostics are shown once", body: pathBody("/twice/cursor-agent"), want: 400, wantKind: failure.MissingCLI,
			wantMessage: "Cannot save Cursor CLI binary path: no candidate ran",
			wantDiags:   []string{"override /twice/cursor-agent: ENOENT", "another line"}},
		{name: "timeout", body: pathBody("/slow/cursor-agent"), want: 400, wantKind: failure.Timeout,
			wantMessage: "Cannot save Cursor CLI binary path: --version did not answer within 3s", wantDiags: []string{}},
		{name: "old build", body: pathBody("/old/cursor-agent"), want: 400, wantKind: failure.Setup,
			wantMessage: "Cannot save Cursor CLI binary path: build 2026.08.11 is older than the tested interval",
			wantDiags:   []string{"version: 2026.08.11-e8db854"}},
		{name: "success only through PATH fallback", body: pathBody("/broken/agent"), want: 400, wantKind: failure.MissingCLI,
			wantMessage: "Cannot save Cursor CLI binary path: that path does not run; only a PATH fallback did, and a fallback is not the path asked for",
			wantDiags:   []string{"/broken/agent: exec format error", "cursor-agent (PATH): ok"}},
		{name: "not Cursor: Python", body: pathBody("/usr/bin/python3"), want: 400, wantKind: failure.MissingCLI,
			wantMessage: `Cannot save Cursor CLI binary path: that program is not the Cursor CLI: its --version printed "Python", not a Cursor build identifier`,
			wantDiags:   []string{`version "Python" is not a Cursor build identifier; the build could not be judged`}},
		{name: "not Cursor: silent", body: pathBody("/bin/true"), want: 400, wantKind: failure.MissingCLI,
			wantMessage: "Cannot save Cursor CLI binary path: that program is not the Cursor CLI: its --version printed nothing, not a Cursor build identifier",
			wantDiags:   []string{}},
		{name: "relative path", body: `{"binaryPath":"../x/cursor-agent"}`, want: 400, wantKind: failure.Input, wantMessage: notAbsolute, wantDiags: []string{}},
		{name: "bare name", body: `{"binaryPath":"bash"}`, want: 400, wantKind: failure.Input, wantMessage: notAbsolute, wantDiags: []string{}},
		{name: "dot-relative name", body: `{"binaryPath":"./cursor-agent"}`, want: 400, wantKind: failure.Input, wantMessage: notAbsolute, wantDiags: []string{}},
		{name: "rooted without a drive", body: `{"binaryPath":"\\x\\cursor-agent"}`, want: 400, wantKind: failure.Input, wantMessage: notAbsolute, wantDiags: []string{}},
		{name: "number", body: `{"binaryPath":42}`, want: 400, wantKind: failure.Input, wantMessage: "binaryPath must be a string or null", wantDiags: []string{}},
		{name: "bool", body: `{"binaryPath":true}`, want: 400, wantKind: failure.Input, wantMessage: "binaryPath must be a string or null", wantDiags: []string{}},
		{name: "array", body: `{"binaryPath":["/a"]}`, want: 400, wantKind: failure.Input, wantMessage: "binaryPath must be a string or null", wantDiags: []string{}},
		{name: "object", body: `{"binaryPath":{"p":"/a"}}`, want: 400, wantKind: failure.Input, wantMessage: "binaryPath must be a string or null", wantDiags: []string{}},
		{name: "unknown field", body: `{"binaryPath":"/a","extra":1}`, want: 400, wantKind: failure.Input, wantMessage: `unknown field "extra"; the only field is binaryPath`, wantDiags: []string{}},
		{name: "wrong case", body: `{"BinaryPath":"/a"}`, want: 400, wantKind: failure.Input, wantMessage: `unknown field "BinaryPath"; the only field is binaryPath`, wantDiags: []string{}},
		{name: "missing field", body: `{}`, want: 400, wantKind: failure.Input, wantMessage: `binaryPath is required (null or "" clears it)`, wantDiags: []string{}},
		{name: "duplicate field", body: `{"binaryPath":"/a","binaryPath":"/b"}`, want: 400, wantKind: failure.Input, wantMessage: "binaryPath appears more than once", wantDiags: []string{}},
		{name: "duplicate null", body: `{"binaryPath":null,"binaryPath":null}`, want: 400, wantKind: failure.Input, wantMessage: "binaryPath appears more than once", wantDiags: []string{}},
		{name: "duplicate in another case", body: `{"binaryPath":"/a","BINARYPATH":"/b"}`, want: 400, wantKind: failure.Input, wantMessage: `unknown field "BINARYPATH"; the only field is binaryPath`, wantDiags: []string{}},
		{name: "duplicate inside a non-string", body: `{"binaryPath":{"p":"/a","p":"/b"}}`, want: 400, wantKind: failure.Input, wantMessage: "binaryPath must be a string or null", wantDiags: []string{}},
		{name: "invalid UTF-8 in the value", body: "{\"binaryPath\":\"/a\xff\"}", want: 400, wantKind: failure.Input, wantMessage: "the request body is not valid UTF-8", wantDiags: []string{}},
		{name: "invalid UTF-8 in a name", body: "{\"binary\xffPath\":\"/a\"}", want: 400, wantKind: failure.Input, wantMessage: "the request body is not valid UTF-8", wantDiags: []string{}},
		{name: "escaped lone surrogate", body: `{"binaryPath":"/a\ud800"}`, want: 400, wantKind: failure.Input, wantMessage: `binaryPath holds an escaped lone surrogate (\uD800 to \uDFFF), which is no character`, wantDiags: []string{}},
		{name: "escaped surrogate pair is a character", body: `{"binaryPath":"\ud83d\ude00"}`, want: 400, wantKind: failure.Input, wantMessage: notAbsolute, wantDiags: []string{}},
		{name: "not JSON", body: `binaryPath=/a`, want: 400, wantKind: failure.Input, wantMessage: "the request body must be a JSON object", wantDiags: []string{}},
		{name: "truncated", body: `{"binaryPath":"/a"`, want: 400, wantKind: failure.Input, wantMessage: "the request body is not valid JSON", wantDiags: []string{}},
		{name: "two objects", body: `{"binaryPath":"/a"}{}`, want: 400, wantKind: failure.Input, wantMessage: "the request body must hold exactly one JSON object", wantDiags: []string{}},
		{name: "control character", body: `{"binaryPath":"/a\u0000b"}`, want: 400, wantKind: failure.Input, wantMessage: "binaryPath must not contain control characters", wantDiags: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := probeCount(prober)
			store := &memStore{path: "/kept/cursor-agent"}
			base := testServer(t, newTestHandler(t, store, prober))
			r := do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, strings.NewReader(tt.body))
			assert.Equal(t, tt.want, r.status, "body %s", r.body)
			e := r.errorBody(t)
			assert.Equal(t, tt.wantKind, e.Kind)
			assert.Equal(t, tt.wantMessage, e.Message)
			assert.Equal(t, tt.wantDiags, e.Diagnostics)
			assert.Zero(t, store.saves.Load(), "a refused path saves nothing")
			got, err := store.binaryPath()
			require.NoError(t, err)
			assert.Equal(t, "/kept/cursor-agent", got)
			if tt.wantKind == failure.Input {
				assert.Equal(t, before, probeCount(prober), "a refused request runs no probe")
			}
		})
	}

	t.Run("diagnostics are bounded", func(t *testing.T) {
		base := testServer(t, newTestHandler(t, &memStore{}, prober))
		r := do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, strings.NewReader(pathBody("/noisy/agent")))
		require.Equal(t, 400, r.status)
		e := r.errorBody(t)
		assert.Equal(t, "Cannot save Cursor CLI binary path: the binary did not pass its --version probe", e.Message)
		require.Len(t, e.Diagnostics, maxDiagnostics+1)
		assert.Equal(t, "… 80 more", e.Diagnostics[maxDiagnostics])
		for _, d := range e.Diagnostics {
			assert.LessOrEqual(t, len(d), maxDiagnosticLen+len("…"))
		}
	})
}

func TestPutMediaTypeAndSize(t *testing.T) {
	store := &memStore{}
	base := testServer(t, newTestHandler(t, store, &fakeProber{}))
	big := `{"binaryPath":"` + strings.Repeat("a", MaxBodyBytes) + `"}`

	t.Run("413 with Content-Length", func(t *testing.T) {
		r := do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, strings.NewReader(big))
		assert.Equal(t, http.StatusRequestEntityTooLarge, r.status)
		assert.Equal(t, failure.Input, r.errorBody(t).Kind)
	})
	t.Run("413 chunked", func(t *testing.T) {
		// io.MultiReader hides the length, so the client sends chunks.
		r := do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, io.MultiReader(strings.NewReader(big)))
		assert.Equal(t, http.StatusRequestEntityTooLarge, r.status)
		assert.Equal(t, failure.Input, r.errorBody(t).Kind)
	})
	t.Run("exactly 64 KiB is read", func(t *testing.T) {
		pad := MaxBodyBytes - len(`{"binaryPath":null}`)
		body := `{"binaryPath":null}` + strings.Repeat(" ", pad)
		require.Len(t, body, MaxBodyBytes)
		r := do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, strings.NewReader(body))
		assert.Equal(t, 200, r.status, "body %s", r.body)
	})
	t.Run("415 for another media type", func(t *testing.T) {
		req, err := http.NewRequest("PUT", base+"/v1/cursor-cli/settings", strings.NewReader(`{"binaryPath":null}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "text/plain")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	})
}

func TestStoreAndProberErrors(t *testing.T) {
	store := &memStore{err: errors.New("disk on fire")}
	prober := &fakeProber{statErr: failure.New(failure.MissingCLI, "no Cursor CLI found"),
		modelsF: func(bool) (any, error) { return nil, failure.New(failure.Timeout, "models did not answer") }}
	base := testServer(t, newTestHandler(t, store, prober))
	tests := []struct {
		name, method, path, body string
		want                     int
		kind                     failure.Kind
	}{
		{"read settings", "GET", "/v1/cursor-cli/settings", "", 500, failure.Unclassified},
		{"save settings", "PUT", "/v1/cursor-cli/settings", pathBody("/ok/agent"), 500, failure.Setup},
		{"clear settings", "PUT", "/v1/cursor-cli/settings", `{"binaryPath":null}`, 500, failure.Setup},
		{"status", "GET", "/v1/cursor-cli/status", "", 502, failure.MissingCLI},
		{"models", "GET", "/v1/cursor-cli/models", "", 504, failure.Timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			r := do(t, tt.method, base+tt.path, testToken, body)
			assert.Equal(t, tt.want, r.status, "body %s", r.body)
			assert.Equal(t, tt.kind, r.errorBody(t).Kind)
		})
	}
}

func TestStatusFailureCarriesThePartialReport(t *testing.T) {
	prober := &fakeProber{
		statErr: failure.New(failure.Auth, "not logged in to Cursor: run `cursor-agent login`"),
		partial: map[string]any{"available": true, "authenticated": false, "authState": "unauthenticated"},
	}
	base := testServer(t, newTestHandler(t, &memStore{}, prober))
	r := do(t, "GET", base+"/v1/cursor-cli/status", testToken, nil)
	assert.Equal(t, http.StatusBadGateway, r.status)
	assert.JSONEq(t, `{"error":{"kind":"auth","message":"not logged in to Cursor: run `+"`cursor-agent login`"+`","diagnostics":[]},
		"status":{"available":true,"authenticated":false,"authState":"unauthenticated"}}`, string(r.body))
}

func TestConcurrentSavesAreSerialized(t *testing.T) {
	store := &memStore{}
	base := testServer(t, newTestHandler(t, store, &fakeProber{}))
	const n = 50
	paths := make(map[string]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		p := abs(fmt.Sprintf("/opt/cursor %02d/cursor-agent", i))
		paths[p] = true
		wg.Go(func() {
			body, _ := json.Marshal(map[string]string{"binaryPath": p})
			r := do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, bytes.NewReader(body))
			assert.Equal(t, 200, r.status)
		})
	}
	wg.Wait()
	assert.EqualValues(t, n, store.saves.Load())
	got, err := store.binaryPath()
	require.NoError(t, err)
	assert.True(t, paths[got], "final value %q is one of the saved paths", got)
}

func TestConcurrentProbesOfOnePathAreCoalesced(t *testing.T) {
	const n = 8
	path := abs("/opt/cursor/cursor-agent")
	release := make(chan struct{})
	prober := &fakeProber{block: map[string]chan struct{}{path: release}}
	store := &memStore{}
	h := newTestHandler(t, store, prober)
	joined := make(chan string, n)
	h.probes.joined = func(key string) { joined <- key }
	base := testServer(t, h)

	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			r := do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, strings.NewReader(bodyFor(path)))
			assert.Equal(t, 200, r.status, "body %s", r.body)
		})
	}
	deadline := time.After(10 * time.Second)
	for range n {
		select {
		case key := <-joined:
			assert.Equal(t, path, key)
		case <-deadline:
			t.Fatal("the requests never reached the probe")
		}
	}
	close(release)
	wg.Wait()
	assert.EqualValues(t, 1, prober.count(path), "%d concurrent requests share one probe", n)
	assert.EqualValues(t, n, store.saves.Load())
}

func TestProbeContextCancelStopsInFlightProbes(t *testing.T) {
	path := abs("/hangs/cursor-agent")
	prober := &fakeProber{block: map[string]chan struct{}{path: make(chan struct{})}}
	store := &memStore{path: "/kept"}
	store.t = t
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, err := newHandler(Options{Token: testToken, ProbeContext: ctx}, store, prober)
	require.NoError(t, err)
	joined := make(chan string, 1)
	h.probes.joined = func(key string) { joined <- key }
	base := testServer(t, h)

	result := make(chan response, 1)
	go func() {
		result <- do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, strings.NewReader(bodyFor(path)))
	}()
	select {
	case <-joined:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the probe")
	}
	cancel()
	r := <-result
	assert.Equal(t, http.StatusServiceUnavailable, r.status, "body %s", r.body)
	assert.Equal(t, failure.Cancelled, r.errorBody(t).Kind)
	assert.Zero(t, store.saves.Load())

	// After cancellation no new probe starts.
	r = do(t, "PUT", base+"/v1/cursor-cli/settings", testToken, strings.NewReader(pathBody("/other")))
	assert.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.Zero(t, prober.count(abs("/other")))
}

// TestHeadIsGetWithoutABody: HEAD on every route answers what GET would,
// headers and Content-Length included, without the body.
func TestHeadIsGetWithoutABody(t *testing.T) {
	store := &memStore{path: abs("/opt/cursor/cursor-agent")}
	prober := &fakeProber{statusV: map[string]any{"available": true, "authState": "authenticated"}}
	base := testServer(t, newTestHandler(t, store, prober))
	tests := []struct {
		path, token string
		want        int
	}{
		{"/healthz", "", 200},
		{"/v1/cursor-cli/settings", testToken, 200},
		{"/v1/cursor-cli/status", testToken, 200},
		{"/v1/cursor-cli/models", testToken, 200},
		{"/v1/cursor-cli/models?refresh=maybe", testToken, 400},
		{"/v1/cursor-cli/settings", "", 401},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+fmt.Sprint(tt.want), func(t *testing.T) {
			get := do(t, "GET", base+tt.path, tt.token, nil)
			head := do(t, "HEAD", base+tt.path, tt.token, nil)
			assert.Equal(t, tt.want, get.status)
			assert.Equal(t, get.status, head.status)
			assert.Empty(t, head.body)
			require.NotEmpty(t, get.body)
			assert.Equal(t, fmt.Sprint(len(get.body)), head.header.Get("Content-Length"))
			for _, h := range []string{"Content-Type", "Cache-Control", "X-Content-Type-Options", "WWW-Authenticate"} {
				assert.Equal(t, get.header.Get(h), head.header.Get(h), h)
			}
		})
	}
}

// TestPutNeedsAJSONContentType: a body is never guessed to be JSON.
func TestPutNeedsAJSONContentType(t *testing.T) {
	store := &memStore{}
	base := testServer(t, newTestHandler(t, store, &fakeProber{}))
	tests := []struct {
		contentType string // "-": no header at all
		want        int
	}{
		{"application/json", 200},
		{"application/json; charset=utf-8", 200},
		{"Application/JSON", 200},
		{"application/merge-patch+json", 200},
		{"-", 415},
		{"", 415},
		{"text/plain", 415},
		{"application/x-www-form-urlencoded", 415}, // curl -d without -H
		{"application/jsonx", 415},
		{"json", 415},
	}
	for _, tt := range tests {
		t.Run(tt.contentType, func(t *testing.T) {
			req, err := http.NewRequest("PUT", base+"/v1/cursor-cli/settings", strings.NewReader(`{"binaryPath":null}`))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+testToken)
			if tt.contentType != "-" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.StatusCode, "body %s", body)
			if tt.want == 415 {
				r := response{status: resp.StatusCode, header: resp.Header, body: body}
				e := r.errorBody(t)
				assert.Equal(t, failure.Input, e.Kind)
				assert.Equal(t, "the request body must be sent with Content-Type: application/json", e.Message)
			}
		})
	}
	assert.EqualValues(t, 4, store.saves.Load(), "only the JSON requests saved")
}

// TestResponseBytes pins what encoding/json/v2 writes for the endpoint:
// one line, nil slices as [] (the contract's arrays), no HTML escaping,
// invalid UTF-8 as U+FFFD, map members sorted (the error before the
// partial report), and a value that cannot be written as a 500 error.
func TestResponseBytes(t *testing.T) {
	tests := []struct {
		name   string
		report any
		err    error
		want   int
		body   string
	}{
		{"nil slices are empty arrays", probe.ModelsReport{}, nil, 200,
			`{"models":[],"source":"","empty":false,"fetchedAt":"0001-01-01T00:00:00Z","diagnostics":[]}`},
		{"HTML characters are not escaped", map[string]any{"diagnostics": []string{"<a> & <b>"}}, nil, 200,
			`{"diagnostics":["<a> & <b>"]}`},
		{"invalid UTF-8 becomes U+FFFD", map[string]any{"diagnostics": []string{"a\xffb"}}, nil, 200,
			`{"diagnostics":["a` + "\uFFFD" + `b"]}`},
		{"the error comes before the partial report", probe.ModelsReport{Source: "cli"}, failure.New(failure.Timeout, "models did not answer"), 504,
			`{"error":{"kind":"timeout","message":"models did not answer","diagnostics":[]},` +
				`"models":{"models":[],"source":"cli","empty":false,"fetchedAt":"0001-01-01T00:00:00Z","diagnostics":[]}}`},
		{"a value that cannot be written is a 500", map[string]any{"raw": jsontext.Value(`{"a":1,"a":2}`)}, nil, 500, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prober := &fakeProber{modelsF: func(bool) (any, error) { return tt.report, tt.err }}
			h := newTestHandler(t, &memStore{}, prober)
			req := httptest.NewRequest("GET", "/v1/cursor-cli/models", nil)
			req.Header.Set("Authorization", "Bearer "+testToken)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, tt.want, rec.Code)
			assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
			if tt.body == "" {
				r := response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
				assert.Equal(t, failure.Unclassified, r.errorBody(t).Kind)
				return
			}
			assert.Equal(t, tt.body+"\n", rec.Body.String())
		})
	}
}
