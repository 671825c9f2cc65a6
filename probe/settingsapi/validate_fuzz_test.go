package settingsapi

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"mime"
	"net"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

// FuzzCheckListenAddr checks that a loopback-only address check never
// accepts an address whose host is not loopback.
func FuzzCheckListenAddr(f *testing.F) {
	for _, seed := range []string{"127.0.0.1:7878", "[::1]:0", "localhost:1", "0.0.0.0:80", ":80",
		"[::ffff:127.0.0.1]:1", "[fe80::1%lo]:1", "127.0.0.1", "host:port:x", "[::1]"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		err := CheckListenAddr(addr, false)
		if err != nil {
			assert.Equal(t, failure.Input, failure.KindOf(err))
			if CheckListenAddr(addr, true) == nil {
				// Refused only for its host: the host is not loopback.
				host, _, splitErr := net.SplitHostPort(addr)
				require.NoError(t, splitErr)
				ip, perr := netip.ParseAddr(host)
				assert.False(t, perr == nil && ip.Zone() == "" && ip.Unmap().IsLoopback(), "refused loopback %q", addr)
			}
			return
		}
		host, port, splitErr := net.SplitHostPort(addr)
		require.NoError(t, splitErr)
		assert.NotEmpty(t, port)
		if strings.EqualFold(host, "localhost") {
			return
		}
		ip, perr := netip.ParseAddr(host)
		require.NoError(t, perr, "accepted host %q", host)
		assert.True(t, ip.Unmap().IsLoopback(), "accepted non-loopback %q", host)
	})
}

var refusalText = regexp.MustCompile(`^the bearer token (is shorter than \d+ characters|holds a character that is not printable ASCII \(at byte \d+\))$`)

// FuzzValidateToken checks that an accepted token is printable ASCII of the
// minimum length and that a refusal never contains the token.
func FuzzValidateToken(f *testing.F) {
	for _, seed := range []string{"", "short", strings.Repeat("a", 64), "abcdefgh ijklmnop", "abcdefghijklmnopé"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		err := ValidateToken(token)
		if err != nil {
			assert.Equal(t, failure.Setup, failure.KindOf(err))
			assert.Regexp(t, refusalText, err.Error(), "a refusal is a fixed text, never the token")
			return
		}
		assert.GreaterOrEqual(t, len(token), MinTokenLen)
		for _, c := range []byte(token) {
			assert.True(t, c > ' ' && c < 0x7f, "accepted byte %#x", c)
		}
	})
}

// FuzzParseRefresh checks the models query parser accepts only its forms.
func FuzzParseRefresh(f *testing.F) {
	for _, seed := range []string{"", "refresh", "refresh=true", "refresh=0", "refresh=yes", "x=1", "refresh=1&x=2"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, q string) {
		refresh, err := parseRefresh(q)
		if err != nil {
			assert.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		switch q {
		case "":
			assert.False(t, refresh)
		case "refresh", "refresh=", "refresh=1", "refresh=true":
			assert.True(t, refresh)
		case "refresh=0", "refresh=false":
			assert.False(t, refresh)
		default:
			t.Fatalf("accepted query %q", q)
		}
	})
}

// FuzzJSONMediaType checks that only application/json and *+json media
// types are accepted, and never a missing Content-Type.
func FuzzJSONMediaType(f *testing.F) {
	for _, seed := range []string{"", "application/json", "application/json; charset=utf-8", "APPLICATION/JSON",
		"application/merge-patch+json", "text/plain", "application/jsonx", "json", "application/json;", ";"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, contentType string) {
		if !jsonMediaType(contentType) {
			return
		}
		mt, _, err := mime.ParseMediaType(contentType)
		require.NoError(t, err, "accepted %q", contentType)
		assert.True(t, mt == "application/json" || strings.HasSuffix(mt, "+json"), "accepted %q", contentType)
	})
}

// FuzzPutSavesOnlyAbsoluteCursorPaths drives the PUT handler with any path
// and checks the rule of docs/contract.md ("The settings validation
// endpoint"): nothing but an absolute path is probed, and nothing is saved
// unless it is absolute and its --version printed a Cursor build.
func FuzzPutSavesOnlyAbsoluteCursorPaths(f *testing.F) {
	for _, seed := range []string{"/opt/cursor-agent", "C:\\x\\cursor-agent.exe", "cursor-agent", "../x/cursor-agent",
		"./a", " /a ", "\\\\server\\share\\a", "C:a", ""} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, path string, cursorBuild bool) {
		body, err := json.Marshal(map[string]string{"binaryPath": path}, jsontext.AllowInvalidUTF8(true))
		if err != nil {
			return
		}
		path = string([]rune(path)) // what JSON carries: invalid UTF-8 as U+FFFD
		store := &memStore{t: t}
		prober := &probeRecorder{cursorBuild: cursorBuild}
		h, err := newHandler(Options{Token: testToken}, store, prober)
		require.NoError(t, err)
		req := httptest.NewRequest("PUT", "/v1/cursor-cli/settings", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		trimmed := strings.TrimSpace(path)
		for _, probed := range prober.paths {
			assert.True(t, filepath.IsAbs(probed), "probed %q", probed)
		}
		if rec.Code == 200 && trimmed != "" {
			assert.True(t, filepath.IsAbs(trimmed) && cursorBuild, "saved %q (Cursor build: %v)", trimmed, cursorBuild)
			assert.Equal(t, trimmed, store.path)
		}
		if rec.Code != 200 {
			assert.Zero(t, store.saves.Load(), "a refusal saves nothing")
		}
	})
}

// probeRecorder is a prober whose every binary runs, printing a Cursor
// build or not; it records the paths it probed.
type probeRecorder struct {
	cursorBuild bool
	paths       []string
}

func (p *probeRecorder) probeExact(_ context.Context, path string) (verdict, error) {
	p.paths = append(p.paths, path)
	return verdict{ok: true, exact: true, cursorBuild: p.cursorBuild, report: map[string]any{}}, nil
}

func (p *probeRecorder) status(context.Context) (any, error) { return nil, nil }

func (p *probeRecorder) models(context.Context, bool) (any, error) { return nil, nil }
