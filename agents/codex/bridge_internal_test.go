package codex

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

// readTOMLString reads a TOML basic string as the TOML 1.0 grammar
// defines it (the test's own reader, so that tomlString is checked
// against the spec, not against itself): it returns the string and
// whether s is exactly one valid basic string.
func readTOMLString(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' || !utf8.ValidString(s) {
		return "", false
	}
	body := s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '"':
			return "", false // an unescaped quote ends the string early
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", false // control characters must be escaped (tab may be literal)
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(body) {
			return "", false
		}
		esc := body[i+1]
		i += 2
		switch esc {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '"':
			b.WriteByte('"')
		case '\\':
			b.WriteByte('\\')
		case 'u', 'U':
			n := 4
			if esc == 'U' {
				n = 8
			}
			if i+n > len(body) {
				return "", false
			}
			v, err := strconv.ParseUint(body[i:i+n], 16, 32)
			if err != nil || !utf8.ValidRune(rune(v)) {
				return "", false
			}
			b.WriteRune(rune(v))
			i += n
		default:
			return "", false
		}
	}
	return b.String(), true
}

func TestTOMLString(t *testing.T) {
	tests := []struct {
		in, want string
		refused  bool
	}{
		{in: "/usr/local/bin/app", want: `"/usr/local/bin/app"`},
		{in: `C:\Users\Ann Lee\AppData\Local\Temp\cursorkit-mcp-1\session.json`, want: `"C:\\Users\\Ann Lee\\AppData\\Local\\Temp\\cursorkit-mcp-1\\session.json"`},
		{in: `\\?\C:\x`, want: `"\\\\?\\C:\\x"`},
		{in: `a "quoted" name`, want: `"a \"quoted\" name"`},
		{in: "it's", want: `"it's"`},
		{in: "", want: `""`},
		{in: "tab\tnew\nline\rret", want: `"tab\tnew\nline\rret"`},
		{in: "bell\a del\x7f esc\x1b", want: `"bell\u0007 del\u007F esc\u001B"`},
		{in: "trailing backslash\\", want: `"trailing backslash\\"`},
		{in: "ünïcödé ✓", want: `"ünïcödé ✓"`},
		{in: "#comment = [1]", want: `"#comment = [1]"`},
		{in: "nul\x00", refused: true},
		{in: "bad \xff utf-8", refused: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			got, err := tomlString(tt.in)
			if tt.refused {
				assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			back, ok := readTOMLString(got)
			assert.True(t, ok, "a valid TOML basic string")
			assert.Equal(t, tt.in, back, "reads back exactly")
		})
	}
}

func TestTOMLKey(t *testing.T) {
	for in, want := range map[string]string{
		"CURSORKIT_MCP_BRIDGE": "CURSORKIT_MCP_BRIDGE",
		"a-b_9":                "a-b_9",
		"ProgramFiles(x86)":    `"ProgramFiles(x86)"`,
		"a.b":                  `"a.b"`,
		"":                     `""`,
	} {
		got, err := tomlKey(in)
		require.NoError(t, err)
		assert.Equal(t, want, got, "%q", in)
	}
}

// FuzzTOMLString: whatever the text, tomlString writes one valid TOML
// basic string that reads back as exactly that text, or refuses text that
// is not UTF-8 or holds a NUL.
func FuzzTOMLString(f *testing.F) {
	for _, s := range []string{"", `C:\Program Files\app.exe`, `"\"`, "\x00", "\x7f\x1f", "\xff", "é\u2028", `\u0041`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := tomlString(s)
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		require.NoError(t, err)
		back, ok := readTOMLString(got)
		require.True(t, ok, "not one TOML basic string: %s", got)
		require.Equal(t, s, back)
	})
}
