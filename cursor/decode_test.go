package cursor

import (
	stdjson "encoding/json"
	"encoding/json/jsontext"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
)

// decoded is what a line says, as the tests compare it: the members its
// kind of event uses, the others zero.
type decoded struct {
	Kind                  eventKind
	Type, Subtype         string
	SessionID             string
	Init                  event.Init
	Text                  string // user, assistant: the message's text; thinking: text; result: result
	ModelCallID           string
	Timestamp             *int64
	CallID                string
	Tool                  toolFields
	IsError               bool
	Duration, DurationAPI int64
	RequestID             string
	Usage                 event.Usage
}

func view(f *fields) decoded {
	w := &f.w
	d := decoded{Kind: f.kind, Type: w.Type}
	var ts *int64
	if w.TimestampMs.ok {
		ts = &w.TimestampMs.n
	}
	switch f.kind {
	case kindUnknown:
		d.Subtype = w.Subtype
	case kindInit:
		d.Subtype = w.Subtype
		d.Init = event.Init{SessionID: w.SessionID, Model: w.Model, CWD: w.CWD, PermissionMode: w.PermissionMode, APIKeySource: w.APIKeySource}
	case kindUser:
		d.SessionID, d.Text = w.SessionID, f.text
	case kindThinking:
		d.Subtype, d.Text, d.SessionID, d.Timestamp = w.Subtype, w.Text, w.SessionID, ts
	case kindAssistant:
		d.Text, d.ModelCallID, d.SessionID, d.Timestamp = f.text, w.ModelCallID, w.SessionID, ts
	case kindToolCall:
		d.Subtype, d.CallID, d.ModelCallID, d.SessionID, d.Timestamp, d.Tool = w.Subtype, w.CallID, w.ModelCallID, w.SessionID, ts, f.tool
	case kindResult:
		d.Subtype, d.IsError, d.Text, d.SessionID, d.RequestID, d.Usage = w.Subtype, w.IsError, w.Result, w.SessionID, w.RequestID, f.usage
		d.Duration, d.DurationAPI = w.DurationMs, w.DurationAPIMs
	}
	return d
}

// decodeLine decodes line with a fresh reader, both ways: json.Unmarshal
// first (decode) and the member walk alone. It requires the two to agree
// whenever the first way reads the line, and returns the walk's verdict.
func decodeLine(t *testing.T, line string) (decoded, *decodeError) {
	t.Helper()
	r := newLineReader()
	b := []byte(line)
	f, err := r.decode(b)
	got := view(f)
	w := newLineReader()
	werr := w.walk(b)
	want := view(&w.f)
	require.Equal(t, line, string(b), "reading a line leaves it alone")
	require.Equal(t, werr, err, "decode and the walk agree on the verdict")
	if err == nil {
		require.Equal(t, want, got, "decode and the walk agree on the values")
	}
	return want, werr
}

func TestDecodeEvents(t *testing.T) {
	tests := []struct {
		name string
		line string
		want decoded
	}{
		{
			name: "system init",
			line: initLine,
			want: decoded{Kind: kindInit, Type: "system", Subtype: "init",
				Init: event.Init{SessionID: "abc", Model: "Claude 4.5 Sonnet", CWD: "/repo", PermissionMode: "default", APIKeySource: "login"}},
		},
		{
			name: "system init with missing fields",
			line: `{"type":"system","subtype":"init"}`,
			want: decoded{Kind: kindInit, Type: "system", Subtype: "init"},
		},
		{
			name: "system of another subtype is unknown",
			line: `{"type":"system","subtype":"compact","session_id":"abc"}`,
			want: decoded{Kind: kindUnknown, Type: "system", Subtype: "compact"},
		},
		{
			name: "system of another subtype may hold anything",
			line: `{"type":"system","subtype":"compact","session_id":5,"model":[]}`,
			want: decoded{Kind: kindUnknown, Type: "system", Subtype: "compact"},
		},
		{
			name: "system with a subtype that is not a string is unknown",
			line: `{"type":"system","subtype":1}`,
			want: decoded{Kind: kindUnknown, Type: "system"},
		},
		{
			name: "user",
			line: userLine,
			want: decoded{Kind: kindUser, Type: "user", SessionID: "abc", Text: "SECRET PROMPT"},
		},
		{
			name: "thinking delta",
			line: `{"type":"thinking","subtype":"delta","text":"hmm","session_id":"abc","timestamp_ms":1770823434041}`,
			want: decoded{Kind: kindThinking, Type: "thinking", Subtype: "delta", Text: "hmm", SessionID: "abc", Timestamp: i64(1770823434041)},
		},
		{
			name: "thinking completed",
			line: `{"type":"thinking","subtype":"completed","session_id":"abc","timestamp_ms":5}`,
			want: decoded{Kind: kindThinking, Type: "thinking", Subtype: "completed", SessionID: "abc", Timestamp: i64(5)},
		},
		{
			name: "assistant with model_call_id",
			line: `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hello"}]},"session_id":"abc","model_call_id":"m1","timestamp_ms":1}`,
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "Hello", ModelCallID: "m1", Timestamp: i64(1), SessionID: "abc"},
		},
		{
			name: "assistant final copy",
			line: `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hello"}]},"session_id":"abc"}`,
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "Hello", SessionID: "abc"},
		},
		{
			name: "assistant members in another order",
			line: `{"session_id":"abc","timestamp_ms":7,"message":{"content":[{"text":"Hello","type":"text"}],"role":"assistant"},"type":"assistant"}`,
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "Hello", Timestamp: i64(7), SessionID: "abc"},
		},
		{
			name: "assistant text blocks concatenated, other blocks skipped",
			line: `{"type":"assistant","message":{"content":[{"type":"text","text":"a"},{"type":"image","text":"x"},{"type":"text","text":"b"},{"type":"text","text":null},{"type":"text"}]}}`,
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "ab"},
		},
		{
			name: "blocks of other types may hold anything",
			line: `{"type":"assistant","message":{"content":[{"type":"image","text":{"x":1}},{"type":5,"text":7},{"type":"text","text":"b"}]}}`,
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "b"},
		},
		{
			name: "assistant content as a plain string",
			line: `{"type":"assistant","message":{"content":"plain"}}`,
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "plain"},
		},
		{
			name: "assistant without message",
			line: `{"type":"assistant","message":null,"timestamp_ms":null}`,
			want: decoded{Kind: kindAssistant, Type: "assistant"},
		},
		{
			name: "assistant escapes, surrogate pairs, lone surrogates",
			line: `{"type":"assistant","message":{"content":[{"type":"text","text":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x\udc00"}]}}`,
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "a\"b\\c/d\b\f\n\r\té😀\uFFFDx\uFFFD"},
		},
		{
			name: "invalid UTF-8 reads as U+FFFD",
			line: "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\xe2\x82\"}]}}",
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "a\uFFFDb\uFFFD\uFFFD"},
		},
		{
			name: "escaped keys match",
			line: `{"\u0074ype":"assistant","message":{"\u0063ontent":[{"typ\u0065":"text","t\u0065xt":"hi"}]}}`,
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "hi"},
		},
		{
			name: "a repeated key: the last value wins",
			line: `{"type":"thinking","type":"assistant","message":{"content":[{"type":"text","text":"one"}]},"message":{"content":[{"type":"text","text":"two"}]}}`,
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "two"},
		},
		{
			name: "a repeated object is replaced, not merged",
			line: `{"type":"assistant","message":{"content":"one"},"message":{"role":"x"}}`,
			want: decoded{Kind: kindAssistant, Type: "assistant"},
		},
		{
			name: "members the type does not use may hold anything",
			line: `{"type":"assistant","message":{"content":"x"},"cwd":5,"is_error":"no","tool_call":[],"usage":7}`,
			want: decoded{Kind: kindAssistant, Type: "assistant", Text: "x"},
		},
		{
			name: "tool_call started, call_id with a newline",
			line: `{"type":"tool_call","subtype":"started","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"args":{"path":"README.md"}}},"session_id":"abc","model_call_id":"m1","timestamp_ms":7}`,
			want: decoded{Kind: kindToolCall, Type: "tool_call", Subtype: "started", CallID: "toolu_1\nx", SessionID: "abc", ModelCallID: "m1", Timestamp: i64(7),
				Tool: toolFields{name: "read", args: jsontext.Value(`{"path":"README.md"}`)}},
		},
		{
			name: "tool_call completed with success",
			line: `{"type":"tool_call","subtype":"completed","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"args":{"path":"README.md"},"result":{"success":{"content":"..."}}}},"session_id":"abc"}`,
			want: decoded{Kind: kindToolCall, Type: "tool_call", Subtype: "completed", CallID: "toolu_1\nx", SessionID: "abc",
				Tool: toolFields{name: "read", args: jsontext.Value(`{"path":"README.md"}`), status: "success", result: jsontext.Value(`{"content":"..."}`)}},
		},
		{
			name: "tool_call completed with failure",
			line: `{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":{"result":{"failure":{"message":"no"}}}}}`,
			want: decoded{Kind: kindToolCall, Type: "tool_call", Subtype: "completed", CallID: "c",
				Tool: toolFields{name: "shell", status: "failure", result: jsontext.Value(`{"message":"no"}`)}},
		},
		{
			name: "tool_call completed as rejected",
			line: `{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"editToolCall":{"args":null,"result":{"rejected":{}}}}}`,
			want: decoded{Kind: kindToolCall, Type: "tool_call", Subtype: "completed", CallID: "c",
				Tool: toolFields{name: "edit", status: "rejected", result: jsontext.Value(`{}`)}},
		},
		{
			name: "tool values are kept as sent",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"readToolCall":{"args":{ "path" : "\u00e9\/" }}}}`,
			want: decoded{Kind: kindToolCall, Type: "tool_call", Subtype: "started", CallID: "c",
				Tool: toolFields{name: "read", args: jsontext.Value(`{ "path" : "\u00e9\/" }`)}},
		},
		{
			name: "mcp tool",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"mcpToolCall":{"args":{"name":"x"}}}}`,
			want: decoded{Kind: kindToolCall, Type: "tool_call", Subtype: "started", CallID: "c", Tool: toolFields{name: "mcp", args: jsontext.Value(`{"name":"x"}`)}},
		},
		{
			name: "the first key ending in ToolCall names the tool",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"meta":1,"ToolCall":{},"updateTodosToolCall":{"args":[1]},"shellToolCall":{}}}`,
			want: decoded{Kind: kindToolCall, Type: "tool_call", Subtype: "started", CallID: "c", Tool: toolFields{name: "updateTodos", args: jsontext.Value(`[1]`)}},
		},
		{
			name: "tool_call naming no tool",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"function":{"name":"read"}}}`,
			want: decoded{Kind: kindToolCall, Type: "tool_call", Subtype: "started", CallID: "c"},
		},
		{
			name: "result with usage",
			line: resultLine,
			want: decoded{Kind: kindResult, Type: "result", Subtype: "success", Text: "Hello", Duration: 1234, DurationAPI: 1200, SessionID: "abc", RequestID: "r1",
				Usage: event.Usage{Reported: true, InputTokens: i64(10), OutputTokens: i64(20), CacheReadTokens: i64(0), CacheWriteTokens: i64(0)}},
		},
		{
			name: "result without usage is unreported",
			line: `{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"abc","usage":null}`,
			want: decoded{Kind: kindResult, Type: "result", Subtype: "success", Text: "ok", SessionID: "abc"},
		},
		{
			name: "result with partial usage keeps only what was reported",
			line: `{"type":"result","subtype":"success","usage":{"outputTokens":3,"inputTokens":null,"other":9}}`,
			want: decoded{Kind: kindResult, Type: "result", Subtype: "success", Usage: event.Usage{Reported: true, OutputTokens: i64(3)}},
		},
		{
			name: "error result",
			line: `{"type":"result","subtype":"error","is_error":true,"result":"You've hit your usage limit"}`,
			want: decoded{Kind: kindResult, Type: "result", Subtype: "error", IsError: true, Text: "You've hit your usage limit"},
		},
		{
			name: "unknown type passes through",
			line: `  {"type":"compaction","subtype":"x","data":[1,2]}  `,
			want: decoded{Kind: kindUnknown, Type: "compaction", Subtype: "x"},
		},
		{
			name: "unknown type with a subtype that is not a string",
			line: `{"type":"compaction","subtype":{}}`,
			want: decoded{Kind: kindUnknown, Type: "compaction"},
		},
		{name: "no type", line: `{"hello":"world"}`, want: decoded{Kind: kindUnknown}},
		{name: "a type that is not a string", line: `{"type":5}`, want: decoded{Kind: kindUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeLine(t, tt.line)
			require.Nil(t, err)
			assert.Equal(t, tt.want, got)
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
		{name: "truncated object", line: `{"type":"assistant","message":{"content":[{"type":"text","text":"Hel`, notJSON: true, offset: 68, reason: "unexpected EOF"},
		{name: "trailing garbage", line: `{"type":"user"} x`, notJSON: true, offset: 16, reason: "after top-level value"},
		{name: "two objects", line: `{"type":"user"}{}`, notJSON: true, offset: 15, reason: "after top-level value"},
		{name: "JSON but not an object", line: `[1,2]`, notJSON: true, reason: "not an object"},
		{name: "null is not an object", line: ` null`, notJSON: true, reason: "not an object"},
		{name: "a string is not an object", line: ` "{}" `, notJSON: true, reason: "not an object"},
		{name: "bad escape", line: `{"a":"\x"}`, notJSON: true, offset: 6, reason: "invalid escape sequence"},
		{name: "raw control character", line: "{\"a\":\"\x01\"}", notJSON: true, offset: 6, reason: "invalid character '\\x01' in string"},
		{name: "trailing comma", line: `{"a":1,}`, notJSON: true, offset: 7, reason: "invalid character"},
		{name: "empty", line: "", notJSON: true, reason: "unexpected EOF"},
		{name: "session_id not a string", line: `{"type":"system","subtype":"init","session_id":5}`, offset: 47, event: "system", reason: `field "session_id" is not a string`},
		{name: "timestamp not an integer", line: `{"type":"assistant","timestamp_ms":1.5}`, offset: 35, event: "assistant", reason: `field "timestamp_ms" is not a 64-bit integer`},
		{name: "timestamp a string", line: `{"type":"assistant","timestamp_ms":"x"}`, offset: 35, event: "assistant", reason: `field "timestamp_ms" is not a 64-bit integer`},
		{name: "timestamp out of range", line: `{"type":"thinking","timestamp_ms":99999999999999999999}`, offset: 34, event: "thinking", reason: "64-bit integer"},
		{name: "timestamp with an exponent", line: `{"type":"tool_call","timestamp_ms":1e3}`, offset: 35, event: "tool_call", reason: "64-bit integer"},
		{name: "message not an object", line: `{"type":"assistant","message":"hi"}`, offset: 30, event: "assistant", reason: `field "message" is not an object`},
		{name: "content a number", line: `{"type":"assistant","message":{"content":7}}`, offset: 41, event: "assistant", reason: "neither an array nor a string"},
		{name: "content element not an object", line: `{"type":"user","message":{"content":["x"]}}`, offset: 37, event: "user", reason: "not an object"},
		{name: "content element null", line: `{"type":"assistant","message":{"content":[null]}}`, offset: 42, event: "assistant", reason: `an element of "message.content" is not an object`},
		{name: "content element null after a block", line: `{"type":"assistant","message":{"content":[{"type":"text","text":"a"},null]}}`, offset: 69, event: "assistant", reason: "not an object"},
		{name: "text not a string", line: `{"type":"assistant","message":{"content":[{"type":"text","text":1}]}}`, offset: 64, event: "assistant", reason: `"text" is not a string`},
		{name: "the first error in the line", line: `{"type":"assistant","message":{"content":[{"type":"text","text":1},"x"]},"timestamp_ms":"x"}`, offset: 64, event: "assistant", reason: `"text" is not a string`},
		{name: "tool_call not an object", line: `{"type":"tool_call","tool_call":[]}`, offset: 32, event: "tool_call", reason: `field "tool_call" is not an object`},
		{name: "tool body not an object", line: `{"type":"tool_call","tool_call":{"readToolCall":1}}`, offset: 48, event: "tool_call", reason: `"tool_call.readToolCall" is not an object`},
		{name: "tool result not an object", line: `{"type":"tool_call","tool_call":{"readToolCall":{"result":"ok"}}}`, offset: 58, event: "tool_call", reason: `"tool_call.readToolCall.result" is not an object`},
		{name: "is_error not a boolean", line: `{"type":"result","is_error":"yes"}`, offset: 28, event: "result", reason: `field "is_error" is not a boolean`},
		{name: "duration not an integer", line: `{"type":"result","duration_ms":-1.0}`, offset: 31, event: "result", reason: `field "duration_ms" is not a 64-bit integer`},
		{name: "usage not an object", line: `{"type":"result","usage":[]}`, offset: 25, event: "result", reason: `field "usage" is not an object`},
		{name: "usage field not an integer", line: `{"type":"result","usage":{"inputTokens":"10"}}`, offset: 40, event: "result", reason: `"usage.inputTokens" is not a 64-bit integer`},
		{name: "usage field with an exponent", line: `{"type":"result","usage":{"inputTokens":1e3}}`, offset: 40, event: "result", reason: `"usage.inputTokens" is not a 64-bit integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeLine(t, tt.line)
			require.NotNil(t, err)
			assert.Equal(t, tt.notJSON, err.notJSON)
			assert.Equal(t, tt.offset, err.offset, "offset")
			assert.Equal(t, tt.event, err.event)
			assert.Contains(t, err.reason, tt.reason)
		})
	}
}

func TestDecodeDepthLimit(t *testing.T) {
	deep := func(n int) string {
		return `{"type":"x","v":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`
	}
	const limit = 10000 // encoding/json's and jsontext's
	_, err := decodeLine(t, deep(limit))
	require.Nil(t, err, "%d levels are accepted", limit)
	assert.True(t, stdjson.Valid([]byte(deep(limit))))
	_, err = decodeLine(t, deep(limit+1))
	require.NotNil(t, err)
	assert.True(t, err.notJSON)
	assert.False(t, stdjson.Valid([]byte(deep(limit+1))))
	assert.Contains(t, err.reason, "depth")
}

// TestDecodeKeepsNothingBetweenLines decodes lines one after another with
// one reader, as a Decoder does, and each alone with a fresh reader: the
// reused buffers carry nothing from one line to the next.
func TestDecodeKeepsNothingBetweenLines(t *testing.T) {
	lines := seq(
		`{"type":"assistant","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}]},"timestamp_ms":1,"model_call_id":"m"}`,
		`{"type":"assistant","message":{"content":[{"text":"z"}]}}`,
		`{"type":"assistant","message":{"content":"plain"}}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"x"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"a"}]},"message":null}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"y"},{"type":"text","text":"y"}]},"timestamp_ms":"bad"}`,
		`{"type":"assistant","session_id":"abc"}`,
		resultLine, `{"type":"result"}`, toolPair("t"), `{"type":"tool_call","subtype":"completed"}`,
		initLine, `{"type":"system","subtype":"init"}`, `[1]`, "not JSON", thinkingDelta, thinkingDone, userLine,
	)
	shared := newLineReader()
	for _, l := range lines {
		want, wantErr := decodeLine(t, l)
		f, err := shared.decode([]byte(l))
		assert.Equal(t, wantErr, err, l)
		if wantErr == nil {
			assert.Equal(t, want, view(f), l)
		}
	}
}

// TestDecodeDoesNotAliasLine checks that events hold copies: the caller
// may reuse its line buffer at once.
func TestDecodeDoesNotAliasLine(t *testing.T) {
	d := newDecoder(t, Turn{})
	_, err := d.Feed([]byte(initLine))
	require.NoError(t, err)
	line := []byte(`{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a"}}}}`)
	evs, err := d.Feed(line)
	require.NoError(t, err)
	odd := []byte(`{"type":"mystery","x":"y"}`)
	unk, err := d.Feed(odd)
	require.NoError(t, err)
	text := []byte(snap("m1", "Hello"))
	said, err := d.Feed(text)
	require.NoError(t, err)
	for _, b := range [][]byte{line, odd, text} {
		for i := range b {
			b[i] = 'X'
		}
	}
	tool := evs[0].Tool
	assert.Equal(t, "c1", tool.CallID)
	assert.Equal(t, "read", tool.Name)
	assert.Equal(t, jsontext.Value(`{"path":"a"}`), tool.Args)
	assert.Equal(t, jsontext.Value(`{"type":"mystery","x":"y"}`), unk[0].Unknown.Raw)
	assert.Equal(t, "Hello", said[0].Text)
}

// TestDecodeLeavesLineAlone checks that reading a line, either way, never
// writes to it: the walk hands the line to jsontext as a bytes.Buffer.
func TestDecodeLeavesLineAlone(t *testing.T) {
	for _, l := range seq(
		`{"type":"tool_call","subtype":"started","call_id":"c\n1","tool_call":{"read\u0054oolCall":{"args":{"p\u00e9":"\u00e9\ud800"},"result":{"succ\u0065ss":"\n"}}}}`,
		`{"type":"tool_call","type":"tool_call","tool_call":{"readToolCall":{"args":{"a":"\u00e9"},"args":null}}}`,
		`{"type":"assistant","message":{"content":[{"type":"te\u0078t","text":"a\"\u00e9\ud83d\ude00"}]},"message":{"content":"\u00e9"}}`,
		`{"type":"result","usage":{"inputTokens":1,"input\u0054okens":2},"cwd":1}`,
		"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]},\"x\":[\"\xfe\"]}",
	) {
		line := []byte(l)
		r := newLineReader()
		_, err := r.decode(line)
		require.Nil(t, err, l)
		require.Equal(t, l, string(line), "decode")
		require.Nil(t, r.walk(line), l)
		require.Equal(t, l, string(line), "walk")
	}
}
