package detail

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		assert.Equal(t, tt.want, Bound(tt.in), "%q", tt.in)
	}
	long := Bound(strings.Repeat("é", 500))
	assert.Equal(t, MaxRunes, len([]rune(long)))
	assert.True(t, strings.HasSuffix(long, "…"))
}

func TestCut(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short stays", "hello", 5, "hello"},
		{"empty", "", 0, ""},
		{"ascii cut", "hello world", 5, "hello…"},
		{"never splits a rune", "héllo", 2, "h…"},
		{"rune ends at the limit", "héllo", 3, "hé…"},
		{"zero keeps nothing", "abc", 0, "…"},
		{"negative keeps nothing", "abc", -1, "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cut(tt.in, tt.n)
			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got) || !utf8.ValidString(tt.in))
		})
	}
}

func FuzzCut(f *testing.F) {
	f.Add("héllo wörld", 4)
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := Cut(s, n)
		if len(s) <= n {
			require.Equal(t, s, got)
			return
		}
		kept, ok := strings.CutSuffix(got, "…")
		require.True(t, ok, "a cut is marked")
		require.LessOrEqual(t, len(kept), max(n, 0))
		require.True(t, strings.HasPrefix(s, kept))
		if utf8.ValidString(s) {
			require.True(t, utf8.ValidString(got))
		}
	})
}

func TestCutStart(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short stays", "hello", 5, "hello"},
		{"empty", "", 0, ""},
		{"ascii cut", "hello world", 5, "…world"},
		{"never splits a rune", "wörld", 4, "…rld"},
		{"rune starts at the limit", "wörld", 5, "…örld"},
		{"zero keeps nothing", "abc", 0, "…"},
		{"negative keeps nothing", "abc", -1, "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CutStart(tt.in, tt.n)
			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got) || !utf8.ValidString(tt.in))
		})
	}
}

func FuzzCutStart(f *testing.F) {
	f.Add("héllo wörld", 4)
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := CutStart(s, n)
		if len(s) <= n {
			require.Equal(t, s, got)
			return
		}
		kept, ok := strings.CutPrefix(got, "…")
		require.True(t, ok, "a cut is marked")
		require.LessOrEqual(t, len(kept), max(n, 0))
		require.True(t, strings.HasSuffix(s, kept))
		if utf8.ValidString(s) {
			require.True(t, utf8.ValidString(got))
		}
	})
}

func TestJoinDetails(t *testing.T) {
	assert.Equal(t, "a; b c", Join("a", " ", "b\n c"))
	assert.Equal(t, "", Join())
}

func TestStripANSI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"\x1b[1mbold\x1b[0m", "bold"},
		{"\x1b[38;5;208morange\x1b[39m", "orange"},
		{"\x1b[2K\rline", "\rline"},
		{"\x1b[?25lhidden\x1b[?25h", "hidden"},
		{"\x1b]0;title\x07text", "text"},
		{"\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1b(Bcharset", "charset"},
		{"\x1b7saved\x1b8", "saved"},
		{"\u009b31mC1\u009b0m", "C1"},
		{"cut\x1b[", "cut"},
		{"cut\x1b", "cut"},
		{"\x1b]unterminated", ""},
		{"é\x1b[0m…", "é…"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, StripANSI(tt.in), "%q", tt.in)
	}
}

func FuzzStripANSI(f *testing.F) {
	f.Add("\x1b[1mbold\x1b[0m")
	f.Add("\x1b]0;t\x07\u009b2K")
	f.Fuzz(func(t *testing.T, s string) {
		out := StripANSI(s)
		if strings.ContainsRune(out, 0x1b) {
			t.Fatalf("ESC left in %q", out)
		}
		if len(out) > len(s) {
			t.Fatalf("output grew")
		}
	})
}
