package settingsapi

import (
	"net"
	"net/netip"
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
