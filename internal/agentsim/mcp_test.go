package agentsim_test

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// mcpCall is what one mcpToolCall event says.
type mcpCall struct {
	subtype string
	args    map[string]any // nil when the event has none
	result  bool
}

func mcpCalls(t *testing.T, out string) []mcpCall {
	t.Helper()
	events, _ := decodeLines(t, out)
	var calls []mcpCall
	for _, e := range events {
		if e.Type != "tool_call" {
			continue
		}
		var tc map[string]struct {
			Args   map[string]any `json:"args"`
			Result jsontext.Value `json:"result"`
		}
		require.NoError(t, json.Unmarshal(e.ToolCall, &tc))
		if c, ok := tc["mcpToolCall"]; ok {
			calls = append(calls, mcpCall{subtype: e.Subtype, args: c.Args, result: c.Result != nil})
		}
	}
	return calls
}

// TestMCPTool: with --approve-mcps the mcp-tool scenario calls a server's
// tool in Cursor's shape (the server as providerIdentifier, a completed
// event with only the result); without it, or with no server, no MCP call.
func TestMCPTool(t *testing.T) {
	const config = `{"mcpServers":{"cursorkit-tools-9":{"command":"x"},"other":{"command":"y"}}}`
	tests := []struct {
		name    string
		approve bool
		server  string // EnvMCPServer
		config  string // the workspace's .cursor/mcp.json, "" for none
		want    string // the server called, "" for no call
	}{
		{name: "the named server", approve: true, server: "github", want: "github"},
		{name: "the first server of the project's mcp.json", approve: true, config: config, want: "cursorkit-tools-9"},
		{name: "the named server wins over mcp.json", approve: true, server: "github", config: config, want: "github"},
		{name: "not approved: the project's servers are not loaded", config: config},
		{name: "not approved, even when named", server: "github"},
		{name: "no server anywhere", approve: true},
		{name: "an mcp.json without servers", approve: true, config: `{"mcpServers":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := testkit.TempDir(t)
			if tt.config != "" {
				require.NoError(t, os.MkdirAll(filepath.Join(ws, ".cursor"), 0o700))
				require.NoError(t, os.WriteFile(filepath.Join(ws, ".cursor", "mcp.json"), []byte(tt.config), 0o600))
			}
			record := filepath.Join(testkit.TempDir(t), "record.jsonl")
			env := map[string]string{agentsim.EnvScenario: agentsim.ScenarioMCPTool, agentsim.EnvMCPServer: tt.server, agentsim.EnvRecord: record}
			args := append(append([]string{}, printArgs...), "--workspace", ws)
			if tt.approve {
				args = append(args, "--approve-mcps")
			}
			stdout, stderr, code := runInProcess(t, env, "p", args...)
			require.Equal(t, 0, code, stderr)
			assert.True(t, resultSeen(stdout), "the turn completes")
			calls := mcpCalls(t, stdout)
			if tt.want == "" {
				assert.Empty(t, calls)
			} else {
				require.Len(t, calls, 2)
				assert.Equal(t, "started", calls[0].subtype)
				assert.Equal(t, map[string]any{"name": tt.want + "-" + agentsim.MCPToolName, "args": map[string]any{"query": "hello"},
					"toolCallId": agentsim.CallIDMCP, "providerIdentifier": tt.want, "toolName": agentsim.MCPToolName}, calls[0].args)
				assert.False(t, calls[0].result)
				assert.Equal(t, "completed", calls[1].subtype)
				assert.Nil(t, calls[1].args, "the completed call carries only its result, as Cursor's does")
				assert.True(t, calls[1].result)
			}

			records, err := agentsim.ReadRecords(record)
			require.NoError(t, err)
			require.Len(t, records, 1)
			assert.Equal(t, tt.approve, records[0].ApproveMCPs)
			if tt.config == "" {
				assert.Nil(t, records[0].ProjectMCPConfig)
			} else {
				require.NotNil(t, records[0].ProjectMCPConfig)
				assert.Equal(t, tt.config, *records[0].ProjectMCPConfig, "the record holds the workspace's mcp.json as the turn saw it")
			}
		})
	}
}
