package gemini

import (
	"encoding/json/jsontext"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpbridge"
)

func testServer() *mcpbridge.Server {
	return &mcpbridge.Server{Name: "cursorkitfa33fb33", Command: "/opt/app/bin/app", Args: []string{"__cursorkit-mcp-bridge"},
		Env:   map[string]string{mcpbridge.EnvSession: "/tmp/cursorkit-mcp-1/session.json"},
		Tools: []string{"fn_lookup_word"}, ConfigFile: "/tmp/cursorkit-mcp-1/mcp.json", Dir: "/tmp/cursorkit-mcp-1"}
}

const bridgeEntry = `{"args":["__cursorkit-mcp-bridge"],"command":"/opt/app/bin/app","env":{"CURSORKIT_MCP_BRIDGE":"/tmp/cursorkit-mcp-1/session.json"},"trust":true}`

func TestBridgeSettings(t *testing.T) {
	tests := []struct {
		name string
		user string
		want string // "" when refused
		kind failure.Kind
	}{
		{name: "no settings of the user's", want: `{"mcpServers":{"cursorkitfa33fb33":` + bridgeEntry + `}}`},
		{name: "blank", user: " \n", want: `{"mcpServers":{"cursorkitfa33fb33":` + bridgeEntry + `}}`},
		{name: "every member kept, the user's servers too", user: `{"general":{"maxAttempts":2},"mcpServers":{"github":{"command":"gh-mcp"}},"ui":{"theme":"x"}}`,
			want: `{"general":{"maxAttempts":2},"mcpServers":{"cursorkitfa33fb33":` + bridgeEntry + `,"github":{"command":"gh-mcp"}},"ui":{"theme":"x"}}`},
		{name: "comments, as gemini allows them", user: "// mine\n{\"a\": \"http://x/*y*/\", /* b */ \"b\": 1 // c\n}",
			want: `{"a":"http://x/*y*/","b":1,"mcpServers":{"cursorkitfa33fb33":` + bridgeEntry + `}}`},
		{name: "an escaped quote in a string", user: `{"a":"q\"//not a comment"}`,
			want: `{"a":"q\"//not a comment","mcpServers":{"cursorkitfa33fb33":` + bridgeEntry + `}}`},
		{name: "the server allowed, never excluded", user: `{"mcp":{"allowed":["github"],"excluded":["cursorkitfa33fb33","x"],"serverCommand":"s"}}`,
			want: `{"mcp":{"allowed":["github","cursorkitfa33fb33"],"excluded":["x"],"serverCommand":"s"},"mcpServers":{"cursorkitfa33fb33":` + bridgeEntry + `}}`},
		{name: "null members", user: `{"mcp":null,"mcpServers":null}`,
			want: `{"mcp":null,"mcpServers":{"cursorkitfa33fb33":` + bridgeEntry + `}}`},
		{name: "not an object", user: `[1]`, kind: failure.Setup},
		{name: "not JSON", user: `{"a":`, kind: failure.Setup},
		{name: "mcpServers not an object", user: `{"mcpServers":[]}`, kind: failure.Setup},
		{name: "mcp.allowed not a list of names", user: `{"mcp":{"allowed":"github"}}`, kind: failure.Setup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var user []byte
			if tt.user != "" {
				user = []byte(tt.user)
			}
			got, err := bridgeSettings(user, testServer())
			if tt.kind != "" {
				assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
			assert.True(t, jsontext.Value(got).IsValid())
		})
	}
}

func TestBridgeSettingsErrorsQuoteNothing(t *testing.T) {
	_, err := bridgeSettings([]byte(`{"apiKey":"sk-SECRET-1", oops}`), testServer())
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "SECRET")
}

func TestExpands(t *testing.T) {
	for s, want := range map[string]bool{
		"/usr/bin/app": false, "a$": false, "$": false, "a$ b": false, "$$": false, "$-x": false,
		"$HOME": true, "/x/${A}": true, "a$_": true, "$1": true, "a$$b": true,
	} {
		assert.Equal(t, want, expands(s), "%q", s)
	}
}
