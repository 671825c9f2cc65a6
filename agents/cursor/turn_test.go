package cursor

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/turn"
)

func TestAllowlists(t *testing.T) {
	readOnly := []string{"glob", "grep", "ls", "read"}
	write := []string{"delete", "edit", "glob", "grep", "ls", "read", "readTodos", "shell", "updateTodos", "write"}
	tests := []struct {
		mode  turn.Mode
		tools []string
		want  []string
	}{
		{"", nil, readOnly},
		{turn.ModePlan, nil, readOnly},
		{turn.ModeAsk, nil, readOnly},
		{turn.ModeWrite, nil, write},
		{turn.ModeAsk, []string{"mcp", "getMcpTools", "read"}, []string{"getMcpTools", "glob", "grep", "ls", "mcp", "read"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			a, err := newAllowlist(Turn{Mode: tt.mode, Tools: tt.tools})
			require.NoError(t, err)
			assert.Equal(t, tt.want, a.tools)
			for _, name := range tt.want {
				assert.Nil(t, a.check(name, nil), name)
			}
			for _, name := range []string{"mcp", "getMcpTools", "webFetch", "Read", "READ", "", "semSearch"} {
				if !slices.Contains(tt.want, name) {
					err := a.check(name, nil)
					require.NotNil(t, err, name)
					assert.Equal(t, failure.Policy, err.Kind, name)
				}
			}
		})
	}
	var zero allowlist
	assert.NotNil(t, zero.check("read", nil), "the zero allowlist allows nothing")
}

func TestNewDecoderRefuses(t *testing.T) {
	tests := []struct {
		req Turn
		msg string
	}{
		{Turn{Mode: "yolo"}, `unknown mode "yolo"`},
		{Turn{Mode: "Plan"}, `unknown mode "Plan"`},
		{Turn{Mode: turn.ModeWrite, Tools: []string{"mcp", "bad name"}}, `' ' at byte 3`},
		{Turn{Tools: []string{""}}, "1 to 64 characters"},
		{Turn{Tools: []string{"a;b"}}, `';' at byte 1`},
		{Turn{Tools: []string{"é"}}, `'\xc3' at byte 0`},
		{Turn{Tools: []string{string(make([]byte, 65))}}, "1 to 64 characters"},
		{Turn{MCPServers: []string{""}}, "MCP server key \"\" must be 1 to 128 characters"},
		{Turn{MCPServers: []string{strings.Repeat("k", 129)}}, "1 to 128 characters"},
		{Turn{MCPServers: []string{"ok", "a.b"}}, `'.' at byte 1`},
		{Turn{MCPServers: []string{"-x y"}}, `' ' at byte 2`},
		{Turn{MCPServers: []string{"gh/"}}, `'/' at byte 2`},
		{Turn{MCPServers: []string{"é"}}, `'\xc3' at byte 0`},
		{Turn{Mode: turn.ModeAsk, Sandboxed: true, MCPServers: []string{"cursorkit-tools-1"}}, "a sandboxed turn approves no MCP server"},
		{Turn{Mode: turn.ModeWrite, Sandboxed: true, MCPServers: []string{"x"}}, "a sandboxed turn approves no MCP server"},
	}
	for _, tt := range tests {
		_, err := NewDecoder(tt.req)
		require.Error(t, err)
		assert.Equal(t, failure.Input, failure.KindOf(err))
		assert.Contains(t, err.Error(), tt.msg)
		_, err = Args(tt.req)
		assert.Equal(t, failure.Input, failure.KindOf(err), "Args refuses what NewDecoder refuses")
	}
	for _, ok := range []Turn{{}, {Mode: turn.ModeAsk, Tools: []string{"web_fetch", "semantic-search", "getMcpTools"}},
		{MCPServers: []string{"cursorkit-tools-0b8e6c2a", "a_B-9"}}} {
		_, err := NewDecoder(ok)
		assert.NoError(t, err)
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		want turn.Mode
		ok   bool
	}{
		{"", turn.ModePlan, true},
		{"plan", turn.ModePlan, true},
		{"ask", turn.ModeAsk, true},
		{"write", turn.ModeWrite, true},
		{"coding", turn.ModeWrite, true},
		{"Plan", "", false},
		{"agent", "", false},
		{"default", "", false},
	}
	for _, tt := range tests {
		got, err := turn.ParseMode(tt.in)
		if tt.ok {
			require.NoError(t, err, tt.in)
			assert.Equal(t, tt.want, got)
		} else {
			assert.Equal(t, failure.Input, failure.KindOf(err), tt.in)
		}
	}
}

func TestArgs(t *testing.T) {
	tests := []struct {
		name string
		req  Turn
		want []string
		err  string
	}{
		{name: "unset mode is plan, never --force", req: Turn{},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust"}},
		{name: "plan", req: Turn{Mode: turn.ModePlan},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust"}},
		{name: "ask with a model", req: Turn{Mode: turn.ModeAsk, Model: "gpt-5"},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "ask", "--trust", "--model", "gpt-5"}},
		{name: "write resumes", req: Turn{Mode: turn.ModeWrite, Resume: "abc-123"},
			want: []string{"--print", "--output-format", "stream-json", "--force", "--trust", "--resume", "abc-123"}},
		{name: "partial output", req: Turn{Mode: turn.ModeWrite, PartialOutput: true, Model: "sonnet-4.5", Resume: "s"},
			want: []string{"--print", "--output-format", "stream-json", "--stream-partial-output", "--force", "--trust", "--model", "sonnet-4.5", "--resume", "s"}},
		{name: "a bracketed model passes through", req: Turn{Model: "claude-4.5[thinking=true]"},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust", "--model", "claude-4.5[thinking=true]"}},
		{name: "the prompt and the tools are not argv", req: Turn{Prompt: "--force; rm -rf /", Tools: []string{"mcp"}},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust"}},
		{name: "MCP servers are approved, in write", req: Turn{Mode: turn.ModeWrite, MCPServers: []string{"cursorkit-tools-1"}, Model: "gpt-5"},
			want: []string{"--print", "--output-format", "stream-json", "--force", "--trust", "--approve-mcps", "--model", "gpt-5"}},
		{name: "MCP servers are approved, in plan", req: Turn{MCPServers: []string{"a", "b"}},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust", "--approve-mcps"}},
		{name: "MCP servers are approved, in ask", req: Turn{Mode: turn.ModeAsk, MCPServers: []string{"a"}, Resume: "s"},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "ask", "--trust", "--approve-mcps", "--resume", "s"}},
		{name: "no MCP servers, no approval, even with mcp in Tools", req: Turn{Mode: turn.ModeWrite, Tools: []string{"mcp"}},
			want: []string{"--print", "--output-format", "stream-json", "--force", "--trust"}},
		{name: "an empty MCP server list approves nothing", req: Turn{MCPServers: []string{}},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust"}},
		{name: "a bad MCP server key", req: Turn{MCPServers: []string{"x=y"}}, err: "MCP server key"},
		{name: "a key is never argv", req: Turn{MCPServers: []string{"--force"}},
			want: []string{"--print", "--output-format", "stream-json", "--mode", "plan", "--trust", "--approve-mcps"}},
		{name: "an MCP server key like an option is refused", req: Turn{MCPServers: []string{"a b"}}, err: `' ' at byte 1`},
		{name: "sandboxed with MCP servers", req: Turn{Mode: turn.ModeWrite, Sandboxed: true, MCPServers: []string{"a"}}, err: "approves no MCP server"},
		{name: "unknown mode", req: Turn{Mode: "yolo"}, err: "unknown mode"},
		{name: "auto model", req: Turn{Model: "auto"}, err: "routes to a model no event reports"},
		{name: "Default model", req: Turn{Model: "Default"}, err: "is refused"},
		{name: "model like an option", req: Turn{Model: "--force"}, err: "starts with '-'"},
		{name: "model with a space", req: Turn{Model: "gpt 5"}, err: "' ' at byte 3"},
		{name: "model too long", req: Turn{Model: string(make([]byte, 257))}, err: "longer than 256 bytes"},
		{name: "resume with a newline", req: Turn{Resume: "abc\n--force"}, err: `'\n' at byte 3`},
		{name: "resume like an option", req: Turn{Resume: "-x"}, err: "starts with '-'"},
		{name: "resume with DEL", req: Turn{Resume: "a\x7f"}, err: `'\x7f' at byte 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Args(tt.req)
			if tt.err != "" {
				require.Error(t, err)
				assert.Equal(t, failure.Input, failure.KindOf(err))
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			if tt.req.Mode != turn.ModeWrite {
				assert.NotContains(t, got, "--force")
			}
			assert.Equal(t, len(tt.req.MCPServers) > 0, slices.Contains(got, "--approve-mcps"),
				"--approve-mcps exactly when MCP servers are named")
			// Cursor's Windows install ships cursor-agent.ps1: every turn's
			// argv must reach it through PowerShell's -File unchanged.
			ps1 := discovery.Resolution{Path: `C:\Users\A User\AppData\Local\cursor-agent\cursor-agent.ps1`, Kind: discovery.PowerShell}
			plan, err := shim.Build(ps1, got, shim.Options{GOOS: "windows", SystemRoot: `C:\Windows`})
			require.NoError(t, err, "a .ps1 cursor-agent must be launchable with this turn")
			assert.Equal(t, got, plan.Args[len(plan.Args)-len(got):])
		})
	}
}

func TestClassifyMessage(t *testing.T) {
	tests := []struct {
		text string
		want failure.Kind
	}{
		{"You've hit your usage limit for Claude. Switch models or upgrade.", failure.Quota},
		{"Monthly spend limit reached", failure.Quota},
		{"quota exceeded", failure.Quota},
		{"Rate limit exceeded. Try again in 20s.", failure.RateLimited},
		{"429 Too Many Requests", failure.RateLimited},
		{"Authentication required. Please run cursor-agent login.", failure.Auth},
		{"Error: Not logged in", failure.Auth},
		{"401 Unauthorized", failure.Auth},
		{"Invalid API key provided", failure.Auth},
		// docs/contract.md, "Agent messages": the keychain, the IDE and the
		// network are their own causes wherever the agent says so.
		{"Error: Your macOS login keychain is locked.\nRun security unlock-keychain and try again.", failure.Auth},
		{"Error: No Cursor IDE installation found. Use 'cursor agent' or 'agent' to run the agent.", failure.Setup},
		{"Connection error: getaddrinfo ENOTFOUND api2.cursor.sh", failure.Network},
		{"Error: connect ECONNREFUSED 127.0.0.1:443", failure.Network},
		{"Error: read ECONNRESET", failure.Network},
		{"Error: connect ETIMEDOUT 104.18.2.3:443", failure.Network},
		{"Error: unable to get local issuer certificate", failure.Network},
		{"Error: self-signed certificate in certificate chain", failure.Network},
		{"407 Proxy Authentication Required", failure.Network},
		{"Authentication failed: getaddrinfo ENOTFOUND api2.cursor.sh", failure.Network},
		{"the catalog index is missing", failure.Unclassified},
		{"", failure.Unclassified},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ClassifyMessage(tt.text), tt.text)
	}
}
