package claude_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/claude"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

func TestArgs(t *testing.T) {
	const head = "-p --output-format stream-json --verbose "
	tests := []struct {
		name string
		req  claude.Turn
		want string // joined with spaces; "" when refused
		kind failure.Kind
	}{
		{name: "the zero mode is plan", req: claude.Turn{Prompt: "secret"},
			want: head + "--permission-mode plan --tools Read,Grep,Glob,LS"},
		{name: "plan", req: claude.Turn{Mode: turn.ModePlan},
			want: head + "--permission-mode plan --tools Read,Grep,Glob,LS"},
		{name: "ask", req: claude.Turn{Mode: turn.ModeAsk},
			want: head + "--permission-mode default --tools Read,Grep,Glob,LS"},
		{name: "write", req: claude.Turn{Mode: turn.ModeWrite},
			want: head + "--permission-mode acceptEdits --tools Read,Grep,Glob,LS,Edit,MultiEdit,Write,NotebookEdit,Bash,TodoWrite --allowedTools Bash"},
		{name: "extra tools: built-ins in --tools, all approved", req: claude.Turn{Mode: turn.ModeAsk, Tools: []string{"WebFetch", "mcp__github", "mcp__db__query", "Read"}},
			want: head + "--permission-mode default --tools Read,Grep,Glob,LS,WebFetch --allowedTools WebFetch,mcp__github,mcp__db__query,Read"},
		{name: "write with extra tools", req: claude.Turn{Mode: turn.ModeWrite, Tools: []string{"Bash", "Task"}},
			want: head + "--permission-mode acceptEdits --tools Read,Grep,Glob,LS,Edit,MultiEdit,Write,NotebookEdit,Bash,TodoWrite,Task --allowedTools Bash,Task"},
		{name: "model and resume", req: claude.Turn{Model: "claude-opus-4-8[1m]", Resume: "43367082-969f-4ff0-ae35-0bfcf4c259a1"},
			want: head + "--permission-mode plan --tools Read,Grep,Glob,LS --model claude-opus-4-8[1m] --resume 43367082-969f-4ff0-ae35-0bfcf4c259a1"},
		{name: "unknown mode", req: claude.Turn{Mode: "yolo"}, kind: failure.Input},
		{name: "model starting with a dash", req: claude.Turn{Model: "--dangerously-skip-permissions"}, kind: failure.Input},
		{name: "model with a space", req: claude.Turn{Model: "a b"}, kind: failure.Input},
		{name: "model with a control character", req: claude.Turn{Model: "a\x01"}, kind: failure.Input},
		{name: "model too long", req: claude.Turn{Model: strings.Repeat("m", 257)}, kind: failure.Input},
		{name: "resume starting with a dash", req: claude.Turn{Resume: "-c"}, kind: failure.Input},
		{name: "resume with a newline", req: claude.Turn{Resume: "a\nb"}, kind: failure.Input},
		{name: "empty tool", req: claude.Turn{Tools: []string{""}}, kind: failure.Input},
		{name: "tool with a rule specifier", req: claude.Turn{Tools: []string{"Bash(git *)"}}, kind: failure.Input},
		{name: "tools joined by a comma", req: claude.Turn{Tools: []string{"Read,Bash"}}, kind: failure.Input},
		{name: "tool starting with a dash", req: claude.Turn{Tools: []string{"-Bash"}}, kind: failure.Input},
		{name: "tool too long", req: claude.Turn{Tools: []string{strings.Repeat("T", 129)}}, kind: failure.Input},
		{name: "mcp alone names no server", req: claude.Turn{Tools: []string{"mcp"}}, kind: failure.Input},
		{name: "mcp__ alone names no server", req: claude.Turn{Tools: []string{"mcp__"}}, kind: failure.Input},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, err := claude.Args(tt.req)
			if tt.kind != "" {
				require.Error(t, err)
				assert.Equal(t, tt.kind, failure.KindOf(err))
				assert.Nil(t, args)
				if tt.req.Model == "" && tt.req.Resume == "" {
					_, derr := claude.NewDecoder(tt.req)
					assert.Equal(t, tt.kind, failure.KindOf(derr), "the decoder refuses the modes and tools Args refuses")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, strings.Join(args, " "))
			assert.NotContains(t, args, "--dangerously-skip-permissions")
			if tt.req.Prompt != "" {
				assert.NotContains(t, strings.Join(args, " "), tt.req.Prompt, "the prompt travels on stdin only")
			}
		})
	}
}

func TestTurnDefaults(t *testing.T) {
	o := claude.TurnDefaults()
	assert.Positive(t, o.FirstLineTimeout)
	assert.Greater(t, o.IdleTimeout, o.FirstLineTimeout)
	assert.Positive(t, o.StopGrace)
	assert.Positive(t, o.ExitGrace)
	assert.Zero(t, o.TotalTimeout)
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		out  string
		want string
	}{
		{"2.1.197 (Claude Code)\n", "2.1.197"},
		{"2.1.197 (Claude Code)", "2.1.197"},
		{"1.0.0\n", "1.0.0"},
		{"Update available\n2.0.1-beta.3 (Claude Code)\r\n", "2.0.1-beta.3"},
		{"", ""},
		{"Claude Code\n", ""},
		{"2.1 (Claude Code)", ""},
		{"2.1.x (Claude Code)", ""},
		{"2.1.197 (Other)", ""},
		{"v2.1.197", ""},
		{"2.1.197-", ""},
		{"99999999999.1.1", ""},
		{"\xff\xfe garbage " + strings.Repeat("x", 500), ""},
	}
	for _, tt := range tests {
		got, err := claude.ParseVersion(tt.out)
		if tt.want == "" {
			require.Error(t, err, "%q", tt.out)
			assert.Equal(t, failure.Protocol, failure.KindOf(err))
			assert.Less(t, len(err.Error()), 200, "the excerpt is bounded")
			continue
		}
		require.NoError(t, err, "%q", tt.out)
		assert.Equal(t, tt.want, got)
	}
}

func TestClassifyMessage(t *testing.T) {
	tests := []struct {
		text string
		want failure.Kind
	}{
		// Recorded from 2.1.197 here.
		{"Not logged in · Please run /login", failure.Auth},
		{"No conversation found with session ID: 43367082-969f-4ff0-ae35-0bfcf4c259a1", failure.Input},
		{"--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons", failure.Setup},
		{"error: option '--permission-mode <mode>' argument 'bogus' is invalid. Allowed choices are acceptEdits, auto, bypassPermissions, default, dontAsk, plan.", failure.Setup},
		// The texts of the 2.1.197 binary.
		{"API Error: 401 Invalid API key · Please run /login", failure.Auth},
		{"Invalid API key · Fix external API key", failure.Auth},
		{"OAuth token revoked · Please run /login", failure.Auth},
		{"Your ANTHROPIC_API_KEY belongs to a disabled organization · Update or unset the environment variable", failure.Auth},
		{"Your organization has disabled API key authentication · Run /login to sign in with your claude.ai account", failure.Auth},
		{"Authentication error · This may be a temporary network issue, please try again", failure.Auth},
		{"Credit balance is too low", failure.Quota},
		{"You've hit your limit · resets 3pm (Europe/Paris)", failure.Quota},
		{"Claude AI usage limit reached|1760000000", failure.Quota},
		{"You've hit your monthly spend limit. /model to switch models.", failure.Quota},
		{"API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited", failure.RateLimited},
		{"API Error: Request rejected (429) · this may be a temporary capacity issue.", failure.RateLimited},
		{"API Error: Repeated 529 Overloaded errors", failure.RateLimited},
		{"Opus is experiencing high load, please use /model to switch to Sonnet", failure.RateLimited},
		{"API Error: Unable to connect to API (ECONNREFUSED)", failure.Network},
		{"API Error: Request timed out. Check your internet connection and proxy settings", failure.Network},
		{"Unable to connect to API: SSL certificate verification failed. Check your proxy or corporate SSL certificates", failure.Network},
		{"407 Proxy Authentication Required", failure.Network},
		{"There's an issue with the selected model (nosuch). It may not exist or you may not have access to it. Run /model to pick a different model.", failure.Input},
		{"Prompt is too long", failure.Input},
		{"error: unknown option '--tools'", failure.Setup},
		{"\x1b[31mNot logged in\x1b[0m", failure.Auth},
		{"Reached maximum number of turns (1)", failure.Unclassified},
		{"Execution error", failure.Unclassified},
		{"", failure.Unclassified},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, claude.ClassifyMessage(tt.text), "%q", tt.text)
	}
}
