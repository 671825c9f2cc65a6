package event

import (
	"bufio"
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchEvents is a turn's mix of short events as the agent streams carry
// them: text and thinking pieces, tool calls with small arguments and
// results, an unknown event passed through, and the result with usage.
func benchEvents() []Event {
	n := int64(1234)
	return []Event{
		{Type: TypeText, Text: "I'll look at the repository layout first, then read the module file.\n"},
		{Type: TypeThinking, Subtype: "delta", Text: "**Inspecting the layout** — the user wants the tests fixed, so find them."},
		{Type: TypeToolStarted, Tool: &Tool{CallID: "item_12", Name: "shell", Args: jsontext.Value(`{"command":"bash -lc 'ls -la'","cwd":"/work/repo"}`)}},
		{Type: TypeToolCompleted, Tool: &Tool{CallID: "item_12", Name: "shell", Args: jsontext.Value(`{"command":"bash -lc 'ls -la'","cwd":"/work/repo"}`),
			Status: "success", Result: jsontext.Value(`{"exit_code":0,"output":"go.mod\nmain.go\nREADME.md\n"}`)}},
		{Type: TypeText, Text: "The module is `example.com/x`; main.go has the handler."},
		{Type: TypeToolStarted, Tool: &Tool{CallID: "read_file-1712-3", Name: "read", Args: jsontext.Value(`{"absolute_path":"/work/repo/main.go"}`)}},
		{Type: TypeToolCompleted, Tool: &Tool{CallID: "read_file-1712-3", Name: "read", Args: jsontext.Value(`{"absolute_path":"/work/repo/main.go"}`),
			Status: "success", Result: jsontext.Value(`{"output":"package main\n\nfunc main() {}\n"}`)}},
		{Type: TypeThinking, Subtype: "completed"},
		{Type: TypeUnknown, Unknown: &Unknown{Type: "item.updated", Raw: jsontext.Value(`{"type":"item.updated","item":{"id":"item_3","type":"todo_list","items":[{"text":"fix","completed":false}]}}`)}},
		{Type: TypeText, Text: "Done: the handler now returns <nil> & the tests pass."},
		{Type: TypeResult, Result: &Result{Subtype: "success", Text: "Done.", DurationMs: 5123, DurationAPIMs: 4000, SessionID: "0199a-abc", RequestID: "req_1",
			Usage: Usage{Reported: true, InputTokens: &n, OutputTokens: &n, CacheReadTokens: &n}}},
	}
}

func benchMarshal(b *testing.B, marshal func(Event, *jsontext.Encoder) error) {
	evs := benchEvents()
	bw := bufio.NewWriterSize(io.Discard, 64<<10)
	enc := NewEncoder(bw)
	var size int64
	for _, ev := range evs {
		var buf bytes.Buffer
		if err := marshal(ev, NewEncoder(&buf)); err != nil {
			b.Fatal(err)
		}
		size += int64(buf.Len())
	}
	b.SetBytes(size / int64(len(evs)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := marshal(evs[i%len(evs)], enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMarshal encodes a realistic mix of events (benchEvents) one
// per op with NewEncoder's encoder into a buffered io.Discard: new is
// Event.MarshalJSONTo, writer a Writer.
func BenchmarkMarshal(b *testing.B) {
	b.Run("new", func(b *testing.B) { benchMarshal(b, Event.MarshalJSONTo) })
	b.Run("writer", func(b *testing.B) {
		w := NewWriter(bufio.NewWriterSize(io.Discard, 64<<10))
		benchMarshal(b, func(e Event, _ *jsontext.Encoder) error { return w.Write(e) })
	})
}

// TestRawValueCannotCarryOnTheEvent: a raw value that is more than one
// value is refused, never pasted into the event's object.
func TestRawValueCannotCarryOnTheEvent(t *testing.T) {
	for _, raw := range []string{`{},"type":"text","text":"hi"`, `0,"0":""`, `1 2`} {
		ev := Event{Type: TypeToolStarted, Tool: &Tool{CallID: "c", Name: "n", Args: jsontext.Value(raw)}}
		var b bytes.Buffer
		err := json.MarshalEncode(NewEncoder(&b), ev)
		assert.Error(t, err, raw)
		assert.NotContains(t, b.String(), `"text":"hi"`)
		assert.Error(t, NewWriter(io.Discard).Write(ev), raw)
	}
}

// TestWriterRawValues holds the agent's values to what a Writer writes of
// them: compacted, U+2028 and U+2029 escaped, invalid UTF-8 and repeated
// names kept; a value that is not one JSON value, or nested deeper than
// the encoder allows within the event, is refused.
func TestWriterRawValues(t *testing.T) {
	tests := []struct {
		raw  string
		want string // "" when refused
	}{
		{`{"command":"ls -la"}`, `{"command":"ls -la"}`},
		{`{"a": 1}`, `{"a":1}`},
		{"{\"a\":\"\u2028\"}", `{"a":"\u2028"}`},
		{"{\"a\":\"\u2029\"}", `{"a":"\u2029"}`},
		{"{\"a\":\"\u2027\u00e9\"}", "{\"a\":\"\u2027\u00e9\"}"},
		{"{\"a\":\"\xff\"}", "{\"a\":\"\xff\"}"},
		{`{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{`{"a":`, ""},
		{``, `null`},
		{`{},"type":"text","text":"hi"`, ""},
		{`0,"0":""`, ""},
		{strings.Repeat("[", 9999) + strings.Repeat("]", 9999), strings.Repeat("[", 9999) + strings.Repeat("]", 9999)},
		{strings.Repeat("[", 10000) + strings.Repeat("]", 10000), ""},
	}
	for _, tt := range tests {
		ev := Event{Type: TypeToolCompleted, Tool: &Tool{CallID: "c", Name: "n", Args: jsontext.Value(tt.raw), Result: jsontext.Value(`{}`)}}
		var b bytes.Buffer
		err := NewWriter(&b).Write(ev)
		if tt.want == "" {
			assert.Error(t, err, "%.40q", tt.raw)
			continue
		}
		require.NoError(t, err, "%.40q", tt.raw)
		assert.Equal(t, `{"type":"tool_completed","callId":"c","tool":"n","args":`+tt.want+`,"status":null,"result":{}}`+"\n", b.String(), "%.40q", tt.raw)
	}
}

// TestWriterWritesEachEventAsMarshalled: a Writer writes each event's
// line, and a value written through its Encoder between two events.
func TestWriterWritesEachEventAsMarshalled(t *testing.T) {
	var want, got bytes.Buffer
	w := NewWriter(&got)
	for _, ev := range benchEvents() {
		require.NoError(t, ev.MarshalJSONTo(NewEncoder(&want)))
		require.NoError(t, w.Write(ev))
	}
	want.WriteString(`"outcome"` + "\n")
	require.NoError(t, w.Encoder().WriteToken(jsontext.String("outcome")))
	assert.Equal(t, want.String(), got.String())
}
