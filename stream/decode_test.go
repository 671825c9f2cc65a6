package stream

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

func i64(n int64) *int64 { return &n }

func TestDecodeEvents(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Event
	}{
		{
			name: "system init",
			line: `{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/repo","session_id":"abc","model":"Claude 4.5 Sonnet","permissionMode":"default"}`,
			want: &Init{SessionID: "abc", Model: "Claude 4.5 Sonnet", CWD: "/repo", PermissionMode: "default", APIKeySource: "login"},
		},
		{
			name: "system init with missing fields",
			line: `{"type":"system","subtype":"init"}`,
			want: &Init{},
		},
		{
			name: "system of another subtype is unknown",
			line: `{"type":"system","subtype":"compact","session_id":"abc"}`,
			want: &Unknown{Type: "system", Subtype: "compact", Raw: json.RawMessage(`{"type":"system","subtype":"compact","session_id":"abc"}`)},
		},
		{
			name: "user",
			line: `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"the prompt"}]},"session_id":"abc"}`,
			want: &User{SessionID: "abc", Text: "the prompt"},
		},
		{
			name: "thinking delta",
			line: `{"type":"thinking","subtype":"delta","text":"hmm","session_id":"abc","timestamp_ms":1770823434041}`,
			want: &Thinking{Subtype: "delta", Text: "hmm", SessionID: "abc", TimestampMs: 1770823434041, HasTimestamp: true},
		},
		{
			name: "thinking completed",
			line: `{"type":"thinking","subtype":"completed","session_id":"abc","timestamp_ms":5}`,
			want: &Thinking{Subtype: "completed", SessionID: "abc", TimestampMs: 5, HasTimestamp: true},
		},
		{
			name: "assistant with model_call_id",
			line: `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hello"}]},"session_id":"abc","model_call_id":"m1","timestamp_ms":1}`,
			want: &Assistant{Text: "Hello", ModelCallID: "m1", TimestampMs: 1, HasTimestamp: true, SessionID: "abc"},
		},
		{
			name: "assistant final copy",
			line: `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hello"}]},"session_id":"abc"}`,
			want: &Assistant{Text: "Hello", SessionID: "abc"},
		},
		{
			name: "assistant text blocks concatenated, other blocks skipped",
			line: `{"type":"assistant","message":{"content":[{"type":"text","text":"a"},{"type":"image","text":"x"},{"type":"text","text":"b"},{"type":"text","text":null},{"type":"text"}]}}`,
			want: &Assistant{Text: "ab"},
		},
		{
			name: "assistant content as a plain string",
			line: `{"type":"assistant","message":{"content":"plain"}}`,
			want: &Assistant{Text: "plain"},
		},
		{
			name: "assistant without message",
			line: `{"type":"assistant","message":null,"timestamp_ms":null}`,
			want: &Assistant{},
		},
		{
			name: "assistant escapes, surrogate pairs, lone surrogates",
			line: `{"type":"assistant","message":{"content":[{"type":"text","text":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x\udc00"}]}}`,
			want: &Assistant{Text: "a\"b\\c/d\b\f\n\r\té😀\uFFFDx\uFFFD"},
		},
		{
			name: "escaped keys match",
			line: `{"\u0074ype":"assistant","message":{"\u0063ontent":[{"typ\u0065":"text","t\u0065xt":"hi"}]}}`,
			want: &Assistant{Text: "hi"},
		},
		{
			name: "a repeated key: the last value wins",
			line: `{"type":"thinking","type":"assistant","message":{"content":[{"type":"text","text":"one"}]},"message":{"content":[{"type":"text","text":"two"}]}}`,
			want: &Assistant{Text: "two"},
		},
		{
			name: "tool_call started, call_id with a newline",
			line: `{"type":"tool_call","subtype":"started","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"args":{"path":"README.md"}}},"session_id":"abc","model_call_id":"m1","timestamp_ms":7}`,
			want: &ToolCall{Subtype: "started", CallID: "toolu_1\nx", Name: "read", Key: "readToolCall",
				Args: json.RawMessage(`{"path":"README.md"}`), SessionID: "abc", ModelCallID: "m1", TimestampMs: 7},
		},
		{
			name: "tool_call completed with success",
			line: `{"type":"tool_call","subtype":"completed","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"args":{"path":"README.md"},"result":{"success":{"content":"..."}}}},"session_id":"abc"}`,
			want: &ToolCall{Subtype: "completed", CallID: "toolu_1\nx", Name: "read", Key: "readToolCall",
				Args: json.RawMessage(`{"path":"README.md"}`), Result: &ToolResult{Status: "success", Value: json.RawMessage(`{"content":"..."}`)}, SessionID: "abc"},
		},
		{
			name: "tool_call completed with failure",
			line: `{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":{"result":{"failure":{"message":"no"}}}}}`,
			want: &ToolCall{Subtype: "completed", CallID: "c", Name: "shell", Key: "shellToolCall", Result: &ToolResult{Status: "failure", Value: json.RawMessage(`{"message":"no"}`)}},
		},
		{
			name: "tool_call completed as rejected",
			line: `{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"editToolCall":{"args":null,"result":{"rejected":{}}}}}`,
			want: &ToolCall{Subtype: "completed", CallID: "c", Name: "edit", Key: "editToolCall", Result: &ToolResult{Status: "rejected", Value: json.RawMessage(`{}`)}},
		},
		{
			name: "mcp tool",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"mcpToolCall":{"args":{"name":"x"}}}}`,
			want: &ToolCall{Subtype: "started", CallID: "c", Name: "mcp", Key: "mcpToolCall", Args: json.RawMessage(`{"name":"x"}`)},
		},
		{
			name: "the first key ending in ToolCall names the tool",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"meta":1,"ToolCall":{},"updateTodosToolCall":{"args":[1]},"shellToolCall":{}}}`,
			want: &ToolCall{Subtype: "started", CallID: "c", Name: "updateTodos", Key: "updateTodosToolCall", Args: json.RawMessage(`[1]`)},
		},
		{
			name: "tool_call naming no tool",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"function":{"name":"read"}}}`,
			want: &ToolCall{Subtype: "started", CallID: "c"},
		},
		{
			name: "result with usage",
			line: `{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"duration_api_ms":1200,"result":"Hello","session_id":"abc","request_id":"r1","usage":{"inputTokens":10,"outputTokens":20,"cacheReadTokens":0,"cacheWriteTokens":0}}`,
			want: &Result{Subtype: "success", Text: "Hello", DurationMs: 1234, DurationAPIMs: 1200, SessionID: "abc", RequestID: "r1",
				Usage: Usage{Reported: true, InputTokens: i64(10), OutputTokens: i64(20), CacheReadTokens: i64(0), CacheWriteTokens: i64(0)}},
		},
		{
			name: "result without usage is unreported",
			line: `{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"abc"}`,
			want: &Result{Subtype: "success", Text: "ok", SessionID: "abc"},
		},
		{
			name: "result with partial usage keeps only what was reported",
			line: `{"type":"result","subtype":"success","usage":{"outputTokens":3,"inputTokens":null,"other":9}}`,
			want: &Result{Subtype: "success", Usage: Usage{Reported: true, OutputTokens: i64(3)}},
		},
		{
			name: "error result",
			line: `{"type":"result","subtype":"error","is_error":true,"result":"You've hit your usage limit"}`,
			want: &Result{Subtype: "error", IsError: true, Text: "You've hit your usage limit"},
		},
		{
			name: "unknown type passes through",
			line: `  {"type":"compaction","subtype":"x","data":[1,2]}  `,
			want: &Unknown{Type: "compaction", Subtype: "x", Raw: json.RawMessage(`{"type":"compaction","subtype":"x","data":[1,2]}`)},
		},
		{
			name: "no type",
			line: `{"hello":"world"}`,
			want: &Unknown{Raw: json.RawMessage(`{"hello":"world"}`)},
		},
		{
			name: "a type that is not a string",
			line: `{"type":5}`,
			want: &Unknown{Raw: json.RawMessage(`{"type":5}`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode([]byte(tt.line))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.want.EventType(), got.EventType())
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		notJSON bool
		offset  int
		event   string
		reason  string
	}{
		{name: "banner text", line: "Cursor Agent v2026", notJSON: true, offset: 0, reason: "invalid character 'C'"},
		{name: "truncated object", line: `{"type":"assistant","message":{"content":[{"type":"text","text":"Hel`, notJSON: true, offset: 68, reason: "unexpected end of JSON input"},
		{name: "trailing garbage", line: `{"type":"user"} x`, notJSON: true, offset: 16, reason: "after top-level value"},
		{name: "JSON but not an object", line: `[1,2]`, notJSON: true, reason: "not an object"},
		{name: "bad escape", line: `{"a":"\x"}`, notJSON: true, offset: 7, reason: "in string escape code"},
		{name: "raw control character", line: "{\"a\":\"\x01\"}", notJSON: true, offset: 6, reason: "in string literal"},
		{name: "empty", line: "", notJSON: true, reason: "unexpected end of JSON input"},
		{name: "session_id not a string", line: `{"type":"system","subtype":"init","session_id":5}`, offset: 47, event: "system", reason: `field "session_id" is not a string`},
		{name: "timestamp not an integer", line: `{"type":"assistant","timestamp_ms":1.5}`, offset: 35, event: "assistant", reason: `field "timestamp_ms" is not a 64-bit integer`},
		{name: "timestamp out of range", line: `{"type":"thinking","timestamp_ms":99999999999999999999}`, offset: 34, event: "thinking", reason: "64-bit integer"},
		{name: "message not an object", line: `{"type":"assistant","message":"hi"}`, offset: 30, event: "assistant", reason: `field "message" is not an object`},
		{name: "content a number", line: `{"type":"assistant","message":{"content":7}}`, offset: 41, event: "assistant", reason: "neither an array nor a string"},
		{name: "content element not an object", line: `{"type":"user","message":{"content":["x"]}}`, offset: 37, event: "user", reason: "not an object"},
		{name: "text not a string", line: `{"type":"assistant","message":{"content":[{"type":"text","text":1}]}}`, offset: 64, event: "assistant", reason: `"text" is not a string`},
		{name: "tool_call not an object", line: `{"type":"tool_call","tool_call":[]}`, offset: 32, event: "tool_call", reason: `field "tool_call" is not an object`},
		{name: "tool body not an object", line: `{"type":"tool_call","tool_call":{"readToolCall":1}}`, offset: 48, event: "tool_call", reason: `"tool_call.readToolCall" is not an object`},
		{name: "tool result not an object", line: `{"type":"tool_call","tool_call":{"readToolCall":{"result":"ok"}}}`, offset: 58, event: "tool_call", reason: "result\" is not an object"},
		{name: "is_error not a boolean", line: `{"type":"result","is_error":"yes"}`, offset: 28, event: "result", reason: `field "is_error" is not a boolean`},
		{name: "usage not an object", line: `{"type":"result","usage":[]}`, offset: 25, event: "result", reason: `field "usage" is not an object`},
		{name: "usage field not an integer", line: `{"type":"result","usage":{"inputTokens":"10"}}`, offset: 40, event: "result", reason: `"usage.inputTokens" is not a 64-bit integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Decode([]byte(tt.line))
			require.Error(t, err)
			assert.Nil(t, ev)
			assert.Equal(t, failure.Protocol, failure.KindOf(err))
			var de *DecodeError
			require.True(t, errors.As(err, &de))
			assert.Equal(t, tt.notJSON, de.NotJSON)
			assert.Equal(t, tt.offset, de.Offset, "offset")
			assert.Equal(t, tt.event, de.Event)
			assert.Contains(t, de.Reason, tt.reason)
			assert.Contains(t, err.Error(), "byte offset")
		})
	}
}

func TestDecodeDoesNotAliasLine(t *testing.T) {
	line := []byte(`{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a"}}}}`)
	ev, err := Decode(line)
	require.NoError(t, err)
	for i := range line {
		line[i] = 'X'
	}
	tc := ev.(*ToolCall)
	assert.Equal(t, "c1", tc.CallID)
	assert.Equal(t, "read", tc.Name)
	assert.JSONEq(t, `{"path":"a"}`, string(tc.Args))
}

func TestDecodeDepthLimit(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(`{"type":"x","v":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	_, err := Decode(deep(maxDepth))
	require.NoError(t, err, "encoding/json accepts %d levels", maxDepth)
	assert.True(t, json.Valid(deep(maxDepth)))
	_, err = Decode(deep(maxDepth + 1))
	require.Error(t, err)
	assert.False(t, json.Valid(deep(maxDepth+1)))
	assert.Contains(t, err.Error(), "exceeded max depth")
}

func TestDecodeRecentIDs(t *testing.T) {
	var ids recent
	lines := []string{
		`{"type":"assistant","session_id":"abc","model_call_id":"m1"}`,
		`{"type":"assistant","session_id":"abc","model_call_id":"m1"}`,
		`{"type":"assistant","session_id":"a\u0062c","model_call_id":"m\u0031"}`,
		`{"type":"assistant","session_id":"abc","model_call_id":"m2"}`,
		"{\"type\":\"assistant\",\"session_id\":\"ab\xff\",\"model_call_id\":null}",
		"{\"type\":\"assistant\",\"session_id\":\"ab\xff\"}",
		`{"type":"assistant","session_id":5}`,
	}
	for _, l := range lines {
		want, wantErr := Decode([]byte(l))
		got, err := decode([]byte(l), &ids)
		assert.Equal(t, wantErr, err, l)
		assert.Equal(t, want, got, l)
	}
}

func TestToolCallSummary(t *testing.T) {
	tests := []struct {
		call ToolCall
		want string
	}{
		{ToolCall{Name: "read", Args: json.RawMessage(`{"path":"README.md","limit":10}`)}, "read README.md"},
		{ToolCall{Name: "shell", Args: json.RawMessage(`{"command":"go test ./...\nrm -rf /","timeout":5}`)}, "shell go test ./... rm -rf /"},
		{ToolCall{Name: "grep", Args: json.RawMessage(`{"pattern":"TODO","path":""}`)}, "grep TODO"},
		{ToolCall{Name: "ls", Args: json.RawMessage(`[1]`)}, "ls"},
		{ToolCall{Name: "mcp"}, "mcp"},
		{ToolCall{}, "(unidentified tool)"},
		{ToolCall{Name: "read", Args: json.RawMessage(`{"path":"` + strings.Repeat("a", 300) + `"}`)}, "read " + strings.Repeat("a", 115) + "…"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.call.Summary())
	}
}

// TestDecodeAssistantHead checks the shortcut for lines that start with
// assistantHead against the general reading of the same line, which a
// leading space forces.
func TestDecodeAssistantHead(t *testing.T) {
	for _, line := range headLines() {
		t.Run(line[len(assistantHead):], func(t *testing.T) {
			got, gotErr := Decode([]byte(line))
			want, wantErr := Decode([]byte(" " + line))
			assert.Equal(t, want, got)
			if wantErr == nil {
				assert.NoError(t, gotErr)
				return
			}
			require.Error(t, gotErr)
			var g, w *DecodeError
			require.ErrorAs(t, gotErr, &g)
			require.ErrorAs(t, wantErr, &w)
			assert.Equal(t, w.NotJSON, g.NotJSON)
			assert.Equal(t, w.Offset-1, g.Offset)
			assert.Equal(t, w.Reason, g.Reason)
		})
	}
	a, err := Decode([]byte(headLines()[1]))
	require.NoError(t, err)
	assert.Equal(t, &Assistant{Text: "Hello", ModelCallID: "m1", TimestampMs: 1, HasTimestamp: true, SessionID: "abc"}, a)
}
