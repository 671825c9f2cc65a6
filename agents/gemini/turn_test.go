package gemini_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

func TestArgs(t *testing.T) {
	head := []string{"--output-format", "stream-json", "--skip-trust", "--approval-mode"}
	with := func(rest ...string) []string { return append(append([]string{}, head...), rest...) }
	const id = "5f0c7b7e-2a51-4f3e-9d0e-7f1f4b2d9a10"
	tests := []struct {
		name string
		req  gemini.Turn
		want []string
	}{
		{"default is plan", gemini.Turn{}, with("plan", "-p", "")},
		{"plan", gemini.Turn{Mode: turn.ModePlan}, with("plan", "-p", "")},
		{"ask", gemini.Turn{Mode: turn.ModeAsk}, with("default", "-p", "")},
		{"write", gemini.Turn{Mode: turn.ModeWrite}, with("yolo", "-p", "")},
		{"model", gemini.Turn{Model: "gemini-2.5-pro"}, with("plan", "--model", "gemini-2.5-pro", "-p", "")},
		{"resume", gemini.Turn{Mode: turn.ModeAsk, Resume: id}, with("default", "--resume", id, "-p", "")},
		{"resume and model", gemini.Turn{Model: "m", Resume: "abc_1"}, with("plan", "--model", "m", "--resume", "abc_1", "-p", "")},
		{"tools do not change argv", gemini.Turn{Tools: []string{"run_shell_command", "mcp", "mcp_github_x.y:z"}}, with("plan", "-p", "")},
		{"prompt never in argv", gemini.Turn{Prompt: "SECRET"}, with("plan", "-p", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gemini.Args(tt.req)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestArgsRefusals(t *testing.T) {
	tests := []struct {
		name string
		req  gemini.Turn
		want string
	}{
		{"unknown mode", gemini.Turn{Mode: "yolo"}, "unknown mode"},
		{"model option", gemini.Turn{Model: "--yolo"}, "starts with '-'"},
		{"model space", gemini.Turn{Model: "a b"}, "holds"},
		{"model control", gemini.Turn{Model: "a\x00"}, "holds"},
		{"model too long", gemini.Turn{Model: strings.Repeat("m", 257)}, "longer than 256"},
		{"resume option", gemini.Turn{Resume: "-r"}, "starts with '-'"},
		{"resume latest", gemini.Turn{Resume: "latest"}, "newest session"},
		{"resume index", gemini.Turn{Resume: "5"}, "index"},
		{"resume odd char", gemini.Turn{Resume: "a/b"}, "holds '/'"},
		{"resume newline", gemini.Turn{Resume: "a\nb"}, "holds"},
		{"resume too long", gemini.Turn{Resume: strings.Repeat("a", 300)}, "longer than 256"},
		{"tool empty", gemini.Turn{Tools: []string{""}}, "1 to 64"},
		{"tool bad char", gemini.Turn{Tools: []string{"read file"}}, "holds"},
		{"tool option", gemini.Turn{Tools: []string{"a,b"}}, "holds ','"},
		{"tool too long", gemini.Turn{Tools: []string{strings.Repeat("t", 65)}}, "1 to 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gemini.Args(tt.req)
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.Contains(t, err.Error(), tt.want)
			_, derr := gemini.NewDecoder(tt.req)
			if strings.HasPrefix(tt.name, "tool") || tt.name == "unknown mode" {
				require.Error(t, derr, "NewDecoder refuses what Args refuses about modes and tools")
				assert.Equal(t, failure.Input, failure.KindOf(derr))
			}
		})
	}
}

func TestTurnDefaults(t *testing.T) {
	o := gemini.TurnDefaults()
	assert.Positive(t, o.FirstLineTimeout)
	assert.Positive(t, o.IdleTimeout)
	assert.Positive(t, o.StopGrace)
	assert.Positive(t, o.ExitGrace)
	assert.Equal(t, "gemini", gemini.Name)
	assert.Equal(t, "google", gemini.Provider)
	assert.Equal(t, "gemini", gemini.Command)
	assert.Equal(t, "CURSORKIT_GEMINI_BIN", gemini.EnvBinary)
}
