package discovery_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name   string
		want   discovery.Kind
		errHas string
	}{
		{`C:\x\cursor-agent.exe`, discovery.Native, ""},
		{`cursor-agent.COM`, discovery.Native, ""},
		{`cursor-agent.cmd`, discovery.CmdShim, ""},
		{`C:\x\Cursor-Agent.BaT`, discovery.CmdShim, ""},
		{`run.cmd.`, discovery.CmdShim, ""},
		{`run.cmd . .`, discovery.CmdShim, ""},
		{`run.bat...`, discovery.CmdShim, ""},
		{`C:\x\cursor-agent.PS1`, discovery.PowerShell, ""},
		{`C:\x\cursor-agent`, "", "has no extension"},
		{`cursor-agent. .`, "", "has no extension"},
		{`cursor-agent.js`, "", `extension ".js" is not launchable on Windows`},
		{`cursor-agent.cmd.txt`, "", `extension ".txt"`},
		{`C:\dir.exe\cursor-agent`, "", "has no extension"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, err := discovery.Classify("windows", tt.name)
			if tt.errHas != "" {
				require.Error(t, err)
				assert.Equal(t, failure.Input, failure.KindOf(err))
				assert.Contains(t, err.Error(), tt.errHas)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, kind)
		})
	}
	for _, goos := range []string{"linux", "darwin", "freebsd"} {
		kind, err := discovery.Classify(goos, "/x/cursor-agent.cmd")
		require.NoError(t, err)
		assert.Equal(t, discovery.POSIX, kind)
	}
}

// FuzzClassify: classification never panics, is case-insensitive, ignores
// trailing dots and spaces, and errors are Input and bounded.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"a.cmd", "a.CMD. .", `C:\x y\a.bat`, "a", ".exe", "a.ps1", "a.js", "a.\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		kind, err := discovery.Classify("windows", name)
		if err != nil {
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.LessOrEqual(t, len(err.Error()), 300)
			assert.Empty(t, kind)
		} else {
			assert.Contains(t, []discovery.Kind{discovery.Native, discovery.CmdShim, discovery.PowerShell}, kind)
		}
		k2, err2 := discovery.Classify("windows", name+". . ")
		assert.Equal(t, kind, k2, "trailing dots and spaces are ignored")
		assert.Equal(t, err == nil, err2 == nil)
		if isASCIIString(name) {
			k3, _ := discovery.Classify("windows", strings.ToUpper(name))
			assert.Equal(t, kind, k3, "case-insensitive")
		}
		lower := strings.ToLower(strings.TrimRight(name, ". "))
		if kind == discovery.CmdShim {
			assert.True(t, strings.HasSuffix(lower, ".cmd") || strings.HasSuffix(lower, ".bat"), "%q", name)
		}
		if strings.HasSuffix(lower, ".cmd") || strings.HasSuffix(lower, ".bat") {
			assert.Equal(t, discovery.CmdShim, kind, "every batch name is detected: %q", name)
		}
	})
}

func isASCIIString(s string) bool {
	for _, r := range s {
		if r >= 0x80 {
			return false
		}
	}
	return true
}
