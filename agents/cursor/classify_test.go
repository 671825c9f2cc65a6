package cursor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

// TestDiagnose: each cause is found by its stable core, in any case and
// wording around it, through escape sequences; the cause of highest
// precedence wins (docs/contract.md, "Agent messages").
func TestDiagnose(t *testing.T) {
	tests := []struct {
		text string
		want Cause
	}{
		{"", CauseNone},
		{"Error: Cannot find module '../build/agent-core.js'", CauseNone},
		{"Something went wrong: the model provider returned an internal error.", CauseNone},
		{"ripgrep exited with status 2", CauseNone},

		{"Error: Your macOS login keychain is locked.\nRun security unlock-keychain and try again.", CauseKeychainLocked},
		{"ERROR: YOUR MACOS LOGIN KEYCHAIN IS LOCKED.", CauseKeychainLocked},
		{"error: the keychain is locked (errSecInteractionNotAllowed)", CauseKeychainLocked},
		{"\x1b[31mError:\x1b[0m Your macOS login keychain is locked.", CauseKeychainLocked},
		{"Error: No Cursor IDE installation found. Use 'cursor agent' or 'agent' to run the agent.", CauseIDEMissing},
		{"no cursor ide installation found", CauseIDEMissing},
		{"NO CURSOR IDE INSTALLATION FOUND on this machine", CauseIDEMissing},
		// The sandbox: no exact text is documented; the simulator's
		// hypothetical one and rewordings of the stable core.
		{"Error: Sandbox unavailable: could not create the terminal sandbox (Landlock ABI v3 and unprivileged user namespaces are required).", CauseSandbox},
		{"Failed to create sandbox: operation not permitted", CauseSandbox},
		{"error: the sandbox is not available on this system", CauseSandbox},
		{"\x1b[31mSANDBOX CREATION FAILED\x1b[0m", CauseSandbox},
		{"Sandbox unavailable while fetching: getaddrinfo ENOTFOUND api2.cursor.sh", CauseSandbox},
		{"the sandbox denied write access to /etc/passwd", CauseNone},

		// DNS
		{"Error: getaddrinfo ENOTFOUND api2.cursor.sh", CauseNetwork},
		{"Connection error: request to https://api2.cursor.sh failed, reason: getaddrinfo ENOTFOUND api2.cursor.sh", CauseNetwork},
		{"getaddrinfo EAI_AGAIN api2.cursor.sh", CauseNetwork},
		{"curl: (6) Could not resolve host: api2.cursor.sh", CauseNetwork},
		{"Temporary failure in name resolution", CauseNetwork},
		// connections
		{"Error: connect ECONNREFUSED 127.0.0.1:8080", CauseNetwork},
		{"Error: read ECONNRESET", CauseNetwork},
		{"Error: connect ETIMEDOUT 104.18.2.3:443", CauseNetwork},
		{"connect ENETUNREACH 2606:4700::1:443", CauseNetwork},
		{"connect EHOSTUNREACH 10.0.0.1:443", CauseNetwork},
		{"Error: socket hang up", CauseNetwork},
		{"TypeError: fetch failed", CauseNetwork},
		{"ConnectTimeoutError: Connect Timeout Error (attempted address: api2.cursor.sh:443, timeout: 10000ms)", CauseNetwork},
		{"Connection error.", CauseNetwork},
		// TLS
		{"Error: unable to get local issuer certificate", CauseNetwork},
		{"Error: self signed certificate in certificate chain", CauseNetwork},
		{"Error: self-signed certificate in certificate chain", CauseNetwork},
		{"Error: certificate has expired", CauseNetwork},
		{"code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'", CauseNetwork},
		{"Error [ERR_TLS_CERT_ALTNAME_INVALID]: Hostname/IP does not match certificate's altnames", CauseNetwork},
		{"Client network socket disconnected before secure TLS connection was established", CauseNetwork},
		{"write EPROTO 40B8:error:0A00010B:SSL routines:ssl3_get_record:wrong version number", CauseNetwork},
		// proxies
		{"407 Proxy Authentication Required", CauseNetwork},
		{"tunneling socket could not be established, cause=connect ECONNREFUSED 10.1.1.1:3128", CauseNetwork},
		{"Proxy connection ended before receiving CONNECT response", CauseNetwork},
		{"Failed to connect to proxy 10.1.1.1:3128", CauseNetwork},

		{"You've hit your usage limit for Claude.", CauseQuota},
		{"Rate limit exceeded. Try again in 20s.", CauseRateLimited},
		{"Error: Not logged in", CauseNotLoggedIn},
		{"401 Unauthorized", CauseNotLoggedIn},

		// Precedence: local states, then the network, then the answers.
		{"Authentication required? no: your macOS login keychain is locked", CauseKeychainLocked},
		{"No Cursor IDE installation found; getaddrinfo ENOTFOUND api2.cursor.sh", CauseIDEMissing},
		{"Authentication failed: getaddrinfo ENOTFOUND api2.cursor.sh", CauseNetwork},
		{"Rate limit exceeded, retried: read ECONNRESET", CauseNetwork},
		{"usage limit reached (429 Too Many Requests)", CauseQuota},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Diagnose(tt.text), "%q", tt.text)
		assert.Equal(t, tt.want.Kind(), ClassifyMessage(tt.text), "%q", tt.text)
	}
}

func TestCauseKindsAndFixes(t *testing.T) {
	tests := []struct {
		cause Cause
		kind  failure.Kind
		fix   string // a word the fix must hold
	}{
		{CauseNone, failure.Unclassified, ""},
		{CauseKeychainLocked, failure.Auth, "unlock-keychain"},
		{CauseIDEMissing, failure.Setup, "cursor-agent"},
		{CauseSandbox, failure.Sandbox, "Landlock"},
		{CauseNetwork, failure.Network, "proxy"},
		{CauseQuota, failure.Quota, "usage limit"},
		{CauseRateLimited, failure.RateLimited, "try again"},
		{CauseNotLoggedIn, failure.Auth, "cursor-agent login"},
	}
	for _, tt := range tests {
		t.Run(string(tt.cause), func(t *testing.T) {
			assert.Equal(t, tt.kind, tt.cause.Kind())
			assert.Contains(t, tt.cause.Fix(), tt.fix)
			if tt.cause == CauseNone {
				assert.Empty(t, tt.cause.Summary())
				assert.Empty(t, tt.cause.Fix())
				assert.Nil(t, tt.cause.Err("x"))
				return
			}
			err := tt.cause.Err("Error: what the agent said")
			require.NotNil(t, err)
			assert.Equal(t, tt.kind, failure.KindOf(err))
			assert.Equal(t, "Error: what the agent said", err.Detail)
			assert.Contains(t, err.Message, tt.cause.Summary())
			assert.Contains(t, err.Message, tt.cause.Fix())
		})
	}
	for _, text := range []string{CauseNetwork.Summary(), CauseNetwork.Fix()} {
		assert.NotContains(t, strings.ToLower(text), "log in", "the network is never a login problem")
		assert.NotContains(t, strings.ToLower(text), "login")
	}
}

// causeRank is c's precedence: 0 first; CauseNone last.
func causeRank(c Cause) int {
	for i, cp := range causePhrases {
		if cp.Value == c {
			return i
		}
	}
	return len(causePhrases)
}

// FuzzDiagnose: Diagnose never panics and names a known cause with a valid
// kind; it ignores ASCII case; text added around a message (escape
// sequences aside) never loses its cause, only a cause of higher
// precedence can win; and every phrase of every cause is found, in any
// case, inside any text.
func FuzzDiagnose(f *testing.F) {
	for _, s := range []string{"", "Error: Your macOS login keychain is locked.", "No Cursor IDE installation found",
		"getaddrinfo ENOTFOUND api2.cursor.sh", "connect ECONNREFUSED", "407 Proxy Authentication Required",
		"usage limit", "429 Too Many Requests", "Not logged in", "\x1b[1mkeychain\x1b[0m is locked", "ENOTF\x1bOUND", "\xff\xfe"} {
		f.Add(s, "x", uint8(0))
	}
	f.Fuzz(func(t *testing.T, s, extra string, pick uint8) {
		c := Diagnose(s)
		rank := causeRank(c)
		require.LessOrEqual(t, rank, len(causePhrases), "a known cause")
		require.True(t, c.Kind().Valid())
		require.Equal(t, c.Kind(), ClassifyMessage(s))
		require.Equal(t, c == CauseNone, c.Fix() == "")
		if isASCII(s) {
			require.Equal(t, c, Diagnose(strings.ToUpper(s)), "case is ignored: %q", s)
		}
		if strings.ContainsAny(s, "\x1b\u009b") {
			return // an escape sequence may swallow what follows it
		}
		extra = strings.NewReplacer("\x1b", "", "\u009b", "").Replace(extra)
		for _, around := range []string{extra + "\n" + s, s + "\n" + extra} {
			require.LessOrEqual(t, causeRank(Diagnose(around)), rank, "no cause lost: %q", around)
		}
		cp := causePhrases[int(pick)%len(causePhrases)]
		phrase := cp.Phrases[int(pick)/len(causePhrases)%len(cp.Phrases)]
		got := Diagnose(s + " " + strings.ToUpper(phrase) + " " + extra)
		require.LessOrEqual(t, causeRank(got), causeRank(cp.Value), "%q is found", phrase)
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
