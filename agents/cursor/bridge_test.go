package cursor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// bridgeKey is the key a bridge is staged under in .cursor/mcp.json (an
// mcpstage lease's key).
const bridgeKey = "cursorkit-tools-0b8e6c2a-41f7-4c8e-9d1e-5a2f3b4c6d7e"

// testBridge is a bridge publishing lookup_word and spell, staged under
// bridgeKey.
func testBridge() *mcpbridge.Server {
	return &mcpbridge.Server{Name: bridgeKey, Command: "/opt/app/bin/app", Args: []string{"__cursorkit-mcp-bridge"},
		Env:   map[string]string{mcpbridge.EnvSession: "/tmp/cursorkit-mcp-1/session.json"},
		Tools: []string{"fn_lookup_word", "fn_spell"}, ConfigFile: "/tmp/cursorkit-mcp-1/mcp.json", Dir: "/tmp/cursorkit-mcp-1"}
}

// Cursor's lines of an MCP call, as public parsers of its stream record
// them (docs/notes/mcp-bridge.md, "Cursor CLI"): the started call names
// the server and the tool, the completed one carries only its result.
func bridgeStarted(server, tool, input string) string {
	return `{"type":"tool_call","subtype":"started","call_id":"toolu_b1","tool_call":{"mcpToolCall":{"args":{"name":"` + server + `-` + tool +
		`","args":` + input + `,"toolCallId":"toolu_b1","providerIdentifier":"` + server + `","toolName":"` + tool +
		`"}}},"model_call_id":"mc","session_id":"abc","timestamp_ms":2}`
}

func bridgeCompleted(result string) string {
	return `{"type":"tool_call","subtype":"completed","call_id":"toolu_b1","tool_call":{"mcpToolCall":{"result":` + result +
		`}},"model_call_id":"mc","session_id":"abc","timestamp_ms":3}`
}

const bridgeSuccess = `{"success":{"content":[{"type":"text","text":"ossify: to turn into bone"}],"isError":false}}`

func TestBridgeArgs(t *testing.T) {
	tests := []struct {
		name string
		req  Turn
		want string
	}{
		{name: "plan", req: Turn{Bridge: testBridge()}, want: "--print --output-format stream-json --mode plan --trust --approve-mcps"},
		{name: "write", req: Turn{Mode: turn.ModeWrite, Bridge: testBridge()}, want: "--print --output-format stream-json --force --trust --approve-mcps"},
		{name: "with MCP servers: approved once", req: Turn{Mode: turn.ModeAsk, Bridge: testBridge(), MCPServers: []string{"cursorkit-tools-2"}},
			want: "--print --output-format stream-json --mode ask --trust --approve-mcps"},
		{name: "the bridge's key in MCP servers too", req: Turn{Bridge: testBridge(), MCPServers: []string{bridgeKey}},
			want: "--print --output-format stream-json --mode plan --trust --approve-mcps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, err := Args(tt.req)
			require.NoError(t, err)
			assert.Equal(t, tt.want, strings.Join(args, " "))
			joined := strings.Join(args, " ")
			assert.NotContains(t, joined, "session.json", "nothing of the bridge on argv: it is staged")
			assert.NotContains(t, joined, "/opt/app")
			_, err = NewDecoder(tt.req)
			assert.NoError(t, err)
		})
	}
}

func TestBridgeRefused(t *testing.T) {
	tests := []struct {
		name   string
		req    Turn
		change func(*mcpbridge.Server)
		msg    string
	}{
		{name: "no key", change: func(s *mcpbridge.Server) { s.Name = "" }, msg: "tool bridge's MCP server key"},
		{name: "a key Cursor cannot name", change: func(s *mcpbridge.Server) { s.Name = "cursor kit" }, msg: `' ' at byte 6`},
		{name: "no tools", change: func(s *mcpbridge.Server) { s.Tools = nil }, msg: "publishes no tool"},
		{name: "a tool without the prefix", change: func(s *mcpbridge.Server) { s.Tools = []string{"lookup_word"} }, msg: `does not start with fn_`},
		{name: "the prefix alone", change: func(s *mcpbridge.Server) { s.Tools = []string{"fn_"} }, msg: `does not start with fn_`},
		{name: "a tool name with a comma", change: func(s *mcpbridge.Server) { s.Tools = []string{"fn_a,read"} }, msg: `',' at byte 4`},
		{name: "sandboxed", req: Turn{Mode: turn.ModeAsk, Sandboxed: true}, msg: "a sandboxed turn approves no MCP server, the tool bridge's included"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Bridge = testBridge()
			if tt.change != nil {
				tt.change(tt.req.Bridge)
			}
			_, err := NewDecoder(tt.req)
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.Contains(t, err.Error(), tt.msg)
			_, err = Args(tt.req)
			assert.Equal(t, failure.Input, failure.KindOf(err), "Args refuses what NewDecoder refuses")
		})
	}
}

// toolEvents are the tool events among evs.
func toolEvents(evs []event.Event) []event.Event {
	var tools []event.Event
	for _, e := range evs {
		if e.Type == event.TypeToolStarted || e.Type == event.TypeToolCompleted {
			tools = append(tools, e)
		}
	}
	return tools
}

// TestBridgeEvents: a bridged call is the tool's own name, its input and
// its text, started and completed; another server's call stays Cursor's.
func TestBridgeEvents(t *testing.T) {
	input := `{"word":"ossify"}`
	tests := []struct {
		name  string
		req   Turn
		lines []string
		want  []event.Tool // started, completed
	}{
		{name: "a published tool", req: Turn{Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey, "fn_lookup_word", input), bridgeCompleted(bridgeSuccess)},
			want: []event.Tool{{CallID: "toolu_b1", Name: "lookup_word", Args: []byte(input)},
				{CallID: "toolu_b1", Name: "lookup_word", Args: []byte(input), Status: "success", Result: []byte(`"ossify: to turn into bone"`)}}},
		{name: "text blocks joined, other blocks dropped", req: Turn{Mode: turn.ModeWrite, Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey, "fn_spell", `{}`), bridgeCompleted(`{"success":{"content":[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}],"isError":false}}`)},
			want: []event.Tool{{CallID: "toolu_b1", Name: "spell", Args: []byte(`{}`)},
				{CallID: "toolu_b1", Name: "spell", Args: []byte(`{}`), Status: "success", Result: []byte(`"a\nb"`)}}},
		{name: "a tool error is a failure with its message", req: Turn{Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey, "fn_lookup_word", input), bridgeCompleted(`{"success":{"content":[{"type":"text","text":"no such word"}],"isError":true}}`)},
			want: []event.Tool{{CallID: "toolu_b1", Name: "lookup_word", Args: []byte(input)},
				{CallID: "toolu_b1", Name: "lookup_word", Args: []byte(input), Status: "failure", Result: []byte(`"no such word"`)}}},
		{name: "a rejected call keeps Cursor's result", req: Turn{Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey, "fn_lookup_word", input), bridgeCompleted(`{"rejected":{"reason":"not approved"}}`)},
			want: []event.Tool{{CallID: "toolu_b1", Name: "lookup_word", Args: []byte(input)},
				{CallID: "toolu_b1", Name: "lookup_word", Args: []byte(input), Status: "rejected", Result: []byte(`{"reason":"not approved"}`)}}},
		{name: "a result that is not MCP content is kept as sent", req: Turn{Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey, "fn_lookup_word", input), bridgeCompleted(`{"success":{"odd":1}}`)},
			want: []event.Tool{{CallID: "toolu_b1", Name: "lookup_word", Args: []byte(input)},
				{CallID: "toolu_b1", Name: "lookup_word", Args: []byte(input), Status: "success", Result: []byte(`{"odd":1}`)}}},
		{name: "a call without input has no args", req: Turn{Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey, "fn_spell", `null`)},
			want:  []event.Tool{{CallID: "toolu_b1", Name: "spell"}}},
		{name: "another allowed server's call stays an mcp call", req: Turn{Bridge: testBridge(), MCPServers: []string{"github"}},
			lines: []string{bridgeStarted("github", "fn_lookup_word", input)},
			want: []event.Tool{{CallID: "toolu_b1", Name: "mcp", Args: []byte(`{"name":"github-fn_lookup_word","args":{"word":"ossify"},` +
				`"toolCallId":"toolu_b1","providerIdentifier":"github","toolName":"fn_lookup_word"}`)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDecoder(t, tt.req)
			r := feedAll(t, d, seq(initLine, snap("m1", "Looking it up."), tt.lines, resultLine))
			require.NoError(t, r.err)
			tools := toolEvents(r.events)
			require.Len(t, tools, len(tt.want))
			for i, want := range tt.want {
				assert.Equal(t, []event.Type{event.TypeToolStarted, event.TypeToolCompleted}[i], tools[i].Type)
				assert.Equal(t, want, *tools[i].Tool)
			}
			assert.True(t, d.Done())
			assert.NoError(t, d.End(0, ""))
		})
	}
}

// TestBridgePolicy: of the bridge's server, exactly its tools; other
// servers as Turn.MCPServers says.
func TestBridgePolicy(t *testing.T) {
	mcpWith := func(args string) string {
		return `{"type":"tool_call","subtype":"started","call_id":"toolu_b1","tool_call":{"mcpToolCall":{"args":` + args + `}},"session_id":"abc"}`
	}
	tests := []struct {
		name    string
		req     Turn
		lines   []string
		msg     string // "" when allowed
		errLine int
	}{
		{name: "a published tool", req: Turn{Bridge: testBridge()}, lines: []string{bridgeStarted(bridgeKey, "fn_spell", `{}`)}},
		{name: "a published tool, its result", req: Turn{Mode: turn.ModeWrite, Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey, "fn_spell", `{}`), bridgeCompleted(bridgeSuccess)}},
		{name: "a tool the bridge does not publish", req: Turn{Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey, "fn_other", `{}`)},
			msg:   `the tool "fn_other" of the MCP tool bridge ` + bridgeKey + `, which it does not publish (it publishes: fn_lookup_word, fn_spell)`, errLine: 3},
		{name: "the tool's own name is not the bridge's", req: Turn{Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey, "lookup_word", `{}`)}, msg: "which it does not publish", errLine: 3},
		{name: "the bridge's server is the bridge's alone, whatever Tools say", req: Turn{Bridge: testBridge(), Tools: []string{"mcp"}},
			lines: []string{bridgeStarted(bridgeKey, "fn_other", `{}`)}, msg: "which it does not publish", errLine: 3},
		{name: "and whatever MCPServers say", req: Turn{Bridge: testBridge(), MCPServers: []string{bridgeKey}},
			lines: []string{bridgeStarted(bridgeKey, "fn_other", `{}`)}, msg: "which it does not publish", errLine: 3},
		{name: "no toolName", req: Turn{Bridge: testBridge()},
			lines: []string{mcpWith(`{"name":"` + bridgeKey + `-fn_spell","providerIdentifier":"` + bridgeKey + `"}`)}, msg: "no toolName string", errLine: 3},
		{name: "a toolName that is not a string", req: Turn{Bridge: testBridge()},
			lines: []string{mcpWith(`{"toolName":["fn_spell"],"providerIdentifier":"` + bridgeKey + `"}`)}, msg: "no toolName string", errLine: 3},
		{name: "name and toolName disagree", req: Turn{Bridge: testBridge()},
			lines: []string{mcpWith(`{"name":"` + bridgeKey + `-fn_evil","toolName":"fn_spell","providerIdentifier":"` + bridgeKey + `"}`)},
			msg:   `name "` + bridgeKey + `-fn_evil" and toolName "fn_spell" disagree`, errLine: 3},
		{name: "toolName alone suffices", req: Turn{Bridge: testBridge()},
			lines: []string{mcpWith(`{"toolName":"fn_spell","providerIdentifier":"` + bridgeKey + `"}`)}},
		{name: "another server is refused", req: Turn{Bridge: testBridge()},
			lines: []string{bridgeStarted("github", "fn_spell", `{}`)},
			msg:   `tool of the MCP server "github", which the turn does not allow (allowed MCP servers: ` + bridgeKey + `)`, errLine: 3},
		{name: "a server that only starts like the bridge's", req: Turn{Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey+"x", "fn_spell", `{}`)}, msg: "which the turn does not allow", errLine: 3},
		{name: "another server the turn allows", req: Turn{Bridge: testBridge(), MCPServers: []string{"github"}},
			lines: []string{bridgeStarted("github", "create_issue", `{}`)}},
		{name: "no server named", req: Turn{Bridge: testBridge()}, lines: []string{mcpWith(`{"toolName":"fn_spell"}`)}, msg: "cannot be identified", errLine: 3},
		{name: "a completed call never started", req: Turn{Bridge: testBridge()}, lines: []string{bridgeCompleted(bridgeSuccess)},
			msg: "cannot be identified", errLine: 3},
		{name: "a completed call naming a tool the bridge does not publish", req: Turn{Bridge: testBridge()},
			lines: []string{bridgeStarted(bridgeKey, "fn_spell", `{}`),
				strings.Replace(bridgeStarted(bridgeKey, "fn_other", `{}`), `"started"`, `"completed"`, 1)}, msg: "which it does not publish", errLine: 4},
		{name: "the bridge opens no other tool", req: Turn{Bridge: testBridge()}, lines: []string{getMcpStarted}, msg: `"getMcpTools"`, errLine: 3},
		{name: "no bridge: the same call is refused", req: Turn{Mode: turn.ModeWrite},
			lines: []string{bridgeStarted(bridgeKey, "fn_spell", `{}`)}, msg: `tool "mcp", which the write mode does not allow`, errLine: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDecoder(t, tt.req)
			r := feedAll(t, d, seq(initLine, snap("m1", "Working."), tt.lines))
			if tt.msg == "" {
				require.NoError(t, r.err)
				return
			}
			require.Error(t, r.err)
			assert.Equal(t, failure.Policy, failure.KindOf(r.err))
			assert.Equal(t, tt.errLine, r.errLine)
			assert.Contains(t, r.err.Error(), tt.msg)
			assert.Equal(t, r.err, d.End(0, ""), "End reports the policy failure")
		})
	}
}
