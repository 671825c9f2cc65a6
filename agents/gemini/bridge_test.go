package gemini_test

import (
	"encoding/json/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// testBridge is a bridge publishing lookup_word, as
// mcpbridge.Bridge.Server describes one, in dir.
func testBridge(dir string) *mcpbridge.Server {
	return &mcpbridge.Server{Name: "cursorkitfa33fb33", Command: "/opt/app/bin/app", Args: []string{"__cursorkit-mcp-bridge"},
		Env:   map[string]string{mcpbridge.EnvSession: filepath.Join(dir, "session.json")},
		Tools: []string{"fn_lookup_word"}, ConfigFile: filepath.Join(dir, "mcp.json"), Dir: dir}
}

func TestBridgeArgs(t *testing.T) {
	dir := string(filepath.Separator) + filepath.Join("tmp", "cursorkit-mcp-1")
	if runtime.GOOS == "windows" {
		dir = `C:\tmp\cursorkit-mcp-1`
	}
	tests := []struct {
		name   string
		mode   turn.Mode
		change func(*mcpbridge.Server)
		want   string // joined with spaces; "" when refused
	}{
		{name: "ask: nothing on argv", mode: turn.ModeAsk, want: "--output-format stream-json --skip-trust --approval-mode default -p "},
		{name: "write", mode: turn.ModeWrite, want: "--output-format stream-json --skip-trust --approval-mode yolo -p "},
		{name: "plan cannot call MCP tools", mode: turn.ModePlan},
		{name: "the zero mode is plan", mode: ""},
		{name: "a server name gemini cannot split", mode: turn.ModeAsk, change: func(s *mcpbridge.Server) { s.Name = "cursor_kit" }},
		{name: "no command", mode: turn.ModeAsk, change: func(s *mcpbridge.Server) { s.Command = "" }},
		{name: "a relative directory", mode: turn.ModeAsk, change: func(s *mcpbridge.Server) { s.Dir = "x" }},
		{name: "a variable gemini would expand", mode: turn.ModeAsk, change: func(s *mcpbridge.Server) { s.Command = "/opt/$HOME/app" }},
		{name: "a variable in the environment", mode: turn.ModeAsk, change: func(s *mcpbridge.Server) { s.Env = map[string]string{"K": "${X}"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := gemini.Turn{Prompt: "secret", Mode: tt.mode, Bridge: testBridge(dir)}
			if tt.change != nil {
				tt.change(req.Bridge)
			}
			args, err := gemini.Args(req)
			_, derr := gemini.NewDecoder(req)
			_, herr := gemini.BridgeHome(req, func(string) string { return "" })
			if tt.want == "" {
				assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
				assert.Equal(t, failure.Input, failure.KindOf(derr), "the decoder refuses the bridge Args refuses")
				assert.Equal(t, failure.Input, failure.KindOf(herr), "BridgeHome refuses the bridge Args refuses")
				return
			}
			require.NoError(t, err)
			require.NoError(t, derr)
			assert.Equal(t, tt.want, strings.Join(args, " "))
		})
	}
}

// Lines Gemini CLI 0.61.0 printed for a bridged call, against the
// stand-in.
const (
	bridgeInit   = `{"type":"init","timestamp":"2026-12-03T15:22:18.000Z","session_id":"b5210042-48fe-464c-82a5-802eaa78d480","model":"auto"}`
	bridgeUse    = `{"type":"tool_use","timestamp":"2026-12-03T15:22:19.050Z","tool_name":"mcp_cursorkitfa33fb33_fn_lookup_word","tool_id":"mcp_cursorkitfa33fb33_fn_lookup_word__call_standin_0_0","parameters":{"word":"ossify"}}`
	bridgeResult = `{"type":"tool_result","timestamp":"2026-12-03T15:22:19.181Z","tool_id":"mcp_cursorkitfa33fb33_fn_lookup_word__call_standin_0_0","status":"success","output":"ossify: to turn into bone"}`
)

func TestBridgeDecoderNamesTheToolItsOwn(t *testing.T) {
	_, evs, err := feed(t, gemini.Turn{Mode: turn.ModeAsk, Bridge: testBridge(testkit.TempDir(t))}, []string{bridgeInit, bridgeUse, bridgeResult})
	require.NoError(t, err)
	require.Equal(t, []event.Type{event.TypeInit, event.TypeToolStarted, event.TypeToolCompleted}, types(evs))
	id := "mcp_cursorkitfa33fb33_fn_lookup_word__call_standin_0_0"
	assert.Equal(t, event.Tool{CallID: id, Name: "lookup_word", Args: []byte(`{"word":"ossify"}`)}, *evs[1].Tool)
	assert.Equal(t, event.Tool{CallID: id, Name: "lookup_word", Args: []byte(`{"word":"ossify"}`), Status: "success",
		Result: []byte(`"ossify: to turn into bone"`)}, *evs[2].Tool)
}

func TestBridgeDecoderPolicy(t *testing.T) {
	use := func(name string) string {
		return `{"type":"tool_use","tool_name":"` + name + `","tool_id":"1","parameters":{}}`
	}
	tests := []struct {
		name  string
		tools []string
		tool  string
		allow string // the tool's name in the event; "" when refused
	}{
		{name: "a published tool", tool: "mcp_cursorkitfa33fb33_fn_lookup_word", allow: "lookup_word"},
		{name: "a tool the bridge does not publish", tool: "mcp_cursorkitfa33fb33_fn_other"},
		{name: "the bridge's server is the bridge's alone", tools: []string{"mcp"}, tool: "mcp_cursorkitfa33fb33_fn_other"},
		{name: "the tool without its prefix", tool: "mcp_cursorkitfa33fb33_lookup_word"},
		{name: "another server", tool: "mcp_docs_fn_lookup_word"},
		{name: "another server the turn allows", tools: []string{"mcp"}, tool: "mcp_docs_search", allow: "mcp_docs_search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := gemini.Turn{Mode: turn.ModeAsk, Tools: tt.tools, Bridge: testBridge(testkit.TempDir(t))}
			_, evs, err := feed(t, req, []string{bridgeInit, use(tt.tool)})
			if tt.allow == "" {
				assert.Equal(t, failure.Policy, failure.KindOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			require.Len(t, evs, 2)
			assert.Equal(t, tt.allow, evs[1].Tool.Name)
		})
	}
	_, _, err := feed(t, gemini.Turn{Mode: turn.ModeAsk}, []string{bridgeInit, use("mcp_cursorkitfa33fb33_fn_lookup_word")})
	assert.Equal(t, failure.Policy, failure.KindOf(err), "no bridge: %v", err)
}

func TestBridgeHome(t *testing.T) {
	user := testkit.TempDir(t)
	dot := filepath.Join(user, ".gemini")
	require.NoError(t, os.MkdirAll(filepath.Join(dot, "tmp", "proj"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dot, "settings.json"), []byte(`{"security":{"auth":{"selectedType":"oauth-personal"}}}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dot, "oauth_creds.json"), []byte(`{"refresh_token":"r"}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dot, "trustedFolders.json"), []byte(`{}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dot, "unrelated.txt"), []byte(`x`), 0o600))
	bridgeDir := testkit.TempDir(t)
	env := map[string]string{"HOME": user, "USERPROFILE": user}

	add, err := gemini.BridgeHome(gemini.Turn{Mode: turn.ModeAsk, Bridge: testBridge(bridgeDir)}, func(k string) string { return env[k] })
	require.NoError(t, err)
	home := filepath.Join(bridgeDir, "gemini-home")
	assert.Equal(t, []string{gemini.EnvHome + "=" + home}, add)

	settings, err := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
	require.NoError(t, err)
	assert.Contains(t, string(settings), `"selectedType": "oauth-personal"`, "the user's settings")
	assert.Contains(t, string(settings), `"cursorkitfa33fb33"`, "the bridge's server")
	fi, err := os.Stat(filepath.Join(home, ".gemini", "settings.json"))
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
	for _, name := range []string{"oauth_creds.json", "trustedFolders.json"} {
		b, err := os.ReadFile(filepath.Join(home, ".gemini", name))
		require.NoError(t, err, "%s reaches gemini's home", name)
		want, _ := os.ReadFile(filepath.Join(dot, name))
		assert.Equal(t, string(want), string(b))
	}
	if _, err := os.Lstat(filepath.Join(home, ".gemini", "tmp")); runtime.GOOS != "windows" {
		assert.NoError(t, err, "the user's sessions are linked")
	}
	_, err = os.Lstat(filepath.Join(home, ".gemini", "unrelated.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist, "only what gemini needs is linked")
	user2, err := os.ReadFile(filepath.Join(dot, "settings.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(user2), "cursorkit", "the user's own settings are untouched")

	t.Run("a second turn with the bridge writes none of the user's files", func(t *testing.T) {
		old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, name := range []string{"oauth_creds.json", "trustedFolders.json"} {
			require.NoError(t, os.Chtimes(filepath.Join(dot, name), old, old))
		}
		_, err := gemini.BridgeHome(gemini.Turn{Mode: turn.ModeAsk, Bridge: testBridge(bridgeDir)}, func(k string) string { return env[k] })
		require.NoError(t, err)
		for _, name := range []string{"oauth_creds.json", "trustedFolders.json"} {
			fi, err := os.Stat(filepath.Join(dot, name))
			require.NoError(t, err)
			assert.True(t, fi.ModTime().Equal(old), "the user's %s was written through its link", name)
		}
	})
	t.Run("GEMINI_CLI_HOME is the user's home when set", func(t *testing.T) {
		env := map[string]string{"HOME": testkit.TempDir(t), gemini.EnvHome: user}
		dir := testkit.TempDir(t)
		_, err := gemini.BridgeHome(gemini.Turn{Mode: turn.ModeWrite, Bridge: testBridge(dir)}, func(k string) string { return env[k] })
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dir, "gemini-home", ".gemini", "oauth_creds.json"))
		require.NoError(t, err)
		assert.Equal(t, `{"refresh_token":"r"}`, string(b))
	})
	t.Run("no home at all", func(t *testing.T) {
		dir := testkit.TempDir(t)
		_, err := gemini.BridgeHome(gemini.Turn{Mode: turn.ModeAsk, Bridge: testBridge(dir)}, func(string) string { return "" })
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dir, "gemini-home", ".gemini", "settings.json"))
		require.NoError(t, err)
		assert.Contains(t, string(b), "cursorkitfa33fb33")
	})
	t.Run("settings that are not JSON", func(t *testing.T) {
		u := testkit.TempDir(t)
		require.NoError(t, os.MkdirAll(filepath.Join(u, ".gemini"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(u, ".gemini", "settings.json"), []byte(`{"apiKey":"SECRET"`), 0o600))
		_, err := gemini.BridgeHome(gemini.Turn{Mode: turn.ModeAsk, Bridge: testBridge(testkit.TempDir(t))}, func(k string) string {
			return map[string]string{"HOME": u, "USERPROFILE": u}[k]
		})
		assert.Equal(t, failure.Setup, failure.KindOf(err), "%v", err)
		assert.NotContains(t, err.Error(), "SECRET")
	})
	t.Run("settings that are a directory", func(t *testing.T) {
		u := testkit.TempDir(t)
		require.NoError(t, os.MkdirAll(filepath.Join(u, ".gemini", "settings.json"), 0o700))
		_, err := gemini.BridgeHome(gemini.Turn{Mode: turn.ModeAsk, Bridge: testBridge(testkit.TempDir(t))}, func(k string) string {
			return map[string]string{"HOME": u, "USERPROFILE": u}[k]
		})
		assert.Equal(t, failure.Setup, failure.KindOf(err), "%v", err)
	})
}

func TestBridgeDecoderToolError(t *testing.T) {
	errorLine := func(message string) string {
		q, err := json.Marshal(message)
		require.NoError(t, err)
		return `{"type":"tool_result","timestamp":"2026-12-03T15:40:00.000Z","tool_id":"mcp_cursorkitfa33fb33_fn_lookup_word__call_standin_0_0","status":"error","error":{"type":"mcp_tool_error","message":` + string(q) + `}}`
	}
	// As gemini 0.61.0 wrote it for a handler's error.
	seen := `MCP tool 'fn_lookup_word' reported tool error for function call: {"name":"fn_lookup_word","args":{"word":"ossify"}} with response: [{"functionResponse":{"name":"fn_lookup_word","response":{"content":[{"type":"text","text":"the dictionary has no entry for ossify (ERR-3d2)"}],"isError":true}}}]`
	tests := []struct {
		name, line, want string
	}{
		{name: "the tool's own text", line: errorLine(seen), want: `"the dictionary has no entry for ossify (ERR-3d2)"`},
		{name: "the marker in the call's arguments", line: errorLine(`MCP tool 'fn_lookup_word' reported tool error for function call: {"name":"fn_lookup_word","args":{"word":"x with response: [1]"}} with response: [{"functionResponse":{"name":"fn_lookup_word","response":{"content":[{"type":"text","text":"no"}],"isError":true}}}]`),
			want: `"no"`},
		{name: "a message of another shape", line: errorLine("MCP tool 'fn_lookup_word' reported tool error"), want: `"MCP tool 'fn_lookup_word' reported tool error"`},
		{name: "another error type", line: `{"type":"tool_result","tool_id":"mcp_cursorkitfa33fb33_fn_lookup_word__call_standin_0_0","status":"error","error":{"type":"execution_failed","message":"boom"}}`,
			want: `"boom"`},
		{name: "no message", line: `{"type":"tool_result","tool_id":"mcp_cursorkitfa33fb33_fn_lookup_word__call_standin_0_0","status":"error","error":{"type":"x"}}`,
			want: `{"type":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, evs, err := feed(t, gemini.Turn{Mode: turn.ModeAsk, Bridge: testBridge(testkit.TempDir(t))}, []string{bridgeInit, bridgeUse, tt.line})
			require.NoError(t, err)
			require.Len(t, evs, 3)
			assert.Equal(t, "lookup_word", evs[2].Tool.Name)
			assert.Equal(t, "error", evs[2].Tool.Status)
			assert.Equal(t, tt.want, string(evs[2].Tool.Result))
		})
	}
	_, evs, err := feed(t, gemini.Turn{Mode: turn.ModeAsk, Tools: []string{"mcp"}}, []string{bridgeInit,
		`{"type":"tool_use","tool_name":"mcp_docs_search","tool_id":"d1","parameters":{}}`,
		`{"type":"tool_result","tool_id":"d1","status":"error","error":{"type":"mcp_tool_error","message":"x"}}`})
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"mcp_tool_error","message":"x"}`, string(evs[2].Tool.Result), "another server's error is as gemini wrote it")
}
