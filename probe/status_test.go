package probe

import (
	"encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name          string
		stdout        string
		stderr        string
		exit          int
		state         AuthState
		reason        string
		authenticated bool
	}{
		{"logged in", `{"status":"ok","isAuthenticated":true,"hasAccessToken":true,"userInfo":{"email":"a@b.c"}}`, "", 0,
			AuthAuthenticated, reasonLoggedIn, true},
		{"logged out", `{"isAuthenticated":false,"hasAccessToken":false}`, "", 0, AuthUnauthenticated, reasonNotLoggedIn, false},
		{"BOM", "\uFEFF{\"isAuthenticated\":true}", "", 0, AuthAuthenticated, reasonLoggedIn, true},
		{"banner before and noise after", "Checking login…\r\n{\"isAuthenticated\": true}\r\nbye {", "", 0, AuthAuthenticated, reasonLoggedIn, true},
		{"ANSI around JSON", "\x1b[2K\x1b[1G{\"isAuthenticated\":true}\x1b[0m", "", 0, AuthAuthenticated, reasonLoggedIn, true},
		{"object without the field first", `{"note":"x"} {"isAuthenticated":true}`, "", 0, AuthAuthenticated, reasonLoggedIn, true},
		{"nested field is not the signal", `{"userInfo":{"isAuthenticated":true}}`, "", 0, AuthUnauthenticated, reasonMissingField, false},
		{"brace in banner", "loading {cache}\n{\"isAuthenticated\":true}", "", 0, AuthAuthenticated, reasonLoggedIn, true},
		{"malformed JSON", `{"isAuthenticated":true`, "", 0, AuthUnauthenticated, reasonMalformedJSON, false},
		{"plain text", "hello", "", 0, AuthUnauthenticated, reasonMalformedJSON, false},
		{"empty output", "", "", 0, AuthUnauthenticated, reasonEmptyOutput, false},
		{"whitespace and BOM only", "\uFEFF \r\n", "", 0, AuthUnauthenticated, reasonEmptyOutput, false},
		{"missing isAuthenticated", `{"status":"ok"}`, "", 0, AuthUnauthenticated, reasonMissingField, false},
		{"string isAuthenticated", `{"isAuthenticated":"true"}`, "", 0, AuthUnauthenticated, reasonNotBoolean, false},
		{"null isAuthenticated", `{"isAuthenticated":null}`, "", 0, AuthUnauthenticated, reasonNotBoolean, false},
		{"numeric isAuthenticated", `{"isAuthenticated":1}`, "", 0, AuthUnauthenticated, reasonNotBoolean, false},
		{"non-zero exit with true JSON", `{"isAuthenticated":true}`, "", 1, AuthUnauthenticated, reasonNonZeroExit, false},
		{"non-zero exit, nothing", "", "", 2, AuthUnauthenticated, reasonNonZeroExit, false},
		{"authentication required", "", "Error: Authentication required. Run cursor-agent login.", 1, AuthUnauthenticated, reasonNotLoggedIn, false},
		{"not logged in on stdout, exit 0", "Not logged in", "", 0, AuthUnauthenticated, reasonNotLoggedIn, false},
		{"keychain on stderr", "", "Error: Your macOS login keychain is locked.\nRun security unlock-keychain and try again.", 1,
			AuthKeychainLocked, reasonKeychainLocked, false},
		{"keychain on stdout, upper case", "ERROR: YOUR MACOS LOGIN KEYCHAIN IS LOCKED.", "", 0, AuthKeychainLocked, reasonKeychainLocked, false},
		{"keychain wins over JSON", `{"isAuthenticated":true}`, "Your macOS login keychain is locked", 0, AuthKeychainLocked, reasonKeychainLocked, false},
		{"IDE missing on stderr", "", "Error: No Cursor IDE installation found. Use 'cursor agent' or 'agent' to run the agent.", 1,
			AuthIDEMissing, reasonIDEMissing, false},
		{"IDE missing on stdout", "no cursor ide installation found", "", 0, AuthIDEMissing, reasonIDEMissing, false},
		{"keychain by its stable core", "", "error: The Keychain Is Locked", 1, AuthKeychainLocked, reasonKeychainLocked, false},
		{"DNS failure", "", "Error: getaddrinfo ENOTFOUND api2.cursor.sh", 1, AuthUnknown, reasonNetwork, false},
		{"connection refused", "", "Error: connect ECONNREFUSED 127.0.0.1:443", 1, AuthUnknown, reasonNetwork, false},
		{"connection reset", "", "Error: read ECONNRESET", 1, AuthUnknown, reasonNetwork, false},
		{"connection timed out", "", "Error: connect ETIMEDOUT 104.18.2.3:443", 1, AuthUnknown, reasonNetwork, false},
		{"TLS interception", "", "Error: self-signed certificate in certificate chain", 1, AuthUnknown, reasonNetwork, false},
		{"proxy", "", "Error: 407 Proxy Authentication Required", 1, AuthUnknown, reasonNetwork, false},
		{"logged out offline", `{"isAuthenticated":false}`, "Warning: getaddrinfo ENOTFOUND api2.cursor.sh", 0, AuthUnknown, reasonNetwork, false},
		{"network failure instead of JSON", "Error: getaddrinfo EAI_AGAIN api2.cursor.sh", "", 0, AuthUnknown, reasonNetwork, false},
		{"logged in despite a network warning", `{"isAuthenticated":true}`, "Warning: read ECONNRESET", 0, AuthAuthenticated, reasonLoggedIn, true},
		{"rate limited", "", "Error: 429 Too Many Requests", 1, AuthUnknown, reasonRateLimited, false},
		{"keychain wins over the network", "", "getaddrinfo ENOTFOUND api2.cursor.sh\nYour macOS login keychain is locked", 1,
			AuthKeychainLocked, reasonKeychainLocked, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := parseStatus([]byte(tt.stdout), []byte(tt.stderr), tt.exit)
			assert.Equal(t, tt.state, a.State)
			assert.Equal(t, tt.reason, a.Reason)
			assert.Equal(t, tt.authenticated, a.Authenticated)
			assert.LessOrEqual(t, len([]rune(a.Detail)), detail.MaxRunes)
		})
	}
}

func TestParseStatusKeepsFields(t *testing.T) {
	a := parseStatus([]byte(`{"status":"logged_in","isAuthenticated":true,"hasAccessToken":true,"userInfo":{"email":"a@b.c"},"accessToken":"SECRET"}`), nil, 0)
	assert.Equal(t, "logged_in", a.Status)
	if assert.NotNil(t, a.HasAccessToken) {
		assert.True(t, *a.HasAccessToken)
	}
	assert.JSONEq(t, `{"email":"a@b.c"}`, string(a.UserInfo))
	out, err := json.Marshal(a)
	assert.NoError(t, err)
	assert.NotContains(t, string(out), "SECRET")
	assert.Contains(t, string(out), `"authState":"authenticated"`)

	a = parseStatus([]byte(`{"isAuthenticated":false,"hasAccessToken":false,"userInfo":null}`), nil, 0)
	if assert.NotNil(t, a.HasAccessToken) {
		assert.False(t, *a.HasAccessToken)
	}
	assert.Nil(t, a.UserInfo)
}

func TestParseStatusReasonsAreDistinct(t *testing.T) {
	failures := map[string]Auth{
		"malformed": parseStatus([]byte("{"), nil, 0),
		"empty":     parseStatus(nil, nil, 0),
		"exit":      parseStatus([]byte(`{"isAuthenticated":true}`), nil, 3),
		"missing":   parseStatus([]byte(`{}`), nil, 0),
	}
	seen := map[string]string{}
	for name, a := range failures {
		assert.False(t, a.Authenticated, name)
		assert.Equal(t, AuthUnauthenticated, a.State, name)
		if other, dup := seen[a.Reason]; dup {
			t.Errorf("%s and %s share reason %q", name, other, a.Reason)
		}
		seen[a.Reason] = name
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(`{"isAuthenticated":true}`), []byte(""), 0)
	f.Add([]byte("\uFEFF{\"isAuthenticated\":false}"), []byte(""), 0)
	f.Add([]byte("{{{{"), []byte("Not logged in"), 1)
	f.Add([]byte(""), []byte("Your macOS login keychain is locked"), 1)
	f.Add([]byte(`{"isAuthenticated":false}`), []byte("getaddrinfo ENOTFOUND api2.cursor.sh"), 0)
	f.Add([]byte(""), []byte("407 Proxy Authentication Required"), 1)
	f.Fuzz(func(t *testing.T, stdout, stderr []byte, exit int) {
		a := parseStatus(stdout, stderr, exit)
		switch a.State {
		case AuthAuthenticated:
			if !a.Authenticated || exit != 0 || a.Reason != reasonLoggedIn {
				t.Fatalf("authenticated verdict %+v from exit %d", a, exit)
			}
		case AuthUnauthenticated, AuthKeychainLocked, AuthIDEMissing:
			if a.Authenticated {
				t.Fatalf("state %s but authenticated", a.State)
			}
		case AuthUnknown:
			if a.Authenticated || a.Cause() == cursor.CauseNone {
				t.Fatalf("unknown state without the cause the words name: %+v", a)
			}
		default:
			t.Fatalf("unexpected state %q", a.State)
		}
		// One classifier: the verdict's cause is what the words name, and
		// a network failure is never told to log in.
		if said := cursor.Diagnose(string(stdout) + "\n" + string(stderr)); !a.Authenticated && said != cursor.CauseNone && said != cursor.CauseNotLoggedIn {
			if a.Cause() != said {
				t.Fatalf("words name %s, verdict %+v", said, a)
			}
			if failure.KindOf(a.Err()) != said.Kind() {
				t.Fatalf("words name %s, error %v", said, a.Err())
			}
		}
		if a.Reason == "" {
			t.Fatal("verdict without a reason")
		}
		if n := len([]rune(a.Detail)); n > detail.MaxRunes {
			t.Fatalf("detail of %d runes", n)
		}
	})
}

// TestParseStatusReadsAsNode: the status object is read as the agent's
// JSON.parse reads it (a member given twice keeps the last, invalid UTF-8
// becomes U+FFFD, names are matched exactly), and what is kept of it
// always marshals with encoding/json/v2's defaults.
func TestParseStatusReadsAsNode(t *testing.T) {
	tests := []struct {
		name, stdout string
		state        AuthState
		reason       string
		status       string
		userInfo     string // "" when left out
	}{
		{"isAuthenticated given twice, the last true", `{"isAuthenticated":false,"isAuthenticated":true}`,
			AuthAuthenticated, reasonLoggedIn, "", ""},
		{"isAuthenticated given twice, the last false", `{"isAuthenticated":true,"isAuthenticated":false}`,
			AuthUnauthenticated, reasonNotLoggedIn, "", ""},
		{"a duplicate does not skip to a nested object", `{"userInfo":{"isAuthenticated":true},"isAuthenticated":false,"isAuthenticated":false}`,
			AuthUnauthenticated, reasonNotLoggedIn, "", `{"isAuthenticated":true}`},
		{"isAuthenticated in another case is missing", `{"IsAuthenticated":true}`,
			AuthUnauthenticated, reasonMissingField, "", ""},
		{"invalid UTF-8 in userInfo", "{\"isAuthenticated\":true,\"userInfo\":{\"name\":\"A\xff\"}}",
			AuthAuthenticated, reasonLoggedIn, "", `{"name":"A` + "\uFFFD" + `"}`},
		{"an escaped lone surrogate in userInfo", `{"isAuthenticated":true,"userInfo":{"name":"A\ud83d"}}`,
			AuthAuthenticated, reasonLoggedIn, "", `{"name":"A` + "\uFFFD" + `"}`},
		{"invalid UTF-8 in status", "{\"isAuthenticated\":true,\"status\":\"ok\xff\"}",
			AuthAuthenticated, reasonLoggedIn, "ok", ""},
		{"userInfo with a name given twice is left out", `{"isAuthenticated":true,"userInfo":{"a":1,"a":2}}`,
			AuthAuthenticated, reasonLoggedIn, "", ""},
		{"userInfo is compacted", `{"isAuthenticated":true,"userInfo": { "email" : "a@b.c" } }`,
			AuthAuthenticated, reasonLoggedIn, "", `{"email":"a@b.c"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := parseStatus([]byte(tt.stdout), nil, 0)
			assert.Equal(t, tt.state, a.State)
			assert.Equal(t, tt.reason, a.Reason)
			assert.Equal(t, tt.status, a.Status)
			assert.Equal(t, tt.userInfo, string(a.UserInfo))
			_, err := json.Marshal(a)
			assert.NoError(t, err)
		})
	}
}
