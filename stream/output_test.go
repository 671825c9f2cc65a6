package stream

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOutputJSON(t *testing.T) {
	tool := &ToolCall{Subtype: "completed", CallID: "c\n1", Name: "read", Args: json.RawMessage(`{"path":"a"}`),
		Result: &ToolResult{Status: "success", Value: json.RawMessage(`{"content":"x"}`)}}
	tests := []struct {
		name string
		out  Output
		want string
	}{
		{"init", Output{Type: OutputInit, Init: &Init{SessionID: "s", Model: "M", CWD: "/r", PermissionMode: "default", APIKeySource: "login"}},
			`{"type":"init","sessionId":"s","model":"M","cwd":"/r","permissionMode":"default","apiKeySource":"login"}`},
		{"text", Output{Type: OutputText, Text: "a\"b\n<&>"}, `{"type":"text","text":"a\"b\n<&>"}`},
		{"thinking", Output{Type: OutputThinking, Text: "hm", Thinking: &Thinking{Subtype: "delta", Text: "hm"}},
			`{"type":"thinking","subtype":"delta","text":"hm"}`},
		{"tool started", Output{Type: OutputToolStarted, Tool: &ToolCall{CallID: "c", Name: "ls"}},
			`{"type":"tool_started","callId":"c","tool":"ls","args":null}`},
		{"tool completed", Output{Type: OutputToolCompleted, Tool: tool},
			`{"type":"tool_completed","callId":"c\n1","tool":"read","args":{"path":"a"},"status":"success","result":{"content":"x"}}`},
		{"tool completed without result", Output{Type: OutputToolCompleted, Tool: &ToolCall{CallID: "c", Name: "ls"}},
			`{"type":"tool_completed","callId":"c","tool":"ls","args":null,"status":null,"result":null}`},
		{"result", Output{Type: OutputResult, Result: &Result{Subtype: "success", Text: "ok", DurationMs: 5, DurationAPIMs: 4,
			SessionID: "s", RequestID: "r", Usage: Usage{Reported: true, InputTokens: i64(1), CacheWriteTokens: i64(0)}}},
			`{"type":"result","subtype":"success","isError":false,"result":"ok","durationMs":5,"durationApiMs":4,"sessionId":"s","requestId":"r",
			  "usage":{"reported":true,"inputTokens":1,"cacheWriteTokens":0}}`},
		{"warning", Output{Type: OutputWarning, Warning: Warning{Code: WarnBanner, Message: "m"}}, `{"type":"warning","code":"banner","message":"m"}`},
		{"unknown", Output{Type: OutputUnknown, Unknown: &Unknown{Type: "x", Raw: json.RawMessage(`{"type":"x"}`)}},
			`{"type":"unknown","eventType":"x","subtype":"","raw":{"type":"x"}}`},
		{"nil pointers are empty values", Output{Type: OutputResult}, `{"type":"result","subtype":"","isError":false,"result":"","durationMs":0,"durationApiMs":0,"sessionId":"","requestId":"","usage":{"reported":false}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.out.AppendJSON([]byte("prefix"))
			require.True(t, strings.HasPrefix(string(got), "prefix"))
			assert.JSONEq(t, tt.want, string(got[len("prefix"):]))
			m, err := json.Marshal(tt.out)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(m))
		})
	}
}

func TestUsageJSONMatchesTags(t *testing.T) {
	for _, u := range []Usage{{}, {Reported: true}, {Reported: true, InputTokens: i64(1), OutputTokens: i64(2), CacheReadTokens: i64(3), CacheWriteTokens: i64(-4)}} {
		viaTags, err := json.Marshal(struct{ U Usage }{u})
		require.NoError(t, err)
		var wrapped struct{ U json.RawMessage }
		require.NoError(t, json.Unmarshal(viaTags, &wrapped))
		assert.JSONEq(t, string(wrapped.U), string(u.AppendJSON(nil)))
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", "quote\" back\\ slash", "\x00\x01\x1f\x7f", "\t\n\r\b\f", "é😀", "\u2028\u2029",
		"bad \xff utf8 \xe2\x82", strings.Repeat("abcdefgh", 100) + "\n" + strings.Repeat("é", 33), "<script>&"}
	for _, s := range cases {
		checkAppendString(t, s)
	}
}

// checkAppendString holds appendString to encoding/json: the same value
// after decoding, and valid JSON.
func checkAppendString(t *testing.T, s string) {
	t.Helper()
	got := appendString(nil, s)
	require.True(t, json.Valid(got), "%q -> %s", s, got)
	require.True(t, utf8.Valid(got), "%q", s)
	var back, want string
	require.NoError(t, json.Unmarshal(got, &back))
	std, err := json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(std, &want))
	assert.Equal(t, want, back, "%q", s)
	assert.NotContains(t, string(got), "\u2028")
}
