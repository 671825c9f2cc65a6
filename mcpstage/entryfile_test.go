package mcpstage_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpstage"
)

// entrySecret is an env value: it must never show in any message.
const entrySecret = "tok-5ecret-9a1f"

// TestReadEntryFile: the accepted shapes.
func TestReadEntryFile(t *testing.T) {
	tests := []struct {
		body string
		want mcpstage.Entry
	}{
		{`{"command":"node"}`, mcpstage.Entry{Command: "node"}},
		{`{"command":"node","args":null,"env":null}`, mcpstage.Entry{Command: "node"}},
		{`{"env":{"A":"1","B":""},"args":["x","-y"],"command":"n\u00e9"}`, mcpstage.Entry{Command: "né", Args: []string{"x", "-y"}, Env: map[string]string{"A": "1", "B": ""}}},
		{" \n{\"command\":\"node\",\"args\":[]}\n", mcpstage.Entry{Command: "node", Args: []string{}}},
	}
	for _, tt := range tests {
		got, err := mcpstage.ReadEntryFile(testkit.TempFile(t, "server.json", tt.body))
		require.NoError(t, err, tt.body)
		assert.Equal(t, tt.want, got, tt.body)
	}
}

// TestReadEntryFileRefuses: a file that is not one {command, args, env}
// object is failure.Input naming the file and what is wrong, never a
// value.
func TestReadEntryFileRefuses(t *testing.T) {
	tests := []struct {
		name, body string
		missing    bool
		msg        string
	}{
		{name: "missing", missing: true, msg: "does not exist"},
		{name: "not JSON", body: `{"command": "node", "env": {"K": "` + entrySecret + `"`, msg: "not valid JSON (at byte offset"},
		{name: "not an object", body: `["node"]`, msg: "one JSON object"},
		{name: "two values", body: `{"command":"node"} {}`, msg: "more than one JSON value"},
		{name: "no command", body: `{"args": [], "env": {"K": "` + entrySecret + `"}}`, msg: `"command" is missing`},
		{name: "command not a string", body: `{"command": ["node"]}`, msg: `"command" must be a string`},
		{name: "args not strings", body: `{"command": "node", "args": ["a", 1]}`, msg: `"args" must be an array of strings`},
		{name: "env value not a string", body: `{"command": "node", "env": {"K": {"v": "` + entrySecret + `"}}}`, msg: `"env" must be an object`},
		{name: "an unknown member", body: `{"command": "node", "cwd": "/x"}`, msg: `unknown member "cwd"`},
		{name: "a long unknown member", body: `{"command": "node", "` + strings.Repeat("m", 100) + `": 1}`, msg: `unknown member "` + strings.Repeat("m", 64) + `"…`},
		{name: "a member twice", body: `{"command": "node", "env": {"K": "` + entrySecret + `", "K": "b"}}`, msg: "given twice"},
		{name: "not UTF-8", body: "{\"command\": \"node\", \"env\": {\"K\": \"" + entrySecret + "\xff\"}}", msg: "not valid JSON"},
		{name: "too large", body: `{"command": "node", "args": ["` + strings.Repeat("a", mcpstage.MaxEntryFileSize) + `"]}`, msg: "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(testkit.TempDir(t), "server.json")
			if !tt.missing {
				path = testkit.TempFile(t, "server.json", tt.body)
			}
			_, err := mcpstage.ReadEntryFile(path)
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.Contains(t, err.Error(), "MCP server file ")
			assert.Contains(t, err.Error(), filepath.Base(path))
			assert.Contains(t, err.Error(), tt.msg)
			assert.NotContains(t, err.Error(), entrySecret, "an env value never shows")
		})
	}
}

// TestReadEntryFileNotRegular: a directory is refused as not a regular
// file.
func TestReadEntryFileNotRegular(t *testing.T) {
	_, err := mcpstage.ReadEntryFile(testkit.TempDir(t))
	require.Error(t, err)
	assert.Equal(t, failure.Input, failure.KindOf(err))
	assert.Contains(t, err.Error(), "not a regular file")
}
