package claude

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// testBridge is a bridge publishing lookup_word and spell, as
// mcpbridge.Bridge.Server describes one.
func testBridge() *mcpbridge.Server {
	dir := bridgeDir()
	return &mcpbridge.Server{Name: "cursorkita092e71e", Command: "/opt/app/bin/app", Args: []string{"__cursorkit-mcp-bridge"},
		Env:   map[string]string{mcpbridge.EnvSession: filepath.Join(dir, "session.json")},
		Tools: []string{"fn_lookup_word", "fn_spell"}, ConfigFile: filepath.Join(dir, "mcp.json"), Dir: dir}
}

// bridgeDir is an absolute path on this OS for a bridge's directory.
func bridgeDir() string {
	if runtime.GOOS == "windows" {
		return `C:\tmp\cursorkit-mcp-1`
	}
	return "/tmp/cursorkit-mcp-1"
}

func TestBridgeArgs(t *testing.T) {
	const head = "-p --output-format stream-json --verbose "
	bridge := " --mcp-config " + filepath.Join(bridgeDir(), "mcp.json") + " --strict-mcp-config"
	tests := []struct {
		name   string
		req    Turn
		change func(*mcpbridge.Server)
		want   string // joined with spaces; "" when refused
	}{
		{name: "plan: the bridge's tools approved", req: Turn{},
			want: head + "--permission-mode plan --tools Read,Grep,Glob,LS --allowedTools mcp__cursorkita092e71e__fn_lookup_word,mcp__cursorkita092e71e__fn_spell" + bridge},
		{name: "ask with a tool of the caller's", req: Turn{Mode: turn.ModeAsk, Tools: []string{"WebFetch"}},
			want: head + "--permission-mode default --tools Read,Grep,Glob,LS,WebFetch --allowedTools WebFetch,mcp__cursorkita092e71e__fn_lookup_word,mcp__cursorkita092e71e__fn_spell" + bridge},
		{name: "write", req: Turn{Mode: turn.ModeWrite, Resume: "s1"},
			want: head + "--permission-mode acceptEdits --tools Read,Grep,Glob,LS,Edit,MultiEdit,Write,NotebookEdit,Bash,TodoWrite --allowedTools Bash,mcp__cursorkita092e71e__fn_lookup_word,mcp__cursorkita092e71e__fn_spell --resume s1" + bridge},
		{name: "no config file", change: func(s *mcpbridge.Server) { s.ConfigFile = "" }},
		{name: "a relative config file", change: func(s *mcpbridge.Server) { s.ConfigFile = "mcp.json" }},
		{name: "a config file starting with a dash", change: func(s *mcpbridge.Server) { s.ConfigFile = "-x" }},
		{name: "a config file with a newline", change: func(s *mcpbridge.Server) { s.ConfigFile = "/tmp/a\nb" }},
		{name: "a tool Claude Code cannot approve", change: func(s *mcpbridge.Server) { s.Tools = []string{"fn_a,Bash"} }},
		{name: "no server name", change: func(s *mcpbridge.Server) { s.Name = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Bridge = testBridge()
			if tt.change != nil {
				tt.change(tt.req.Bridge)
			}
			args, err := Args(tt.req)
			_, derr := NewDecoder(tt.req)
			if tt.want == "" {
				assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
				assert.Equal(t, failure.Input, failure.KindOf(derr), "the decoder refuses the bridge Args refuses")
				return
			}
			require.NoError(t, err)
			require.NoError(t, derr)
			assert.Equal(t, tt.want, strings.Join(args, " "))
			joined := strings.Join(args, " ")
			assert.NotContains(t, joined, "{", "no JSON on argv")
			assert.NotContains(t, joined, "session.json", "no session file on argv")
		})
	}
}

// Lines Claude Code 2.1.197 printed for a bridged call, against the
// stand-in (the init line cut to what the decoder reads).
const (
	bridgeInit   = `{"type":"system","subtype":"init","cwd":"/tmp/ws","session_id":"8a30ac47-591e-43ad-a071-576eae21eb1a","tools":["Glob","Grep","Read","mcp__cursorkita092e71e__fn_lookup_word"],"mcp_servers":[{"name":"cursorkita092e71e","status":"connected"}],"model":"claude-opus-4-8[1m]","permissionMode":"default","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.197"}`
	bridgeCall   = `{"type":"assistant","message":{"content":[{"id":"toolu_standin_0_0","input":{"word":"ossify"},"name":"mcp__cursorkita092e71e__fn_lookup_word","type":"tool_use"}],"id":"msg_standin_0","model":"claude-opus-4-8","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"cache_creation_input_tokens":0,"cache_read_input_tokens":20,"input_tokens":100,"output_tokens":1},"context_management":null},"parent_tool_use_id":null,"session_id":"8a30ac47-591e-43ad-a071-576eae21eb1a","uuid":"34c81bde-4d3c-4f56-a570-7391ad0aea5b","tool_use_meta":[{"id":"toolu_standin_0_0","display_name":"Fn Lookup Word","server_display_name":"cursorkita092e71e"}]}`
	bridgeResult = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_standin_0_0","type":"tool_result","content":[{"type":"text","text":"ossify: to turn into bone"}]}]},"parent_tool_use_id":null,"session_id":"8a30ac47-591e-43ad-a071-576eae21eb1a","uuid":"e15b09e1-b9cd-4ffd-97c2-a11ed256601f","timestamp":"2026-12-03T15:22:31.665Z","tool_use_result":[{"type":"text","text":"ossify: to turn into bone"}]}`
)

func TestBridgeDecoderNamesTheToolItsOwn(t *testing.T) {
	d := newTestDecoder(t, Turn{Mode: turn.ModeAsk, Bridge: testBridge()})
	r := feedLines(d, []string{bridgeInit, bridgeCall, bridgeResult, textLine("It means to turn into bone."), resultLine})
	require.NoError(t, r.err)
	var tools []event.Event
	for _, e := range r.events {
		if e.Tool != nil {
			tools = append(tools, e)
		}
	}
	require.Len(t, tools, 2)
	assert.Equal(t, event.TypeToolStarted, tools[0].Type)
	assert.Equal(t, event.Tool{CallID: "toolu_standin_0_0", Name: "lookup_word", Args: []byte(`{"word":"ossify"}`)}, *tools[0].Tool)
	assert.Equal(t, event.TypeToolCompleted, tools[1].Type)
	assert.Equal(t, event.Tool{CallID: "toolu_standin_0_0", Name: "lookup_word", Args: []byte(`{"word":"ossify"}`), Status: "success",
		Result: []byte(`"ossify: to turn into bone"`)}, *tools[1].Tool)
	assert.NoError(t, d.End(0, ""))
}

func TestBridgeDecoderPolicy(t *testing.T) {
	tests := []struct {
		name  string
		req   Turn
		tool  string
		allow bool
	}{
		{name: "a published tool", req: Turn{Bridge: testBridge()}, tool: "mcp__cursorkita092e71e__fn_spell", allow: true},
		{name: "a published tool in write mode", req: Turn{Mode: turn.ModeWrite, Bridge: testBridge()}, tool: "mcp__cursorkita092e71e__fn_lookup_word", allow: true},
		{name: "a tool the bridge does not publish", req: Turn{Bridge: testBridge()}, tool: "mcp__cursorkita092e71e__fn_other"},
		{name: "the bridge's tool without its prefix", req: Turn{Bridge: testBridge()}, tool: "mcp__cursorkita092e71e__lookup_word"},
		{name: "the bare name", req: Turn{Bridge: testBridge()}, tool: "lookup_word"},
		{name: "another server", req: Turn{Bridge: testBridge()}, tool: "mcp__other__fn_spell"},
		{name: "the bridge's server is the bridge's alone", req: Turn{Bridge: testBridge(), Tools: []string{"mcp__cursorkita092e71e"}}, tool: "mcp__cursorkita092e71e__fn_other"},
		{name: "no bridge", req: Turn{}, tool: "mcp__cursorkita092e71e__fn_spell"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newTestDecoder(t, tt.req)
			r := feedLines(d, []string{initLine, toolUse("toolu_1", tt.tool)})
			if tt.allow {
				require.NoError(t, r.err)
				require.Len(t, r.events, 2)
				assert.Equal(t, strings.TrimPrefix(tt.tool, "mcp__cursorkita092e71e__fn_"), r.events[1].Tool.Name)
				return
			}
			assert.Equal(t, failure.Policy, failure.KindOf(r.err), "%v", r.err)
			assert.Equal(t, 2, r.errLine)
		})
	}
}

func TestBridgeDecoderKeepsAResultItCannotRead(t *testing.T) {
	d := newTestDecoder(t, Turn{Bridge: testBridge()})
	odd := `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_standin_0_0","type":"tool_result","is_error":true,"content":{"odd":1}}]},"session_id":"s1"}`
	r := feedLines(d, []string{bridgeInit, bridgeCall, odd})
	require.NoError(t, r.err)
	last := r.events[len(r.events)-1].Tool
	assert.Equal(t, "lookup_word", last.Name)
	assert.Equal(t, "error", last.Status)
	assert.Equal(t, `{"odd":1}`, string(last.Result))
}
