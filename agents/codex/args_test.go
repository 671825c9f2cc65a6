package codex_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/codex"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

func TestArgs(t *testing.T) {
	const id = "01a233f7-8906-78b1-976c-e96fd9301087"
	tests := []struct {
		name string
		req  codex.Turn
		want string
		kind failure.Kind
	}{
		{name: "plan is the default", req: codex.Turn{Prompt: "secret"}, want: "exec --json --color never --sandbox read-only -"},
		{name: "plan", req: codex.Turn{Mode: turn.ModePlan}, want: "exec --json --color never --sandbox read-only -"},
		{name: "ask", req: codex.Turn{Mode: turn.ModeAsk}, want: "exec --json --color never --sandbox read-only -"},
		{name: "write", req: codex.Turn{Mode: turn.ModeWrite}, want: "exec --json --color never --sandbox workspace-write -"},
		{name: "model", req: codex.Turn{Mode: turn.ModeWrite, Model: "gpt-5.1-codex"}, want: "exec --json --color never --sandbox workspace-write --model gpt-5.1-codex -"},
		{name: "resume: the options come before the subcommand", req: codex.Turn{Model: "o3", Resume: id},
			want: "exec --json --color never --sandbox read-only --model o3 resume " + id + " -"},
		{name: "tools", req: codex.Turn{Tools: []string{"mcp", "mcp:docs", "file_change", "collab", "shell", "web_search"}}, want: "exec --json --color never --sandbox read-only -"},
		{name: "unknown mode", req: codex.Turn{Mode: "yolo"}, kind: failure.Input},
		{name: "model starting with -", req: codex.Turn{Model: "--dangerously-bypass-approvals-and-sandbox"}, kind: failure.Input},
		{name: "model with a space", req: codex.Turn{Model: "gpt 5"}, kind: failure.Input},
		{name: "model with a control character", req: codex.Turn{Model: "gpt\x00"}, kind: failure.Input},
		{name: "model too long", req: codex.Turn{Model: strings.Repeat("m", 257)}, kind: failure.Input},
		{name: "session starting with -", req: codex.Turn{Resume: "--last"}, kind: failure.Input},
		{name: "session with a newline", req: codex.Turn{Resume: "a\nb"}, kind: failure.Input},
		{name: "session too long", req: codex.Turn{Resume: strings.Repeat("a", 300)}, kind: failure.Input},
		{name: "unknown tool", req: codex.Turn{Tools: []string{"read"}}, kind: failure.Input},
		{name: "empty MCP server", req: codex.Turn{Tools: []string{"mcp:"}}, kind: failure.Input},
		{name: "MCP server starting with -", req: codex.Turn{Tools: []string{"mcp:-x"}}, kind: failure.Input},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, err := codex.Args(tt.req)
			if tt.kind != "" {
				require.Error(t, err)
				assert.Equal(t, tt.kind, failure.KindOf(err))
				assert.Nil(t, args)
				_, derr := codex.NewDecoder(tt.req)
				if tt.req.Model == "" && tt.req.Resume == "" {
					assert.Equal(t, tt.kind, failure.KindOf(derr), "NewDecoder refuses what Args refuses")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, strings.Join(args, " "))
			assert.NotContains(t, args, "--skip-git-repo-check")
			for _, a := range args {
				assert.NotContains(t, a, "secret", "the prompt travels on stdin only")
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		out, want string
	}{
		{"codex-cli 0.171.0\n", "0.171.0"},
		{"WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir \"/tmp\"\ncodex-cli 0.171.0\n", "0.171.0"},
		{"codex-cli 0.172.0-alpha.3\r\n", "0.172.0-alpha.3"},
		{"codex 1.2.3", "1.2.3"},
		{"codex-cli\t0.171.0  \n", "0.171.0"},
		{"codex-cli v0.171.0", "0.171.0"},
		{"codex-cli 0.171.0 extra", ""},
		{"", ""},
		{"codex-cli", ""},
		{"2.1.197 (Claude Code)", ""},
		{"codex-cli 0.171", ""},
		{"error: unexpected argument '--version'\x1b[0m", ""},
	}
	for _, tt := range tests {
		t.Run(tt.out, func(t *testing.T) {
			v, err := codex.ParseVersion(tt.out)
			if tt.want == "" {
				require.Error(t, err)
				assert.Equal(t, failure.Protocol, failure.KindOf(err))
				assert.Less(t, len(err.Error()), 300)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, v)
		})
	}
}

func TestTurnDefaults(t *testing.T) {
	o := codex.TurnDefaults()
	assert.Positive(t, o.FirstLineTimeout)
	assert.Positive(t, o.IdleTimeout)
	assert.Positive(t, o.StopGrace)
	assert.Positive(t, o.ExitGrace)
}
