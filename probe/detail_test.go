package probe

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBoundDetail(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"  a \n\t b\r\n  c  ", "a b c"},
		{"\x1b[31merror\x1b[0m: boom", "error: boom"},
		{"\x00\x07bell", "bell"},
		{"PATH=/usr/bin:/secret and GITHUB_TOKEN=abc Path=C:\\x", "PATH=<redacted> and GITHUB_TOKEN=<redacted> Path=<redacted>"},
		{"keychain=locked", "keychain=locked"},
		{"OSC \x1b]0;title\x07 done", "OSC done"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, BoundDetail(tt.in), "%q", tt.in)
	}
	long := BoundDetail(strings.Repeat("é", 500))
	assert.Equal(t, MaxDetailRunes, len([]rune(long)))
	assert.True(t, strings.HasSuffix(long, "…"))
}

func TestJoinDetails(t *testing.T) {
	assert.Equal(t, "a; b c", JoinDetails("a", " ", "b\n c"))
	assert.Equal(t, "", JoinDetails())
}
