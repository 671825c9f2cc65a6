package cursor

import (
	"encoding/json/jsontext"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/turn"
)

// feedLine feeds line to a new Decoder of a write turn that also allows
// MCP calls, after initLine unless line is the first event, and returns
// what line yields.
func feedLine(t *testing.T, line string, first bool) ([]event.Event, error) {
	t.Helper()
	d := newDecoder(t, Turn{Mode: turn.ModeWrite, Tools: []string{"mcp"}})
	if !first {
		_, err := d.Feed([]byte(initLine))
		require.NoError(t, err)
	}
	b := []byte(line)
	evs, err := d.Feed(b)
	require.Equal(t, line, string(b), "reading a line leaves it alone")
	return evs, err
}

// eventCase is a line and the events it yields, fed after initLine
// unless it is the first event.
type eventCase struct {
	name  string
	line  string
	first bool
	want  []event.Event
}

func checkEvents(t *testing.T, tests []eventCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := feedLine(t, tt.line, tt.first)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func textEvent(s string) []event.Event { return []event.Event{{Type: event.TypeText, Text: s}} }

func toolEvent(typ event.Type, tl event.Tool) []event.Event {
	return []event.Event{{Type: typ, Tool: &tl}}
}

func resultEvent(r event.Result) []event.Event {
	return []event.Event{{Type: event.TypeResult, Result: &r}}
}

func unknownEvent(typ, subtype, raw string) []event.Event {
	return []event.Event{{Type: event.TypeUnknown, Unknown: &event.Unknown{Type: typ, Subtype: subtype, Raw: jsontext.Value(raw)}}}
}

func TestDecodeInitEvents(t *testing.T) {
	checkEvents(t, []eventCase{
		{
			name: "system init", line: initLine, first: true,
			want: []event.Event{{Type: event.TypeInit, Init: &event.Init{SessionID: "abc", Model: "Claude 4.5 Sonnet", CWD: "/repo",
				PermissionMode: "default", APIKeySource: "login"}}},
		},
		{
			name: "system init with missing fields", line: `{"type":"system","subtype":"init"}`, first: true,
			want: []event.Event{{Type: event.TypeInit, Init: &event.Init{}}},
		},
		{
			name: "system init whose other members may hold anything", line: `{"type":"system","subtype":"init","session_id":"s","message":5,"usage":[]}`, first: true,
			want: []event.Event{{Type: event.TypeInit, Init: &event.Init{SessionID: "s"}}},
		},
		{
			name: "system of another subtype is unknown",
			line: `{"type":"system","subtype":"compact","session_id":"abc"}`,
			want: unknownEvent("system", "compact", `{"type":"system","subtype":"compact","session_id":"abc"}`),
		},
		{
			name: "system of another subtype may hold anything",
			line: `{"type":"system","subtype":"compact","session_id":5,"model":[]}`,
			want: unknownEvent("system", "compact", `{"type":"system","subtype":"compact","session_id":5,"model":[]}`),
		},
		{
			name: "system with a subtype that is not a string is unknown",
			line: `{"type":"system","subtype":1}`,
			want: unknownEvent("system", "", `{"type":"system","subtype":1}`),
		},
	})
}

func TestDecodeMessageEvents(t *testing.T) {
	checkEvents(t, []eventCase{
		{name: "user: the prompt's echo yields nothing", line: userLine},
		{
			name: "thinking delta",
			line: `{"type":"thinking","subtype":"delta","text":"hmm","session_id":"abc","timestamp_ms":1770823434041}`,
			want: []event.Event{{Type: event.TypeThinking, Subtype: "delta", Text: "hmm"}},
		},
		{
			name: "thinking completed",
			line: `{"type":"thinking","subtype":"completed","session_id":"abc","timestamp_ms":5}`,
			want: []event.Event{{Type: event.TypeThinking, Subtype: "completed"}},
		},
		{
			name: "assistant with model_call_id",
			line: `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hello"}]},"session_id":"abc","model_call_id":"m1","timestamp_ms":1}`,
			want: textEvent("Hello"),
		},
		{
			name: "assistant final copy",
			line: `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hello"}]},"session_id":"abc"}`,
			want: textEvent("Hello"),
		},
		{
			name: "assistant members in another order",
			line: `{"session_id":"abc","timestamp_ms":7,"message":{"content":[{"text":"Hello","type":"text"}],"role":"assistant"},"type":"assistant"}`,
			want: textEvent("Hello"),
		},
		{
			name: "assistant text blocks concatenated, other blocks skipped",
			line: `{"type":"assistant","message":{"content":[{"type":"text","text":"a"},{"type":"image","text":"x"},{"type":"text","text":"b"},{"type":"text","text":null},{"type":"text"}]}}`,
			want: textEvent("ab"),
		},
		{
			name: "blocks of other types may hold anything",
			line: `{"type":"assistant","message":{"content":[{"type":"image","text":{"x":1}},{"type":5,"text":7},{"type":"text","text":"b"}]}}`,
			want: textEvent("b"),
		},
		{
			name: "assistant content as a plain string",
			line: `{"type":"assistant","message":{"content":"plain"}}`,
			want: textEvent("plain"),
		},
		{name: "assistant without message", line: `{"type":"assistant","message":null,"timestamp_ms":null}`},
		{
			name: "assistant escapes, surrogate pairs, lone surrogates",
			line: `{"type":"assistant","message":{"content":[{"type":"text","text":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x\udc00"}]}}`,
			want: textEvent("a\"b\\c/d\b\f\n\r\té😀\uFFFDx\uFFFD"),
		},
		{
			name: "invalid UTF-8 reads as U+FFFD",
			line: "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\xe2\x82\"}]}}",
			want: textEvent("a\uFFFDb\uFFFD\uFFFD"),
		},
		{
			name: "escaped keys match",
			line: `{"\u0074ype":"assistant","message":{"\u0063ontent":[{"typ\u0065":"text","t\u0065xt":"hi"}]}}`,
			want: textEvent("hi"),
		},
		{
			name: "a repeated key: the last value wins",
			line: `{"type":"assistant","message":{"content":[{"type":"text","text":"one"}]},"message":{"content":[{"type":"text","text":"two"}]}}`,
			want: textEvent("two"),
		},
		{
			name: "a type given twice: the first names the event",
			line: `{"type":"thinking","type":"assistant","text":"hm"}`,
			want: []event.Event{{Type: event.TypeThinking, Text: "hm"}},
		},
		{
			name: "a repeated object is replaced, not merged",
			line: `{"type":"assistant","message":{"content":"one"},"message":{"role":"x"}}`,
		},
		{
			name: "a repeated array is replaced, its blocks too",
			line: `{"type":"assistant","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"content":[{"text":"c"},{"type":"text","text":"d"}]}}`,
			want: textEvent("d"),
		},
		{
			name: "members the type does not use may hold anything",
			line: `{"type":"assistant","message":{"content":"x"},"cwd":5,"is_error":"no","tool_call":[],"usage":7}`,
			want: textEvent("x"),
		},
	})
}

func TestDecodeToolEvents(t *testing.T) {
	checkEvents(t, []eventCase{
		{
			name: "tool_call started, call_id with a newline",
			line: `{"type":"tool_call","subtype":"started","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"args":{"path":"README.md"}}},"session_id":"abc","model_call_id":"m1","timestamp_ms":7}`,
			want: toolEvent(event.TypeToolStarted, event.Tool{CallID: "toolu_1\nx", Name: "read", Args: jsontext.Value(`{"path":"README.md"}`)}),
		},
		{
			name: "tool_call completed with success",
			line: `{"type":"tool_call","subtype":"completed","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"args":{"path":"README.md"},"result":{"success":{"content":"..."}}}},"session_id":"abc"}`,
			want: toolEvent(event.TypeToolCompleted, event.Tool{CallID: "toolu_1\nx", Name: "read", Args: jsontext.Value(`{"path":"README.md"}`),
				Status: "success", Result: jsontext.Value(`{"content":"..."}`)}),
		},
		{
			name: "tool_call completed with failure",
			line: `{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"shellToolCall":{"result":{"failure":{"message":"no"}}}}}`,
			want: toolEvent(event.TypeToolCompleted, event.Tool{CallID: "c", Name: "shell", Status: "failure", Result: jsontext.Value(`{"message":"no"}`)}),
		},
		{
			name: "tool_call completed as rejected",
			line: `{"type":"tool_call","subtype":"completed","call_id":"c","tool_call":{"editToolCall":{"args":null,"result":{"rejected":{}}}}}`,
			want: toolEvent(event.TypeToolCompleted, event.Tool{CallID: "c", Name: "edit", Status: "rejected", Result: jsontext.Value(`{}`)}),
		},
		{
			name: "tool values are kept as sent",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"readToolCall":{"args":{ "path" : "\u00e9\/" }}}}`,
			want: toolEvent(event.TypeToolStarted, event.Tool{CallID: "c", Name: "read", Args: jsontext.Value(`{ "path" : "\u00e9\/" }`)}),
		},
		{
			name: "mcp tool",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"mcpToolCall":{"args":{"name":"x"}}}}`,
			want: toolEvent(event.TypeToolStarted, event.Tool{CallID: "c", Name: "mcp", Args: jsontext.Value(`{"name":"x"}`)}),
		},
		{
			name: "the first key ending in ToolCall names the tool",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"meta":1,"ToolCall":{},"updateTodosToolCall":{"args":[1]},"shellToolCall":{}}}`,
			want: toolEvent(event.TypeToolStarted, event.Tool{CallID: "c", Name: "updateTodos", Args: jsontext.Value(`[1]`)}),
		},
		{
			name: "the tool's first member given twice, and its args",
			line: `{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"readToolCall":{"args":{"a":1},"args":{"b":2}},"readToolCall":{"args":3}}}`,
			want: toolEvent(event.TypeToolStarted, event.Tool{CallID: "c", Name: "read", Args: jsontext.Value(`{"b":2}`)}),
		},
	})
}

func TestDecodeResultEvents(t *testing.T) {
	checkEvents(t, []eventCase{
		{
			name: "result with usage",
			line: `{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"duration_api_ms":1200,"session_id":"abc","request_id":"r1","usage":{"inputTokens":10,"outputTokens":20,"cacheReadTokens":0,"cacheWriteTokens":0}}`,
			want: resultEvent(event.Result{Subtype: "success", DurationMs: 1234, DurationAPIMs: 1200, SessionID: "abc", RequestID: "r1",
				Usage: event.Usage{Reported: true, InputTokens: i64(10), OutputTokens: i64(20), CacheReadTokens: i64(0), CacheWriteTokens: i64(0)}}),
		},
		{
			name: "result without usage is unreported",
			line: `{"type":"result","subtype":"success","is_error":false,"session_id":"abc","usage":null}`,
			want: resultEvent(event.Result{Subtype: "success", SessionID: "abc"}),
		},
		{
			name: "result with partial usage keeps only what was reported",
			line: `{"type":"result","subtype":"success","usage":{"outputTokens":3,"inputTokens":null,"other":9}}`,
			want: resultEvent(event.Result{Subtype: "success", Usage: event.Usage{Reported: true, OutputTokens: i64(3)}}),
		},
		{
			name: "a repeated usage is replaced",
			line: `{"type":"result","subtype":"success","usage":{"inputTokens":1},"usage":{"outputTokens":3}}`,
			want: resultEvent(event.Result{Subtype: "success", Usage: event.Usage{Reported: true, OutputTokens: i64(3)}}),
		},
		{
			name: "error result",
			line: `{"type":"result","subtype":"error","is_error":true,"result":"You've hit your usage limit"}`,
			want: resultEvent(event.Result{Subtype: "error", IsError: true, Text: "You've hit your usage limit"}),
		},
	})
}

func TestDecodeUnknownEvents(t *testing.T) {
	checkEvents(t, []eventCase{
		{
			name: "unknown type passes through",
			line: `  {"type":"compaction","subtype":"x","data":[1,2]}  `,
			want: unknownEvent("compaction", "x", `{"type":"compaction","subtype":"x","data":[1,2]}`),
		},
		{
			name: "unknown type whose members have any shape",
			line: `{"type":"compaction","message":5,"tool_call":"x","usage":[],"is_error":{},"timestamp_ms":1.5}`,
			want: unknownEvent("compaction", "", `{"type":"compaction","message":5,"tool_call":"x","usage":[],"is_error":{},"timestamp_ms":1.5}`),
		},
		{
			name: "unknown type with a subtype that is not a string",
			line: `{"type":"compaction","subtype":{}}`,
			want: unknownEvent("compaction", "", `{"type":"compaction","subtype":{}}`),
		},
		{name: "no type", line: `{"hello":"world"}`, want: unknownEvent("", "", `{"hello":"world"}`)},
		{name: "a type that is not a string", line: `{"type":5}`, want: unknownEvent("", "", `{"type":5}`)},
	})
}

// TestDecodeErrors holds each line that is not a well-formed event to its
// protocol error: the byte offset json/v2 reports and why, the event's
// type first when the line has one. Before the first event, a line that
// is not a JSON object is a banner instead.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		banner bool   // a banner before the first event
		want   string // the error after "protocol violation at line 2, "
	}{
		{name: "banner text", line: "Cursor Agent v2026", banner: true, want: "byte offset 0: not a JSON object"},
		{name: "truncated object", line: `{"type":"assistant","message":{"content":[{"type":"text","text":"Hel`, banner: true,
			want: "byte offset 68: not valid JSON"},
		{name: "trailing garbage", line: `{"type":"user"} x`, banner: true, want: "byte offset 16: not valid JSON"},
		{name: "two objects", line: `{"type":"user"}{}`, banner: true, want: "byte offset 15: not valid JSON"},
		{name: "JSON but not an object", line: `[1,2]`, banner: true, want: "byte offset 0: not a JSON object"},
		{name: "null is not an object", line: ` null`, banner: true, want: "byte offset 0: not a JSON object"},
		{name: "a string is not an object", line: ` "{}" `, banner: true, want: "byte offset 0: not a JSON object"},
		{name: "bad escape", line: `{"a":"\x"}`, banner: true, want: "byte offset 6: not valid JSON"},
		{name: "raw control character", line: "{\"a\":\"\x01\"}", banner: true, want: "byte offset 6: not valid JSON"},
		{name: "trailing comma", line: `{"a":1,}`, banner: true, want: "byte offset 6: not valid JSON"},
		{name: "session_id not a string", line: `{"type":"system","subtype":"init","session_id":5}`,
			want: `byte offset 47: "system" event: field "/session_id" is a number, not a string`},
		{name: "timestamp not an integer", line: `{"type":"assistant","timestamp_ms":1.5}`,
			want: `byte offset 35: "assistant" event: field "/timestamp_ms" is a number, not an integer in range`},
		{name: "timestamp a string", line: `{"type":"assistant","timestamp_ms":"x"}`,
			want: `byte offset 35: "assistant" event: field "/timestamp_ms" is a string, not an integer in range`},
		{name: "timestamp out of range", line: `{"type":"thinking","timestamp_ms":99999999999999999999}`,
			want: `byte offset 34: "thinking" event: field "/timestamp_ms" is a number out of range`},
		{name: "timestamp with an exponent", line: `{"type":"tool_call","timestamp_ms":1e3}`,
			want: `byte offset 35: "tool_call" event: field "/timestamp_ms" is a number, not an integer in range`},
		{name: "message not an object", line: `{"type":"assistant","message":"hi"}`,
			want: `byte offset 30: "assistant" event: field "/message" is a string, not an object`},
		{name: "content a number", line: `{"type":"assistant","message":{"content":7}}`,
			want: `byte offset 41: "assistant" event: field "/message/content" is a number, not an array`},
		{name: "content element not an object", line: `{"type":"user","message":{"content":["x"]}}`,
			want: `byte offset 37: "user" event: field "/message/content/0" is a string, not an object`},
		{name: "content element null", line: `{"type":"assistant","message":{"content":[null]}}`,
			want: `byte offset 42: "assistant" event: field "/message/content/0" is null, not an object`},
		{name: "content element null after a block", line: `{"type":"assistant","message":{"content":[{"type":"text","text":"a"},null]}}`,
			want: `byte offset 69: "assistant" event: field "/message/content/1" is null, not an object`},
		{name: "text not a string", line: `{"type":"assistant","message":{"content":[{"type":"text","text":1}]}}`,
			want: `byte offset 64: "assistant" event: field "/message/content/0/text" is a number, not a string`},
		{name: "text not a string, the type after it", line: `{"type":"assistant","message":{"content":[{"text":[],"type":"text"}]}}`,
			want: `byte offset 50: "assistant" event: field "/message/content/0/text" is an array, not a string`},
		{name: "the first error in the line", line: `{"type":"assistant","message":{"content":[{"type":"text","text":1},"x"]},"timestamp_ms":"x"}`,
			want: `byte offset 64: "assistant" event: field "/message/content/0/text" is a number, not a string`},
		{name: "tool_call not an object", line: `{"type":"tool_call","tool_call":[]}`,
			want: `byte offset 32: "tool_call" event: field "/tool_call" is an array, not an object`},
		{name: "tool body not an object", line: `{"type":"tool_call","tool_call":{"readToolCall":1}}`,
			want: `byte offset 48: "tool_call" event: field "/tool_call/readToolCall" is a number, not an object`},
		{name: "tool result not an object", line: `{"type":"tool_call","tool_call":{"readToolCall":{"result":"ok"}}}`,
			want: `byte offset 58: "tool_call" event: field "/tool_call/readToolCall/result" is a string, not an object`},
		{name: "is_error not a boolean", line: `{"type":"result","is_error":"yes"}`,
			want: `byte offset 28: "result" event: field "/is_error" is a string, not a boolean`},
		{name: "duration not an integer", line: `{"type":"result","duration_ms":-1.0}`,
			want: `byte offset 31: "result" event: field "/duration_ms" is a number, not an integer in range`},
		{name: "usage not an object", line: `{"type":"result","usage":[]}`,
			want: `byte offset 25: "result" event: field "/usage" is an array, not an object`},
		{name: "usage field not an integer", line: `{"type":"result","usage":{"inputTokens":"10"}}`,
			want: `byte offset 40: "result" event: field "/usage/inputTokens" is a string, not an integer in range`},
		{name: "usage field with an exponent", line: `{"type":"result","usage":{"inputTokens":1e3}}`,
			want: `byte offset 40: "result" event: field "/usage/inputTokens" is a number, not an integer in range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := feedLine(t, tt.line, false)
			require.Error(t, err)
			assert.Empty(t, evs)
			assert.Contains(t, err.Error(), "stream-json protocol violation at line 2, "+tt.want)
			evs, err = feedLine(t, tt.line, true)
			if !tt.banner {
				require.Error(t, err, "a malformed event is an error before the first event too")
				return
			}
			require.NoError(t, err)
			require.Len(t, evs, 1)
			assert.Equal(t, event.WarnBanner, evs[0].Warning.Code)
		})
	}
}

func TestDecodeDepthLimit(t *testing.T) {
	deep := func(n int) string {
		return `{"type":"x","v":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`
	}
	const limit = 10000 // encoding/json's and jsontext's
	evs, err := feedLine(t, deep(limit), false)
	require.NoError(t, err, "%d levels are accepted", limit)
	require.Len(t, evs, 1)
	assert.Equal(t, event.TypeUnknown, evs[0].Type)
	assert.True(t, jsontext.Value(deep(limit)).IsValid(turn.UnmarshalOptions()))
	_, err = feedLine(t, deep(limit+1), false)
	require.Error(t, err)
	assert.False(t, jsontext.Value(deep(limit+1)).IsValid(turn.UnmarshalOptions()))
	// The bracket one level too deep.
	assert.Contains(t, err.Error(), "line 2, byte offset 10015: not valid JSON")
}

// TestDecodeKeepsNothingBetweenLines reads lines one after another with
// one Decoder and each with a new one: reading a line carries nothing
// into the next.
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
	shared := newDecoder(t, Turn{})
	for _, l := range lines {
		want, wantType, wantSubtype, _, wantErr := newDecoder(t, Turn{}).read([]byte(l))
		got, typ, subtype, _, err := shared.read([]byte(l))
		assert.Equal(t, wantErr != nil, err != nil, l)
		assert.Equal(t, []string{wantType, wantSubtype}, []string{typ, subtype}, l)
		assert.Equal(t, want, got, l)
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

// TestDecodeLeavesLineAlone checks that reading a line never writes to
// it, whichever way its members are read.
func TestDecodeLeavesLineAlone(t *testing.T) {
	for _, l := range seq(
		`{"type":"tool_call","subtype":"started","call_id":"c\n1","tool_call":{"read\u0054oolCall":{"args":{"p\u00e9":"\u00e9\ud800"},"result":{"succ\u0065ss":"\n"}}}}`,
		`{"type":"tool_call","type":"tool_call","tool_call":{"readToolCall":{"args":{"a":"\u00e9"},"args":null}}}`,
		`{"type":"assistant","message":{"content":[{"type":"te\u0078t","text":"a\"\u00e9\ud83d\ude00"}]},"message":{"content":"\u00e9"}}`,
		`{"type":"result","usage":{"inputTokens":1,"input\u0054okens":2},"cwd":1}`,
		"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]},\"x\":[\"\xfe\"]}",
	) {
		_, err := feedLine(t, l, false) // holds the line to its copy
		require.NoError(t, err, l)
	}
}
