package cursor_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestCandidates(t *testing.T) {
	const spaced = `C:\Users\A User\AppData\Roaming\npm\cursor-agent.cmd`
	pathAgent := discovery.Candidate{Value: "cursor-agent", Source: discovery.SourcePath}
	pathCursor := discovery.Candidate{Value: "cursor", Source: discovery.SourcePath}
	tests := []struct {
		name     string
		override string
		env      map[string]string
		want     []discovery.Candidate
	}{
		{
			name: "nothing configured: the two PATH names, never agent",
			want: []discovery.Candidate{pathAgent, pathCursor},
		},
		{
			name:     "SPEC order",
			override: "/opt/x/cursor-agent",
			env:      map[string]string{"CURSOR_AGENT_BIN": "/usr/local/bin/cursor-agent"},
			want: []discovery.Candidate{
				{Value: "/opt/x/cursor-agent", Source: discovery.SourceOverride, Origin: "configured binary"},
				{Value: "/usr/local/bin/cursor-agent", Source: discovery.SourceEnv, Origin: "CURSOR_AGENT_BIN"},
				pathAgent, pathCursor,
			},
		},
		{
			name:     "override trimmed, never split, spaces kept",
			override: "  " + spaced + " \t\r\n",
			want: []discovery.Candidate{
				{Value: spaced, Source: discovery.SourceOverride, Origin: "configured binary"},
				pathAgent, pathCursor,
			},
		},
		{
			name:     "quotes are kept verbatim (Resolve refuses them)",
			override: `"` + spaced + `"`,
			want: []discovery.Candidate{
				{Value: `"` + spaced + `"`, Source: discovery.SourceOverride, Origin: "configured binary"},
				pathAgent, pathCursor,
			},
		},
		{
			name:     "blank values are dropped",
			override: " \t ",
			env:      map[string]string{"CURSOR_AGENT_BIN": "  "},
			want:     []discovery.Candidate{pathAgent, pathCursor},
		},
		{
			name:     "configured cursor-agent is the PATH candidate, tried once",
			override: "cursor-agent",
			want: []discovery.Candidate{
				{Value: "cursor-agent", Source: discovery.SourceOverride, Origin: "configured binary"},
				pathCursor,
			},
		},
		{
			name: "env cursor is the PATH candidate, tried once, at its position",
			env:  map[string]string{"CURSOR_AGENT_BIN": " cursor "},
			want: []discovery.Candidate{
				{Value: "cursor", Source: discovery.SourceEnv, Origin: "CURSOR_AGENT_BIN"},
				pathAgent,
			},
		},
		{
			name:     "override equal to the environment value is tried once",
			override: "/opt/x/cursor-agent",
			env:      map[string]string{"CURSOR_AGENT_BIN": "/opt/x/cursor-agent"},
			want: []discovery.Candidate{
				{Value: "/opt/x/cursor-agent", Source: discovery.SourceOverride, Origin: "configured binary"},
				pathAgent, pathCursor,
			},
		},
		{
			name:     "a configured agent stays the operator's choice (CheckCandidate refuses it)",
			override: "agent",
			want: []discovery.Candidate{
				{Value: "agent", Source: discovery.SourceOverride, Origin: "configured binary"},
				pathAgent, pathCursor,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, cursor.Candidates(tt.override, envOf(tt.env)))
		})
	}
}

func TestCandidatesNilGetenv(t *testing.T) {
	got := cursor.Candidates("/x", nil)
	assert.Equal(t, []discovery.Candidate{
		{Value: "/x", Source: discovery.SourceOverride, Origin: "configured binary"},
		{Value: "cursor-agent", Source: discovery.SourcePath},
		{Value: "cursor", Source: discovery.SourcePath},
	}, got)
}

func FuzzCandidates(f *testing.F) {
	f.Add("", "")
	f.Add("cursor-agent", "cursor")
	f.Add(`  C:\Users\A User\npm\cursor-agent.cmd `, "/opt/x")
	f.Add("agent", "agent")
	f.Fuzz(func(t *testing.T, override, envValue string) {
		got := cursor.Candidates(override, envOf(map[string]string{"CURSOR_AGENT_BIN": envValue}))
		seen := map[string]bool{}
		hasAgent, hasCursor := false, false
		for i, c := range got {
			assert.NotEmpty(t, c.Value)
			assert.False(t, seen[c.Value], "duplicate %q", c.Value)
			seen[c.Value] = true
			assert.False(t, c.Value == "agent" && c.Source == discovery.SourcePath, "bare agent is never a built-in candidate")
			if c.Source == discovery.SourceOverride {
				assert.Equal(t, 0, i)
			}
			hasAgent = hasAgent || c.Value == "cursor-agent"
			hasCursor = hasCursor || c.Value == "cursor"
		}
		assert.True(t, hasAgent && hasCursor, "both PATH names are always candidates")
		assert.LessOrEqual(t, len(got), 4)
		last := got[len(got)-1]
		assert.Contains(t, []string{"cursor-agent", "cursor"}, last.Value)
	})
}

func TestCheckCandidate(t *testing.T) {
	tests := []struct {
		value   string
		goos    string
		refused bool
	}{
		{"agent", "linux", true},
		{" agent ", "linux", true},
		{"Agent", "linux", false}, // POSIX names are case-sensitive
		{"/usr/local/bin/agent", "linux", false},
		{"cursor-agent", "linux", false},
		{"agent", "windows", true},
		{"Agent.EXE", "windows", true},
		{"agent.cmd", "windows", true},
		{"agent.ps1", "windows", true},
		{"agent. .", "windows", true},
		{"agent.exe.cmd", "windows", false},
		{"agent.js", "windows", false},
		{`C:\tools\agent.exe`, "windows", false},
		{"cursor-agent", "windows", false},
	}
	for _, tt := range tests {
		err := cursor.CheckCandidate(discovery.Candidate{Value: tt.value, Source: discovery.SourceOverride}, tt.goos)
		if !tt.refused {
			assert.NoError(t, err, "%q on %s", tt.value, tt.goos)
			continue
		}
		require.Error(t, err, "%q on %s", tt.value, tt.goos)
		assert.Equal(t, failure.Input, failure.KindOf(err))
		assert.Contains(t, err.Error(), "bare name agent is ambiguous")
	}
}

// FuzzCheckCandidate: only the bare name agent is refused, and a path is
// never refused.
func FuzzCheckCandidate(f *testing.F) {
	for _, v := range []string{"agent", "Agent.EXE", "agent.cmd", "/usr/bin/agent", `C:\agent.exe`, "cursor-agent", "agent.exe.cmd", "agent. ."} {
		f.Add(v, true)
		f.Add(v, false)
	}
	f.Fuzz(func(t *testing.T, value string, windows bool) {
		goos := "linux"
		if windows {
			goos = "windows"
		}
		err := cursor.CheckCandidate(discovery.Candidate{Value: value, Source: discovery.SourceOverride}, goos)
		if err == nil {
			return
		}
		assert.Equal(t, failure.Input, failure.KindOf(err))
		v := strings.TrimSpace(value)
		assert.NotContains(t, v, "/", "a path is never refused")
		assert.True(t, strings.HasPrefix(strings.ToLower(v), "agent"), "refused %q", value)
	})
}
