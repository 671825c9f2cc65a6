package event_test

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
)

func i64(n int64) *int64 { return &n }

// encode writes ev with the `run --json` encoder and returns its line.
func encode(t *testing.T, ev event.Event) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, ev.MarshalJSONTo(event.NewEncoder(&b)))
	return b.String()
}

// TestMarshalShapes holds every shape to the bytes `cursorkit run --json`
// wrote before events moved to encoding/json/v2 (stream.Output.AppendJSON):
// member order, null for what is absent, the usage shape, no HTML escaping.
func TestMarshalShapes(t *testing.T) {
	tests := []struct {
		name string
		ev   event.Event
		want string
	}{
		{"init", event.Event{Type: event.TypeInit, Init: &event.Init{SessionID: "s", Model: "M", CWD: "/r", PermissionMode: "default", APIKeySource: "login"}},
			`{"type":"init","sessionId":"s","model":"M","cwd":"/r","permissionMode":"default","apiKeySource":"login"}`},
		{"text", event.Event{Type: event.TypeText, Text: "a\"b\n<&>"}, `{"type":"text","text":"a\"b\n<&>"}`},
		{"text escapes", event.Event{Type: event.TypeText, Text: "\x00\x1f\t\r\\/é😀\u2028\u2029\x7f"},
			`{"type":"text","text":"\u0000\u001f\t\r\\/é😀\u2028\u2029` + "\x7f" + `"}`},
		{"thinking", event.Event{Type: event.TypeThinking, Subtype: "delta", Text: "hm"}, `{"type":"thinking","subtype":"delta","text":"hm"}`},
		{"thinking completed", event.Event{Type: event.TypeThinking, Subtype: "completed"}, `{"type":"thinking","subtype":"completed","text":""}`},
		{"tool started", event.Event{Type: event.TypeToolStarted, Tool: &event.Tool{CallID: "c", Name: "ls"}},
			`{"type":"tool_started","callId":"c","tool":"ls","args":null}`},
		{"tool started with args", event.Event{Type: event.TypeToolStarted, Tool: &event.Tool{CallID: "c\n1", Name: "read", Args: jsontext.Value(`{"path":"a"}`)}},
			`{"type":"tool_started","callId":"c\n1","tool":"read","args":{"path":"a"}}`},
		{"tool completed", event.Event{Type: event.TypeToolCompleted, Tool: &event.Tool{CallID: "c\n1", Name: "read",
			Args: jsontext.Value(`{"path":"a"}`), Status: "success", Result: jsontext.Value(`{"content":"x"}`)}},
			`{"type":"tool_completed","callId":"c\n1","tool":"read","args":{"path":"a"},"status":"success","result":{"content":"x"}}`},
		{"tool completed without result", event.Event{Type: event.TypeToolCompleted, Tool: &event.Tool{CallID: "c", Name: "ls"}},
			`{"type":"tool_completed","callId":"c","tool":"ls","args":null,"status":null,"result":null}`},
		{"tool values verbatim", event.Event{Type: event.TypeToolCompleted, Tool: &event.Tool{CallID: "c", Name: "x",
			Args: jsontext.Value(`{"p":"\u00e9\/\ud800<"}`), Status: "failure", Result: jsontext.Value(`null`)}},
			`{"type":"tool_completed","callId":"c","tool":"x","args":{"p":"\u00e9\/\ud800<"},"status":"failure","result":null}`},
		{"result", event.Event{Type: event.TypeResult, Result: &event.Result{Subtype: "success", Text: "ok", DurationMs: 5, DurationAPIMs: 4,
			SessionID: "s", RequestID: "r", Usage: event.Usage{Reported: true, InputTokens: i64(1), CacheWriteTokens: i64(0)}}},
			`{"type":"result","subtype":"success","isError":false,"result":"ok","durationMs":5,"durationApiMs":4,"sessionId":"s","requestId":"r","model":"",` +
				`"usage":{"reported":true,"inputTokens":1,"cacheWriteTokens":0}}`},
		{"error result, all usage", event.Event{Type: event.TypeResult, Result: &event.Result{Subtype: "error", IsError: true, Text: "limit",
			DurationMs: -1, Usage: event.Usage{Reported: true, InputTokens: i64(1), OutputTokens: i64(2), CacheReadTokens: i64(3), CacheWriteTokens: i64(4)}}},
			`{"type":"result","subtype":"error","isError":true,"result":"limit","durationMs":-1,"durationApiMs":0,"sessionId":"","requestId":"","model":"",` +
				`"usage":{"reported":true,"inputTokens":1,"outputTokens":2,"cacheReadTokens":3,"cacheWriteTokens":4}}`},
		{"warning", event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnBanner, Message: "m"}},
			`{"type":"warning","code":"banner","message":"m"}`},
		{"retry", event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnRetry, Message: "m",
			Retry: &event.Retry{Attempt: 1, Max: 10, DelayMs: 1000, Status: 429, Kind: failure.RateLimited}}},
			`{"type":"warning","code":"retry","message":"m","retry":{"attempt":1,"max":10,"delayMs":1000,"status":429,"kind":"rate_limited"}}`},
		{"retry without what was not said", event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnRetry, Message: "m",
			Retry: &event.Retry{Attempt: 2, Kind: failure.Network}}},
			`{"type":"warning","code":"retry","message":"m","retry":{"attempt":2,"kind":"network"}}`},
		{"unknown", event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: "x", Raw: jsontext.Value(`{"type":"x"}`)}},
			`{"type":"unknown","eventType":"x","subtype":"","raw":{"type":"x"}}`},
		{"unknown keeps a repeated name", event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: "x", Subtype: "y", Raw: jsontext.Value(`{"type":"x","subtype":"y","a":1,"a":2}`)}},
			`{"type":"unknown","eventType":"x","subtype":"y","raw":{"type":"x","subtype":"y","a":1,"a":2}}`},
		{"nil pointers are zero values: init", event.Event{Type: event.TypeInit},
			`{"type":"init","sessionId":"","model":"","cwd":"","permissionMode":"","apiKeySource":""}`},
		{"nil pointers are zero values: tool", event.Event{Type: event.TypeToolStarted}, `{"type":"tool_started","callId":"","tool":"","args":null}`},
		{"nil pointers are zero values: result", event.Event{Type: event.TypeResult},
			`{"type":"result","subtype":"","isError":false,"result":"","durationMs":0,"durationApiMs":0,"sessionId":"","requestId":"","model":"","usage":{"reported":false}}`},
		{"nil pointers are zero values: warning", event.Event{Type: event.TypeWarning}, `{"type":"warning","code":"","message":""}`},
		{"nil pointers are zero values: unknown", event.Event{Type: event.TypeUnknown}, `{"type":"unknown","eventType":"","subtype":"","raw":null}`},
		{"fallback engaged", event.Event{Type: event.TypeFallbackEngaged, Fallback: &event.Fallback{SessionPurpose: "run",
			PrimaryAgent: "claude", PrimaryProvider: "anthropic", PrimaryModel: "opus", FallbackAgent: "cursor", FallbackProvider: "cursor",
			FallbackModel: "gpt-5", TriggerPoint: "result", PromptIndex: 1, FailureCategory: "authentication", ContextTransferred: true}},
			`{"type":"cross-runtime-fallback-engaged","sessionPurpose":"run","primaryAgent":"claude","primaryProvider":"anthropic","primaryModel":"opus",` +
				`"fallbackAgent":"cursor","fallbackProvider":"cursor","fallbackModel":"gpt-5","triggerPoint":"result","promptIndex":1,` +
				`"failureCategory":"authentication","contextTransferred":true}`},
		{"nil pointers are zero values: fallback", event.Event{Type: event.TypeFallbackEngaged},
			`{"type":"cross-runtime-fallback-engaged","sessionPurpose":"","primaryAgent":"","primaryProvider":"","primaryModel":"",` +
				`"fallbackAgent":"","fallbackProvider":"","fallbackModel":"","triggerPoint":"","promptIndex":0,"failureCategory":"","contextTransferred":false}`},
		{"another type", event.Event{Type: "outcome", Text: "ignored"}, `{"type":"outcome"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want+"\n", encode(t, tt.ev))
			// json.Marshal finds the method, on a value and on a pointer.
			for _, v := range []any{tt.ev, &tt.ev} {
				b, err := json.Marshal(v, jsontext.EscapeForJS(true), jsontext.AllowInvalidUTF8(true),
					jsontext.AllowDuplicateNames(true), jsontext.PreserveRawStrings(true))
				require.NoError(t, err)
				assert.Equal(t, tt.want, string(b))
			}
		})
	}
}

// TestMarshalDifferences pins where the encoder differs from the writer
// `run --json` used before json/v2: \b and \f get their short escapes,
// invalid UTF-8 in a string field becomes the character U+FFFD rather than
// the escape \ufffd, and U+2028/U+2029 are escaped inside the agent's
// values too. Each decodes to the same strings as before.
func TestMarshalDifferences(t *testing.T) {
	raw := encode(t, event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Raw: jsontext.Value("{\"a\":\"\u2028\"}")}})
	assert.Equal(t, `{"type":"unknown","eventType":"","subtype":"","raw":{"a":"\u2028"}}`+"\n", raw)

	tests := []struct {
		text, want, before string
	}{
		{"\b\f", `"\b\f"`, `"\u0008\u000c"`},
		{"a\xffb\xe2\x82", "\"a\uFFFDb\uFFFD\uFFFD\"", `"a\ufffdb\ufffd\ufffd"`},
	}
	for _, tt := range tests {
		line := encode(t, event.Event{Type: event.TypeText, Text: tt.text})
		assert.Equal(t, `{"type":"text","text":`+tt.want+"}\n", line)
		var got, before string
		require.NoError(t, json.Unmarshal([]byte(tt.want), &got))
		require.NoError(t, json.Unmarshal([]byte(tt.before), &before))
		assert.Equal(t, before, got)
	}
}

func TestMarshalStrictEncoder(t *testing.T) {
	// The defaults of json.Marshal refuse what an agent may send and
	// NewEncoder accepts: the error comes back, nothing is half written.
	ev := event.Event{Type: event.TypeUnknown, Unknown: &event.Unknown{Raw: jsontext.Value("{\"a\":\"\xff\"}")}}
	_, err := json.Marshal(ev)
	require.Error(t, err)
	assert.Equal(t, "{\"type\":\"unknown\",\"eventType\":\"\",\"subtype\":\"\",\"raw\":{\"a\":\"\xff\"}}\n", encode(t, ev))

	_, err = json.Marshal(event.Event{Type: event.TypeToolStarted, Tool: &event.Tool{Args: jsontext.Value(`{"a":`)}})
	require.Error(t, err, "args that are not JSON")
}

func TestNewEncoderOneLinePerEvent(t *testing.T) {
	var b bytes.Buffer
	enc := event.NewEncoder(&b)
	for _, ev := range []event.Event{
		{Type: event.TypeText, Text: "one\ntwo"},
		{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: "x", Raw: jsontext.Value(`{ "type" : "x" , "v" : [ 1 , 2 ] }`)}},
	} {
		require.NoError(t, enc.WriteValue(mustMarshal(t, ev)))
	}
	assert.Equal(t, []string{
		`{"type":"text","text":"one\ntwo"}`,
		`{"type":"unknown","eventType":"x","subtype":"","raw":{"type":"x","v":[1,2]}}`, // compacted
		``,
	}, strings.Split(b.String(), "\n"))
}

func mustMarshal(t *testing.T, ev event.Event) jsontext.Value {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, ev.MarshalJSONTo(event.NewEncoder(&b)))
	return jsontext.Value(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func TestUsageJSON(t *testing.T) {
	tests := []struct {
		u    event.Usage
		want string
	}{
		{event.Usage{}, `{"reported":false}`},
		{event.Usage{Reported: true}, `{"reported":true}`},
		{event.Usage{Reported: true, OutputTokens: i64(0)}, `{"reported":true,"outputTokens":0}`},
		{event.Usage{Reported: true, InputTokens: i64(1), OutputTokens: i64(2), CacheReadTokens: i64(3), CacheWriteTokens: i64(-4)},
			`{"reported":true,"inputTokens":1,"outputTokens":2,"cacheReadTokens":3,"cacheWriteTokens":-4}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.u)
		require.NoError(t, err)
		assert.Equal(t, tt.want, string(b))
		var back event.Usage
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, tt.u, back)
	}
}

func TestWarningJSON(t *testing.T) {
	b, err := json.Marshal(event.Warning{Code: event.WarnLateClose, Message: "stopped <late>"})
	require.NoError(t, err)
	assert.Equal(t, `{"code":"late_close","message":"stopped <late>"}`, string(b))
}

// FuzzMarshalText holds text events to valid JSON lines that decode back
// to the text (with invalid UTF-8 replaced, as JSON cannot carry it).
func FuzzMarshalText(f *testing.F) {
	for _, s := range []string{"", "a\"b\\\n", "\u2028é\xff", strings.Repeat("abcdefgh", 3) + "\x00", "<script>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line := encode(t, event.Event{Type: event.TypeText, Text: s})
		require.True(t, strings.HasSuffix(line, "\n"))
		require.Equal(t, 1, strings.Count(line, "\n"), "one line")
		require.NotContains(t, line, "\u2028")
		require.NotContains(t, line, "\u2029")
		var back struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &back))
		assert.Equal(t, "text", back.Type)
		assert.Equal(t, string([]rune(s)), back.Text, "each invalid byte is one U+FFFD")
	})
}

func TestToolSummary(t *testing.T) {
	tests := []struct {
		tool event.Tool
		want string
	}{
		{event.Tool{Name: "read", Args: jsontext.Value(`{"path":"README.md","limit":10}`)}, "read README.md"},
		{event.Tool{Name: "shell", Args: jsontext.Value(`{"command":"go test ./...\nrm -rf /","timeout":5}`)}, "shell go test ./... rm -rf /"},
		{event.Tool{Name: "grep", Args: jsontext.Value(`{"pattern":"TODO","path":""}`)}, "grep TODO"},
		{event.Tool{Name: "glob", Args: jsontext.Value(`{"globPattern":"*.go","path":1}`)}, "glob *.go"},
		{event.Tool{Name: "ls", Args: jsontext.Value(`[1]`)}, "ls"},
		{event.Tool{Name: "ls", Args: jsontext.Value(`{"path":`)}, "ls"},
		{event.Tool{Name: "mcp"}, "mcp"},
		{event.Tool{}, "(unidentified tool)"},
		{event.Tool{Name: "read", Args: jsontext.Value(`{"path":"` + strings.Repeat("a", 300) + `"}`)}, "read " + strings.Repeat("a", 115) + "…"},
		{event.Tool{Name: "read", Args: jsontext.Value(`{"path":"` + strings.Repeat("é", 100) + `"}`)}, "read " + strings.Repeat("é", 57) + "…"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.tool.Summary())
	}
}

// TestWriterInterleavesIntoBytesBuffer: a Writer's events and a value
// written through its Encoder land in a bytes.Buffer in order (an
// Encoder on a *bytes.Buffer appends into its spare capacity).
func TestWriterInterleavesIntoBytesBuffer(t *testing.T) {
	retry := event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnRetry, Message: "m",
		Retry: &event.Retry{Attempt: 1, Kind: failure.Network}}}
	var b bytes.Buffer
	w := event.NewWriter(&b)
	require.NoError(t, w.Write(retry))
	require.NoError(t, w.Write(event.Event{Type: event.TypeText, Text: "hi"}))
	require.NoError(t, json.MarshalEncode(w.Encoder(), retry.Warning))
	assert.Equal(t, `{"type":"warning","code":"retry","message":"m","retry":{"attempt":1,"kind":"network"}}`+"\n"+
		`{"type":"text","text":"hi"}`+"\n"+`{"code":"retry","message":"m","retry":{"attempt":1,"kind":"network"}}`+"\n", b.String())
}
