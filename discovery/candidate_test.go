package discovery_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/discovery"
)

func TestCandidates(t *testing.T) {
	env := map[string]string{"TOOL_BIN": `  C:\Program Files\tool\tool.exe `, "EMPTY_BIN": "  "}
	getenv := func(k string) string { return env[k] }
	override := func(v string) discovery.Candidate {
		return discovery.Candidate{Value: v, Source: discovery.SourceOverride, Origin: "configured binary"}
	}
	fromEnv := func(name, v string) discovery.Candidate {
		return discovery.Candidate{Value: v, Source: discovery.SourceEnv, Origin: name}
	}
	onPath := func(v string) discovery.Candidate { return discovery.Candidate{Value: v, Source: discovery.SourcePath} }
	tests := []struct {
		name     string
		override string
		envName  string
		getenv   func(string) string
		names    []string
		want     []discovery.Candidate
	}{
		{name: "override, variable, then names, in order", override: "/opt/tool", envName: "TOOL_BIN", getenv: getenv, names: []string{"tool", "tool2"},
			want: []discovery.Candidate{override("/opt/tool"), fromEnv("TOOL_BIN", `C:\Program Files\tool\tool.exe`), onPath("tool"), onPath("tool2")}},
		{name: "empty and blank values are dropped", override: " ", envName: "EMPTY_BIN", getenv: getenv, names: []string{"tool", ""},
			want: []discovery.Candidate{onPath("tool")}},
		{name: "no environment", override: "", envName: "TOOL_BIN", getenv: nil, names: []string{"tool"},
			want: []discovery.Candidate{onPath("tool")}},
		{name: "a configured bare name is that candidate, once, where configured", override: " tool ", envName: "TOOL_BIN", getenv: nil, names: []string{"tool2", "tool"},
			want: []discovery.Candidate{override("tool"), onPath("tool2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, discovery.Candidates(tt.override, tt.envName, tt.getenv, tt.names...))
		})
	}
}
