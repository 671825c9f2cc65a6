package agentsim_test

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// testServerRole is the role of the test binary as an MCP server over
// stdio (the official SDK's): tools search and stumble, whose answers say
// what reached the server, its argv and envNote from its environment.
const testServerRole = "mcp-test-server"

// envNote is an entry env variable the test server reports.
const envNote = "AGENTSIM_TEST_MCP_NOTE"

func mcpServerRole() testkit.Role {
	return testkit.Role{Name: testServerRole, Run: func(args []string) int {
		s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		schema := jsontext.Value(`{"type":"object"}`)
		s.AddTool(&mcp.Tool{Name: "search", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := fmt.Sprintf("input %s, argv %q, note %s", req.Params.Arguments, args, os.Getenv(envNote))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
		s.AddTool(&mcp.Tool{Name: "stumble", InputSchema: schema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no luck"}}, IsError: true}, nil
		})
		// It ends when its client closes its stdin.
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "mcp-test-server:", err)
		}
		return 0
	}}
}

// mcpToolCall is one mcpToolCall event of the stream.
type mcpToolCall struct {
	subtype string
	Args    jsontext.Value `json:"args"`
	Result  jsontext.Value `json:"result"`
}

func mcpToolCalls(t *testing.T, out string) []mcpToolCall {
	t.Helper()
	events, _ := decodeLines(t, out)
	var calls []mcpToolCall
	for _, e := range events {
		if e.Type != "tool_call" {
			continue
		}
		var tc struct {
			Call *mcpToolCall `json:"mcpToolCall"`
		}
		require.NoError(t, json.Unmarshal(e.ToolCall, &tc))
		if tc.Call != nil {
			tc.Call.subtype = e.Subtype
			calls = append(calls, *tc.Call)
		}
	}
	return calls
}

// TestMCPCall: the mcp-call scenario starts the workspace's MCP server
// with its entry, lists its tools, calls one and prints the server's own
// answer in Cursor's shape, then stops the server when the turn ends.
func TestMCPCall(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	entry := func() map[string]any {
		return map[string]any{"command": self, "args": []string{"--flag", "two words"},
			"env": map[string]string{testkit.RoleEnv: testServerRole, envNote: "from the entry"}}
	}
	tests := []struct {
		name    string
		approve bool
		servers map[string]any // the workspace's mcp.json mcpServers
		env     []string
		started string // the started call's args, "" when there is no call
		result  string // the completed call's result
		run     *agentsim.MCPRun
		stderr  string
	}{
		{name: "the first tool with the default input", approve: true, servers: map[string]any{"srv": entry()},
			started: `{"name":"srv-search","args":{"query":"hello"},"toolCallId":"toolu_mcp_1","providerIdentifier":"srv","toolName":"search"}`,
			result:  `{"success":{"content":[{"type":"text","text":"input {\"query\":\"hello\"}, argv [\"--flag\" \"two words\"], note from the entry"}],"isError":false}}`,
			run: &agentsim.MCPRun{Server: "srv", Args: []string{"--flag", "two words"}, EnvNames: []string{envNote, testkit.RoleEnv},
				Tools: []string{"search", "stumble"}, Tool: "search", Input: jsontext.Value(`{"query":"hello"}`),
				Result: `input {"query":"hello"}, argv ["--flag" "two words"], note from the entry`}},
		{name: "the named server, tool and input", approve: true, servers: map[string]any{"a": map[string]any{"command": "/nonexistent"}, "b": entry()},
			env:     []string{agentsim.EnvMCPServer + "=b", agentsim.EnvMCPTool + "=stumble", agentsim.EnvMCPArgs + `={"word":"x"}`},
			started: `{"name":"b-stumble","args":{"word":"x"},"toolCallId":"toolu_mcp_1","providerIdentifier":"b","toolName":"stumble"}`,
			result:  `{"success":{"content":[{"type":"text","text":"no luck"}],"isError":true}}`,
			run: &agentsim.MCPRun{Server: "b", Args: []string{"--flag", "two words"}, EnvNames: []string{envNote, testkit.RoleEnv},
				Tools: []string{"search", "stumble"}, Tool: "stumble", Input: jsontext.Value(`{"word":"x"}`), Result: "no luck", IsError: true}},
		{name: "not approved: no server starts", servers: map[string]any{"srv": entry()}},
		{name: "a tool the server does not list", approve: true, servers: map[string]any{"srv": entry()},
			env: []string{agentsim.EnvMCPTool + "=other"}, stderr: `does not list the tool "other"`,
			run: &agentsim.MCPRun{Server: "srv", Args: []string{"--flag", "two words"}, EnvNames: []string{envNote, testkit.RoleEnv},
				Tools: []string{"search", "stumble"}, Input: jsontext.Value(`{"query":"hello"}`),
				Error: `the MCP server "srv" does not list the tool "other"`}},
		{name: "a server that is not there", approve: true, servers: map[string]any{"srv": entry()},
			env: []string{agentsim.EnvMCPServer + "=gone"}, stderr: `no command for the MCP server "gone"`,
			run: &agentsim.MCPRun{Server: "gone", Args: []string{}, EnvNames: []string{}, Tools: []string{}, Error: `no command for the MCP server "gone" in .cursor/mcp.json`}},
		{name: "a command that cannot start", approve: true, servers: map[string]any{"srv": map[string]any{"command": filepath.Join(testkit.TempDir(t), "missing")}},
			stderr: `starting the MCP server "srv"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := testkit.TempDir(t)
			config, err := json.Marshal(map[string]any{"mcpServers": tt.servers})
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Join(ws, ".cursor"), 0o700))
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".cursor", "mcp.json"), config, 0o600))
			log := filepath.Join(testkit.TempDir(t), "mcp.jsonl")
			args := append(append([]string{}, printArgs...), "--workspace", ws)
			if tt.approve {
				args = append(args, "--approve-mcps")
			}
			env := append([]string{agentsim.Scenario(agentsim.ScenarioMCPCall), agentsim.EnvMCPLog + "=" + log}, tt.env...)
			p := startSim(t, env, "p", args...)
			code := p.waitExit()
			p.waitEOF()
			stdout, stderr := p.stdout(), p.stderrText()
			require.Equal(t, 0, code, stderr)
			assert.True(t, resultSeen(stdout), "the turn completes")
			assert.Contains(t, stderr, tt.stderr)
			calls := mcpToolCalls(t, stdout)
			if tt.started == "" {
				assert.Empty(t, calls)
			} else {
				require.Len(t, calls, 2)
				assert.Equal(t, "started", calls[0].subtype)
				assert.JSONEq(t, tt.started, string(calls[0].Args))
				assert.Nil(t, calls[0].Result)
				assert.Equal(t, "completed", calls[1].subtype)
				assert.Nil(t, calls[1].Args, "the completed call carries only its result, as Cursor's does")
				assert.JSONEq(t, tt.result, string(calls[1].Result))
			}

			runs, err := agentsim.ReadMCPRuns(log)
			if !tt.approve {
				assert.ErrorIs(t, err, os.ErrNotExist, "no server, no run")
				return
			}
			require.NoError(t, err)
			require.Len(t, runs, 1)
			got := runs[0]
			if tt.run == nil { // a command that cannot start: only its error is known
				assert.Contains(t, got.Error, tt.stderr)
				assert.Zero(t, got.PID)
				return
			}
			if len(tt.run.Tools) > 0 {
				assert.NotZero(t, got.PID, "the server ran")
				assert.Empty(t, got.StopError, "the server exits by itself once its stdin is closed")
				assert.Equal(t, self, got.Command)
			}
			got.PID, got.Command, got.StopError = 0, "", ""
			assert.Equal(t, *tt.run, got)
			p.w.RequireGone(10 * time.Second) // the server is gone with the turn
		})
	}
}
