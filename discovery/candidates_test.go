package discovery_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/discovery"
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
				{Value: "/opt/x/cursor-agent", Source: discovery.SourceOverride},
				{Value: "/usr/local/bin/cursor-agent", Source: discovery.SourceEnv},
				pathAgent, pathCursor,
			},
		},
		{
			name:     "override trimmed, never split, spaces kept",
			override: "  " + spaced + " \t\r\n",
			want: []discovery.Candidate{
				{Value: spaced, Source: discovery.SourceOverride},
				pathAgent, pathCursor,
			},
		},
		{
			name:     "quotes are kept verbatim (Resolve refuses them)",
			override: `"` + spaced + `"`,
			want: []discovery.Candidate{
				{Value: `"` + spaced + `"`, Source: discovery.SourceOverride},
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
				{Value: "cursor-agent", Source: discovery.SourceOverride},
				pathCursor,
			},
		},
		{
			name: "env cursor is the PATH candidate, tried once, at its position",
			env:  map[string]string{"CURSOR_AGENT_BIN": " cursor "},
			want: []discovery.Candidate{
				{Value: "cursor", Source: discovery.SourceEnv},
				pathAgent,
			},
		},
		{
			name:     "override equal to the environment value is tried once",
			override: "/opt/x/cursor-agent",
			env:      map[string]string{"CURSOR_AGENT_BIN": "/opt/x/cursor-agent"},
			want: []discovery.Candidate{
				{Value: "/opt/x/cursor-agent", Source: discovery.SourceOverride},
				pathAgent, pathCursor,
			},
		},
		{
			name:     "a configured agent stays the operator's choice (Resolve refuses it)",
			override: "agent",
			want: []discovery.Candidate{
				{Value: "agent", Source: discovery.SourceOverride},
				pathAgent, pathCursor,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, discovery.Candidates(tt.override, envOf(tt.env)))
		})
	}
}

func TestCandidatesNilGetenv(t *testing.T) {
	got := discovery.Candidates("/x", nil)
	assert.Equal(t, []discovery.Candidate{
		{Value: "/x", Source: discovery.SourceOverride},
		{Value: "cursor-agent", Source: discovery.SourcePath},
		{Value: "cursor", Source: discovery.SourcePath},
	}, got)
	assert.True(t, got[0].Configured())
	assert.False(t, got[1].Configured())
}

func FuzzCandidates(f *testing.F) {
	f.Add("", "")
	f.Add("cursor-agent", "cursor")
	f.Add(`  C:\Users\A User\npm\cursor-agent.cmd `, "/opt/x")
	f.Add("agent", "agent")
	f.Fuzz(func(t *testing.T, override, envValue string) {
		got := discovery.Candidates(override, envOf(map[string]string{"CURSOR_AGENT_BIN": envValue}))
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
