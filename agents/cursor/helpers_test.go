package cursor

import (
	"encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
)

// Realistic lines, as cursor-agent prints them.
const (
	initLine      = `{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/repo","session_id":"abc","model":"Claude 4.5 Sonnet","permissionMode":"default"}`
	userLine      = `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"SECRET PROMPT"}]},"session_id":"abc"}`
	resultLine    = `{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"duration_api_ms":1200,"result":"Hello","session_id":"abc","request_id":"r1","usage":{"inputTokens":10,"outputTokens":20,"cacheReadTokens":0,"cacheWriteTokens":0}}`
	thinkingDelta = `{"type":"thinking","subtype":"delta","text":"pondering","session_id":"abc","timestamp_ms":1}`
	thinkingDone  = `{"type":"thinking","subtype":"completed","session_id":"abc","timestamp_ms":2}`
	shellStarted  = `{"type":"tool_call","subtype":"started","call_id":"s1","tool_call":{"shellToolCall":{"args":{"command":"rm -rf /"}}},"session_id":"abc"}`
	mcpStarted    = `{"type":"tool_call","subtype":"started","call_id":"m1","tool_call":{"mcpToolCall":{"args":{"name":"x"}}},"session_id":"abc"}`
	// mcpStartedOf and mcpCompletedOnly are Cursor's MCP tool call, in the
	// shape public parsers of its stream record (docs/contract.md,
	// "Policy"): the started call names the server, the completed one may
	// carry only its result.
	mcpCompletedOnly = `{"type":"tool_call","subtype":"completed","call_id":"toolu_m","tool_call":{"mcpToolCall":{"result":{"success":{"content":[{"type":"text","text":"ok"}],"isError":false}}}},"model_call_id":"mc","session_id":"abc","timestamp_ms":3}`
	getMcpStarted    = `{"type":"tool_call","subtype":"started","call_id":"g1","tool_call":{"getMcpToolsToolCall":{"args":{}}},"session_id":"abc"}`
	unnamedToolCall  = `{"type":"tool_call","subtype":"started","call_id":"u1","tool_call":{"function":{"name":"read"}},"session_id":"abc"}`
)

// mcpStartedOf is a started MCP tool call of server's tool "search".
func mcpStartedOf(server string) string {
	return `{"type":"tool_call","subtype":"started","call_id":"toolu_m","tool_call":{"mcpToolCall":{"args":{"name":"` + server +
		`-search","args":{"q":"x"},"toolCallId":"toolu_m","providerIdentifier":"` + server +
		`","toolName":"search"}}},"model_call_id":"mc","session_id":"abc","timestamp_ms":2}`
}

func assistantJSON(text, modelCallID string, timestamp bool) string {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type message struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}
	var ts int64
	if timestamp {
		ts = 1770823449274
	}
	b, err := json.Marshal(struct {
		Type        string  `json:"type"`
		Message     message `json:"message"`
		SessionID   string  `json:"session_id"`
		ModelCallID string  `json:"model_call_id,omitzero"`
		TimestampMs int64   `json:"timestamp_ms,omitzero"`
	}{Type: "assistant", Message: message{"assistant", []block{{"text", text}}}, SessionID: "abc",
		ModelCallID: modelCallID, TimestampMs: ts})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// snap is a model call's complete text, flushLine the end-of-turn copy,
// deltaLine a --stream-partial-output piece.
func snap(call, text string) string { return assistantJSON(text, call, true) }
func flushLine(text string) string  { return assistantJSON(text, "", false) }
func deltaLine(text string) string  { return assistantJSON(text, "", true) }

func toolPair(id string) []string {
	return []string{
		`{"type":"tool_call","subtype":"started","call_id":"` + id + `","tool_call":{"readToolCall":{"args":{"path":"README.md"}}},"session_id":"abc"}`,
		`{"type":"tool_call","subtype":"completed","call_id":"` + id + `","tool_call":{"readToolCall":{"args":{"path":"README.md"},"result":{"success":{"content":"..."}}}},"session_id":"abc"}`,
	}
}

func errorResult(text string) string {
	b, err := json.Marshal(map[string]any{"type": "result", "subtype": "error", "is_error": true, "result": text, "session_id": "abc"})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// seq flattens strings and string slices into lines.
func seq(parts ...any) []string {
	var lines []string
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			lines = append(lines, v)
		case []string:
			lines = append(lines, v...)
		}
	}
	return lines
}

type feedResult struct {
	events  []event.Event
	err     error // the first Feed error
	errLine int   // 1-based index of the line that failed
}

func feedAll(t *testing.T, d *decoder, lines []string) feedResult {
	t.Helper()
	var r feedResult
	for i, l := range lines {
		evs, err := d.Feed([]byte(l))
		r.events = append(r.events, evs...)
		if err != nil {
			r.err, r.errLine = err, i+1
			return r
		}
	}
	return r
}

func eventTypes(evs []event.Event) []event.Type {
	var types []event.Type
	for _, e := range evs {
		types = append(types, e.Type)
	}
	return types
}

func newDecoder(t testing.TB, req Turn) *decoder {
	t.Helper()
	d, err := NewDecoder(req)
	require.NoError(t, err)
	return d.(*decoder)
}

func i64(n int64) *int64 { return &n }
