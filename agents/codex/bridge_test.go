package codex_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/codex"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// testBridge is a bridge publishing lookup_word and spell, as
// mcpbridge.Bridge.Server describes one.
func testBridge() *mcpbridge.Server {
	return &mcpbridge.Server{Name: "cursorkit80f75339", Command: "/opt/app/bin/app", Args: []string{"__cursorkit-mcp-bridge"},
		Env:   map[string]string{mcpbridge.EnvSession: "/tmp/cursorkit-mcp-1/session.json"},
		Tools: []string{"fn_lookup_word", "fn_spell"}, ConfigFile: "/tmp/cursorkit-mcp-1/mcp.json", Dir: "/tmp/cursorkit-mcp-1"}
}

func TestBridgeArgs(t *testing.T) {
	const head = "exec --json --color never --sandbox read-only"
	const bridge = ` -c mcp_servers.cursorkit80f75339.command="/opt/app/bin/app"` +
		` -c mcp_servers.cursorkit80f75339.args=["__cursorkit-mcp-bridge"]` +
		` -c mcp_servers.cursorkit80f75339.env={CURSORKIT_MCP_BRIDGE="/tmp/cursorkit-mcp-1/session.json"}` +
		` -c mcp_servers.cursorkit80f75339.required=true` +
		` -c mcp_servers.cursorkit80f75339.default_tools_approval_mode="approve"`
	tests := []struct {
		name   string
		req    codex.Turn
		change func(*mcpbridge.Server)
		want   string // joined with spaces; "" when refused
	}{
		{name: "plan", want: head + bridge + " -"},
		{name: "resume: the options before the subcommand", req: codex.Turn{Mode: turn.ModeWrite, Model: "o3", Resume: "t1"},
			want: "exec --json --color never --sandbox workspace-write --model o3" + bridge + " resume t1 -"},
		{name: "a Windows path", change: func(s *mcpbridge.Server) {
			s.Command = `C:\Program Files\App\app.exe`
			s.Env = map[string]string{mcpbridge.EnvSession: `C:\Users\Ann "A" Lee\AppData\Local\Temp\cursorkit-mcp-1\session.json`}
		}, want: head + ` -c mcp_servers.cursorkit80f75339.command="C:\\Program Files\\App\\app.exe"` +
			` -c mcp_servers.cursorkit80f75339.args=["__cursorkit-mcp-bridge"]` +
			` -c mcp_servers.cursorkit80f75339.env={CURSORKIT_MCP_BRIDGE="C:\\Users\\Ann \"A\" Lee\\AppData\\Local\\Temp\\cursorkit-mcp-1\\session.json"}` +
			` -c mcp_servers.cursorkit80f75339.required=true -c mcp_servers.cursorkit80f75339.default_tools_approval_mode="approve" -`},
		{name: "several args and env, the env sorted", change: func(s *mcpbridge.Server) {
			s.Args = []string{"a", `b"c`}
			s.Env = map[string]string{"Z": "1", "a.b": "2"}
		}, want: head + ` -c mcp_servers.cursorkit80f75339.command="/opt/app/bin/app" -c mcp_servers.cursorkit80f75339.args=["a", "b\"c"]` +
			` -c mcp_servers.cursorkit80f75339.env={Z="1", "a.b"="2"}` +
			` -c mcp_servers.cursorkit80f75339.required=true -c mcp_servers.cursorkit80f75339.default_tools_approval_mode="approve" -`},
		{name: "no args, no env", change: func(s *mcpbridge.Server) { s.Args, s.Env = nil, nil },
			want: head + ` -c mcp_servers.cursorkit80f75339.command="/opt/app/bin/app" -c mcp_servers.cursorkit80f75339.args=[]` +
				` -c mcp_servers.cursorkit80f75339.env={} -c mcp_servers.cursorkit80f75339.required=true -c mcp_servers.cursorkit80f75339.default_tools_approval_mode="approve" -`},
		{name: "a server name that is no bare key", change: func(s *mcpbridge.Server) { s.Name = "a.b" }},
		{name: "no server name", change: func(s *mcpbridge.Server) { s.Name = "" }},
		{name: "no command", change: func(s *mcpbridge.Server) { s.Command = "" }},
		{name: "a NUL in an argument", change: func(s *mcpbridge.Server) { s.Args = []string{"a\x00"} }},
		{name: "a value that is not UTF-8", change: func(s *mcpbridge.Server) { s.Env = map[string]string{"K": "\xff"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Bridge = testBridge()
			if tt.change != nil {
				tt.change(tt.req.Bridge)
			}
			args, err := codex.Args(tt.req)
			_, derr := codex.NewDecoder(tt.req)
			if tt.want == "" {
				assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
				assert.Equal(t, failure.Input, failure.KindOf(derr), "the decoder refuses the bridge Args refuses")
				return
			}
			require.NoError(t, err)
			require.NoError(t, derr)
			assert.Equal(t, tt.want, strings.Join(args, " "))
		})
	}
}

// Lines Codex 0.171.0 printed for a bridged call, against the stand-in
// (the exec wrapper makes no item; bridgeFailed and the rest are made).
const (
	bridgeThread  = `{"type":"thread.started","thread_id":"01a23c7a-88a4-7ca1-b4d8-f207a3f6039c"}`
	bridgeStarted = `{"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":"cursorkit80f75339","tool":"fn_lookup_word","arguments":{"word":"ossify"},"result":null,"error":null,"status":"in_progress"}}`
	bridgeDone    = `{"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"cursorkit80f75339","tool":"fn_lookup_word","arguments":{"word":"ossify"},"result":{"content":[{"type":"text","text":"ossify: to turn into bone"}],"structured_content":null},"error":null,"status":"completed"}}`
	bridgeFailed  = `{"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"cursorkit80f75339","tool":"fn_lookup_word","arguments":{"word":"ossify"},"result":null,"error":{"message":"tool call failed: no such word"},"status":"failed"}}`
	bridgeAnswer  = `{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"It means to turn into bone."}}`
	bridgeEnd     = `{"type":"turn.completed","usage":{"input_tokens":200,"cached_input_tokens":40,"output_tokens":60}}`
)

func TestBridgeDecoderNamesTheToolItsOwn(t *testing.T) {
	args := []byte(`{"word":"ossify"}`)
	tests := []struct {
		name  string
		lines []string
		want  event.Tool
	}{
		{name: "completed", lines: []string{bridgeThread, bridgeStarted, bridgeDone, bridgeAnswer, bridgeEnd},
			want: event.Tool{CallID: "item_0", Name: "lookup_word", Args: args, Status: "completed", Result: []byte(`"ossify: to turn into bone"`)}},
		{name: "failed", lines: []string{bridgeThread, bridgeStarted, bridgeFailed, bridgeAnswer, bridgeEnd},
			want: event.Tool{CallID: "item_0", Name: "lookup_word", Args: args, Status: "failed", Result: []byte(`"tool call failed: no such word"`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, evs, err := feed(t, codex.Turn{Mode: turn.ModeAsk, Bridge: testBridge()}, tt.lines)
			require.NoError(t, err)
			assert.Equal(t, []string{"init", "tool_started:lookup_word", "tool_completed:lookup_word", "text", "result"}, types(evs))
			assert.Equal(t, event.Tool{CallID: "item_0", Name: "lookup_word", Args: args}, *evs[1].Tool)
			assert.Equal(t, tt.want, *evs[2].Tool)
			assert.NoError(t, d.End(0, ""))
		})
	}
}

func TestBridgeDecoderPolicy(t *testing.T) {
	call := func(server, tool string) string {
		return `{"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":"` + server + `","tool":"` + tool + `","arguments":{},"status":"in_progress"}}`
	}
	tests := []struct {
		name  string
		req   codex.Turn
		line  string
		allow string // the tool's name in the event; "" when refused
	}{
		{name: "a published tool", req: codex.Turn{Bridge: testBridge()}, line: call("cursorkit80f75339", "fn_spell"), allow: "spell"},
		{name: "a tool the bridge does not publish", req: codex.Turn{Bridge: testBridge()}, line: call("cursorkit80f75339", "fn_other")},
		{name: "the bridge's tool without its prefix", req: codex.Turn{Bridge: testBridge()}, line: call("cursorkit80f75339", "spell")},
		{name: "the bridge's server is the bridge's alone", req: codex.Turn{Bridge: testBridge(), Tools: []string{"mcp"}}, line: call("cursorkit80f75339", "fn_other")},
		{name: "another server", req: codex.Turn{Bridge: testBridge()}, line: call("docs", "fn_spell")},
		{name: "another server the turn allows", req: codex.Turn{Bridge: testBridge(), Tools: []string{"mcp:docs"}}, line: call("docs", "search"), allow: "mcp"},
		{name: "no bridge", req: codex.Turn{}, line: call("cursorkit80f75339", "fn_spell")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, evs, err := feed(t, tt.req, []string{bridgeThread, tt.line})
			if tt.allow == "" {
				assert.Equal(t, failure.Policy, failure.KindOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{"init", "tool_started:" + tt.allow}, types(evs))
		})
	}
}
