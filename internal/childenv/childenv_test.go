package childenv

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name     string
		env      []string
		foldCase bool
		want     []string
	}{
		{"the token goes", []string{"A=1", "CURSORKIT_TOKEN=s3cr3t-s3cr3t-s3cr3t", "B=2"}, false, []string{"A=1", "B=2"}},
		{"every copy goes", []string{"CURSORKIT_TOKEN=a", "CURSORKIT_TOKEN=b"}, false, []string{}},
		{"an empty value goes too", []string{"CURSORKIT_TOKEN="}, false, []string{}},
		{"other cursorkit variables stay", []string{"CURSORKIT_SETTINGS=/s.json", "CURSORKIT_LAUNCH_ID=x", "CURSORKIT_TOKENS=y", "MY_CURSORKIT_TOKEN=z"}, false,
			[]string{"CURSORKIT_SETTINGS=/s.json", "CURSORKIT_LAUNCH_ID=x", "CURSORKIT_TOKENS=y", "MY_CURSORKIT_TOKEN=z"}},
		{"a value naming it stays", []string{"NOTE=CURSORKIT_TOKEN=x"}, false, []string{"NOTE=CURSORKIT_TOKEN=x"}},
		{"POSIX names are exact", []string{"cursorkit_token=x"}, false, []string{"cursorkit_token=x"}},
		{"Windows names fold case", []string{"cursorkit_token=x", "Cursorkit_Token=y", "PATH=C:\\x"}, true, []string{"PATH=C:\\x"}},
		{"Windows drive entries stay", []string{"=C:=C:\\work", "=::=::\\"}, true, []string{"=C:=C:\\work", "=::=::\\"}},
		{"an entry without '=' stays", []string{"CURSORKIT_TOKENX", ""}, false, []string{"CURSORKIT_TOKENX", ""}},
		{"nil is empty", nil, false, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]string(nil), tt.env...)
			assert.Equal(t, tt.want, clean(tt.env, tt.foldCase))
			assert.Equal(t, in, tt.env, "the input is not modified")
		})
	}
}

func TestCleanFollowsTheOS(t *testing.T) {
	got := Clean([]string{"cursorkit_token=x"})
	if runtime.GOOS == "windows" {
		assert.Empty(t, got)
	} else {
		assert.Equal(t, []string{"cursorkit_token=x"}, got)
	}
}

// FuzzClean checks that no secret survives, in any case on Windows, and
// that everything else is kept in order.
func FuzzClean(f *testing.F) {
	for _, seed := range []string{"CURSORKIT_TOKEN=x\nA=1", "=C:=C:\\\ncursorkit_token=y", "\n\n=", "CURSORKIT_TOKEN"} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, joined string, foldCase bool) {
		env := strings.Split(joined, "\n")
		got := clean(env, foldCase)
		kept := 0
		for _, kv := range env {
			n := name(kv)
			secret := n == "CURSORKIT_TOKEN" || foldCase && strings.EqualFold(n, "CURSORKIT_TOKEN")
			if secret {
				continue
			}
			if assert.Less(t, kept, len(got), "entry %q was dropped", kv) {
				assert.Equal(t, kv, got[kept])
			}
			kept++
		}
		assert.Len(t, got, kept)
		for _, kv := range got {
			n, _, _ := strings.Cut(kv, "=")
			if n != "" {
				assert.False(t, n == "CURSORKIT_TOKEN" || foldCase && strings.EqualFold(n, "CURSORKIT_TOKEN"), "secret %q kept", kv)
			}
		}
	})
}

// TestLookup: the last entry wins; names fold only on Windows.
func TestLookup(t *testing.T) {
	env := []string{"PATH=/a", "Path=/b", "ODD", "EMPTY="}
	tests := []struct {
		name, goos, want string
	}{
		{"PATH", "linux", "/a"},
		{"PATH", "windows", "/b"},
		{"path", "linux", ""},
		{"path", "windows", "/b"},
		{"ODD", "linux", ""},
		{"EMPTY", "linux", ""},
		{"MISSING", "windows", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Lookup(env, tt.name, tt.goos), "%s on %s", tt.name, tt.goos)
	}
}
