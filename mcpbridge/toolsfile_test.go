package mcpbridge

import (
	"context"
	"encoding/json/jsontext"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// fileSecret stands for a value of a tools file that no message may
// show: a token in a command line, a schema's text.
const fileSecret = "tok-5ecret-77c1"

// toolJSON is one valid tool of a tools file, with members replaced by
// over (a member mapped to "" is left out).
func toolJSON(over map[string]string) string {
	members := [][2]string{
		{"name", `"lookup_word"`},
		{"description", `"Looks a word up."`},
		{"inputSchema", `{"type":"object","properties":{"word":{"type":"string"}}}`},
		{"command", `["lookup", "--token", "` + fileSecret + `"]`},
		{"timeout", `"10s"`},
	}
	var parts []string
	for _, m := range members {
		v, ok := over[m[0]]
		if !ok {
			v = m[1]
		}
		if v != "" {
			parts = append(parts, `"`+m[0]+`": `+v)
		}
	}
	for k, v := range over {
		if !strings.Contains("name description inputSchema command timeout", k) {
			parts = append(parts, `"`+k+`": `+v)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func toolsJSON(tools ...string) string {
	return `{"tools": [` + strings.Join(tools, ", ") + `]}`
}

func TestParseToolsFileReadsEveryMember(t *testing.T) {
	specs, err := ParseToolsFile([]byte(toolsJSON(toolJSON(nil),
		toolJSON(map[string]string{"name": `"other"`, "description": "", "timeout": "", "command": `["b"]`}),
		toolJSON(map[string]string{"name": `"` + strings.Repeat("a", maxName) + `"`}))))
	require.NoError(t, err)
	require.Len(t, specs, 3)
	assert.Equal(t, CommandSpec{
		Name: "lookup_word", Description: "Looks a word up.",
		InputSchema: jsontext.Value(`{"type":"object","properties":{"word":{"type":"string"}}}`),
		Command:     []string{"lookup", "--token", fileSecret}, Timeout: 10 * time.Second,
	}, specs[0])
	assert.Equal(t, "other", specs[1].Name)
	assert.Empty(t, specs[1].Description, "a description is optional")
	assert.Zero(t, specs[1].Timeout, "no timeout: DefaultCallTimeout")
	assert.Equal(t, []string{"b"}, specs[1].Command)
}

// TestParseToolsFileRefusals: every way a tools file is wrong is input,
// says what and where, and quotes no value but a name.
func TestParseToolsFileRefusals(t *testing.T) {
	tests := []struct {
		name, body, msg string
	}{
		{"not JSON", `{"tools": [` + toolJSON(nil), "not valid JSON (at byte offset"},
		{"a syntax error inside a tool", `{"tools": [{"name": "a", "command": ["` + fileSecret + `" "x"]}]}`, "not valid JSON (at byte offset 55)"},
		{"two values", toolsJSON(toolJSON(nil)) + ` {}`, "not valid JSON"},
		{"not an object", `["` + fileSecret + `"]`, `one JSON object {"tools": [...]}`},
		{"no tools member", `{}`, "it has no tools"},
		{"no tools", `{"tools": []}`, "it has no tools"},
		{"tools not an array", `{"tools": {"name": "` + fileSecret + `"}}`, `"tools" must be an array of tool objects`},
		{"an unknown top-level member", `{"tools": [], "` + fileSecret + `x": 1}`, `unknown member "` + fileSecret + `x" (want "tools")`},
		{"a tool not an object", `{"tools": ["` + fileSecret + `"]}`, "tool 1: it must be a JSON object"},
		{"an unknown tool member", toolsJSON(toolJSON(map[string]string{"cwd": `"` + fileSecret + `"`})), `tool 1: unknown member "cwd"`},
		{"a member twice", `{"tools": [{"name": "a", "name": "b"}]}`, `the member "name" is given twice (at byte offset`},
		{"tools twice", `{"tools": [], "tools": []}`, `the member "tools" is given twice`},
		{"a name not a string", toolsJSON(toolJSON(map[string]string{"name": "7"})), `tool 1: "name" must be a string`},
		{"no name", toolsJSON(toolJSON(map[string]string{"name": ""})), `tool 1: the name "" is not 1 to 38`},
		{"a bad name", toolsJSON(toolJSON(map[string]string{"name": `"Lookup-Word"`})), `tool 1: the name "Lookup-Word" is not 1 to 38`},
		{"a long name", toolsJSON(toolJSON(map[string]string{"name": `"` + strings.Repeat("a", maxName+1) + `"`})), "is not 1 to 38"},
		{"a name twice", toolsJSON(toolJSON(nil), toolJSON(nil)), `tool 2: the name "lookup_word" is given to another tool too`},
		{"no schema", toolsJSON(toolJSON(map[string]string{"inputSchema": ""})), `tool 1 (lookup_word): "inputSchema" is missing`},
		{"a schema not an object", toolsJSON(toolJSON(map[string]string{"inputSchema": `["` + fileSecret + `"]`})), `tool 1 (lookup_word): "inputSchema" is not a JSON object`},
		{"a schema of a string", toolsJSON(toolJSON(map[string]string{"inputSchema": `{"type": "string", "description": "` + fileSecret + `"}`})), `"inputSchema"'s "type" is not "object"`},
		{"no command", toolsJSON(toolJSON(map[string]string{"command": ""})), `tool 1 (lookup_word): "command" is missing or empty`},
		{"an empty command", toolsJSON(toolJSON(map[string]string{"command": "[]"})), `"command" is missing or empty`},
		{"a blank program", toolsJSON(toolJSON(map[string]string{"command": `[" ", "` + fileSecret + `"]`})), `"command" names no program`},
		{"a command string", toolsJSON(toolJSON(map[string]string{"command": `"lookup ` + fileSecret + `"`})), `tool 1: "command" must be an array of strings`},
		{"a command of numbers", toolsJSON(toolJSON(map[string]string{"command": `["lookup", 5]`})), `"command" must be an array of strings`},
		{"a NUL in the command", toolsJSON(toolJSON(map[string]string{"command": `["lookup", "` + fileSecret + `\u0000"]`})), `"command" string 2 holds a NUL character`},
		{"a bad timeout", toolsJSON(toolJSON(map[string]string{"timeout": `"` + fileSecret + `"`})), `tool 1 (lookup_word): "timeout" is not a duration`},
		{"a timeout number", toolsJSON(toolJSON(map[string]string{"timeout": "10"})), `tool 1: "timeout" must be a string`},
		{"a negative timeout", toolsJSON(toolJSON(map[string]string{"timeout": `"-5s"`})), `"timeout" must be above zero`},
		{"a zero timeout", toolsJSON(toolJSON(map[string]string{"timeout": `"0s"`})), `"timeout" must be above zero`},
		{"a second tool wrong", toolsJSON(toolJSON(nil), toolJSON(map[string]string{"name": `"b"`, "timeout": `"x"`})), `tool 2 (b): "timeout"`},
		{"invalid UTF-8", "{\"tools\": [{\"name\": \"\xff\"}]}", "not valid JSON (at byte offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseToolsFile([]byte(tt.body))
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.Contains(t, err.Error(), tt.msg)
			if !strings.Contains(tt.msg, fileSecret) {
				assert.NotContains(t, err.Error(), fileSecret, "a value of the file never shows")
			}
		})
	}
}

// TestReadToolsFileRefusals: a file that cannot be read as one, or whose
// program cannot be found, is input naming the file and the tool, never
// the program or its arguments.
func TestReadToolsFileRefusals(t *testing.T) {
	tests := []struct {
		name string
		path func(t *testing.T) string
		msg  string
	}{
		{"missing", func(t *testing.T) string { return filepath.Join(testkit.TempDir(t), "none.json") }, "does not exist"},
		{"a directory", func(t *testing.T) string { return testkit.TempDir(t) }, "is not a regular file"},
		{"too large", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", toolsJSON(toolJSON(map[string]string{"description": `"` + strings.Repeat("a", MaxToolsFileSize) + `"`})))
		}, "is larger than 1048576 bytes"},
		{"bad JSON", func(t *testing.T) string { return testkit.TempFile(t, "tools.json", "{") }, "not valid JSON"},
		{"a program not found", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", toolsJSON(toolJSON(map[string]string{"command": `["` + fileSecret + `-prog", "` + fileSecret + `"]`})))
		}, "tool 1 (lookup_word): its program cannot be found"},
		{"a relative program not found", func(t *testing.T) string {
			return testkit.TempFile(t, "tools.json", toolsJSON(toolJSON(map[string]string{"command": `["./` + fileSecret + `"]`})))
		}, "tool 1 (lookup_word): its program cannot be found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path(t)
			_, err := ReadToolsFile(context.Background(), path, CommandOptions{Env: []string{"PATH=" + testkit.TempDir(t)}})
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.Contains(t, err.Error(), "tools file "+strconv.Quote(path))
			assert.Contains(t, err.Error(), tt.msg)
			assert.NotContains(t, err.Error(), fileSecret)
		})
	}
}

// FuzzParseToolsFile: whatever the bytes, the parser returns tools every
// bridge can publish or one short input error.
func FuzzParseToolsFile(f *testing.F) {
	f.Add([]byte(toolsJSON(toolJSON(nil))))
	f.Add([]byte(toolsJSON(toolJSON(nil), toolJSON(map[string]string{"name": `"b"`}))))
	f.Add([]byte(`{"tools": [{"name": "a", "inputSchema": {"type": "object"}, "command": ["x"], "timeout": "1h"}]}`))
	f.Add([]byte(`{"tools": [{"name": "a", "name": "b"}]}`))
	f.Add([]byte(`{"tools": null}`))
	f.Add([]byte(`{"tools": [{"x\u0000": 1}]}`))
	f.Add([]byte("{\"tools\": [{\"name\": \"\xff\"}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		specs, err := ParseToolsFile(data)
		if err != nil {
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.Less(t, len(err.Error()), 400, "a short message: %q", err.Error())
			return
		}
		require.NotEmpty(t, specs)
		tools := make([]Tool, len(specs))
		for i, s := range specs {
			require.NotEmpty(t, s.Command)
			require.NotEmpty(t, strings.TrimSpace(s.Command[0]))
			require.GreaterOrEqual(t, s.Timeout, time.Duration(0))
			tools[i] = Tool{Name: s.Name, InputSchema: s.InputSchema, Timeout: s.Timeout,
				Handle: func(context.Context, jsontext.Value) (string, error) { return "", nil }}
		}
		require.NoError(t, checkTools(tools), "every parsed tool can be published")
	})
}
