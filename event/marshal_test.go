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
// Event.MarshalJSONTo, ref the implementation it replaced, writer a
// Writer.
func BenchmarkMarshal(b *testing.B) {
	b.Run("new", func(b *testing.B) { benchMarshal(b, Event.MarshalJSONTo) })
	b.Run("ref", func(b *testing.B) { benchMarshal(b, refMarshal) })
	b.Run("writer", func(b *testing.B) {
		w := NewWriter(bufio.NewWriterSize(io.Discard, 64<<10))
		benchMarshal(b, func(e Event, _ *jsontext.Encoder) error { return w.Write(e) })
	})
}

// encodeWith writes ev with marshal onto a new encoder made by newEnc,
// preceded by a first event (so the encoder is mid-stream), and returns
// what it wrote and marshal's error.
func encodeWith(newEnc func(io.Writer) *jsontext.Encoder, marshal func(Event, *jsontext.Encoder) error, ev Event) (string, string) {
	var b bytes.Buffer
	enc := newEnc(&b)
	if err := marshal(Event{Type: TypeText, Text: "first"}, enc); err != nil {
		panic(err)
	}
	err := marshal(ev, enc)
	// The encoder's state after an error shows too: what it had written
	// and what it writes next.
	_ = enc.WriteToken(jsontext.Null)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return b.String(), msg
}

var encoders = map[string]func(io.Writer) *jsontext.Encoder{
	"run":    NewEncoder,
	"strict": func(w io.Writer) *jsontext.Encoder { return jsontext.NewEncoder(w) },
	"html": func(w io.Writer) *jsontext.Encoder {
		return jsontext.NewEncoder(w, jsontext.EscapeForHTML(true), jsontext.AllowInvalidUTF8(true))
	},
	"indent": func(w io.Writer) *jsontext.Encoder {
		return jsontext.NewEncoder(w, jsontext.Multiline(true), jsontext.EscapeForJS(true))
	},
}

// FuzzMarshalMatchesRef holds MarshalJSONTo to the token-by-token
// implementation it replaced (refMarshal): the same bytes and the same
// error for every event type, with strings and agent values of any bytes
// (invalid UTF-8, U+2028, control and HTML characters, repeated names,
// invalid JSON), on NewEncoder's encoder and on others.
func FuzzMarshalMatchesRef(f *testing.F) {
	f.Add(uint8(1), "a\"b\n<&>", "s\u2028", "c\x00", []byte(`{"p":"\u00e9\/\ud800<","p":1}`), []byte(`[1,"\xff\u2029"]`), uint8(0xff), int64(-3))
	f.Add(uint8(3), "item_1", "shell", "", []byte(`{"command":"ls"}`), []byte(`{"exit_code":0,"output":"a\nb"}`), uint8(5), int64(0))
	f.Add(uint8(4), "x\xffy", "\u2029", "\x7f", []byte(`{"a":1,"a":2}`), []byte(`null`), uint8(0), int64(1<<62))
	f.Add(uint8(5), "ok", "", "sess", []byte(``), []byte(`{`), uint8(0x0f), int64(7))
	f.Add(uint8(8), "run", "claude", "m", []byte(`"raw"`), []byte(`1e3`), uint8(2), int64(9))
	f.Fuzz(func(t *testing.T, kind uint8, s1, s2, s3 string, r1, r2 []byte, bits uint8, n int64) {
		types := []Type{TypeInit, TypeText, TypeThinking, TypeToolStarted, TypeToolCompleted, TypeResult,
			TypeWarning, TypeUnknown, TypeFallbackEngaged, Type(s3), ""}
		n2 := n ^ 0x5555
		var p1, p2, p3, p4 *int64
		if bits&1 != 0 {
			p1 = &n
		}
		if bits&2 != 0 {
			p2 = &n2
		}
		if bits&4 != 0 {
			p3 = &n
		}
		if bits&8 != 0 {
			p4 = &n2
		}
		ev := Event{Type: types[int(kind)%len(types)], Text: s1, Subtype: s2}
		if bits&0x80 == 0 { // else the pointers stay nil
			ev.Init = &Init{SessionID: s1, Model: s2, CWD: s3, PermissionMode: s2, APIKeySource: s1}
			ev.Tool = &Tool{CallID: s1, Name: s2, Args: r1, Status: s3, Result: r2}
			ev.Result = &Result{Subtype: s2, IsError: bits&16 != 0, Text: s1, DurationMs: n, DurationAPIMs: n2, SessionID: s3, RequestID: s2,
				Usage: Usage{Reported: bits&32 != 0, InputTokens: p1, OutputTokens: p2, CacheReadTokens: p3, CacheWriteTokens: p4}}
			ev.Warning = &Warning{Code: s2, Message: s1}
			ev.Unknown = &Unknown{Type: s2, Subtype: s3, Raw: r1}
			ev.Fallback = &Fallback{SessionPurpose: s3, PrimaryAgent: s1, PrimaryProvider: s2, PrimaryModel: s3, FallbackAgent: s2,
				FallbackProvider: s1, FallbackModel: s3, TriggerPoint: s2, PromptIndex: int(n), FailureCategory: s1, ContextTransferred: bits&64 != 0}
		}
		for name, newEnc := range encoders {
			got, gotErr := encodeWith(newEnc, Event.MarshalJSONTo, ev)
			want, wantErr := encodeWith(newEnc, refMarshal, ev)
			if got != want || gotErr != wantErr {
				t.Fatalf("%s encoder, %#v:\ngot  %q, error %q\nwant %q, error %q", name, ev, got, gotErr, want, wantErr)
			}
		}
		checkWriter(t, ev)
	})
}

// checkWriter holds a Writer to NewEncoder's encoder: for ev between two
// other events (and a value written through Writer.Encoder), the same
// bytes, and an error exactly when the encoder has one.
func checkWriter(t *testing.T, ev Event) {
	t.Helper()
	first := Event{Type: TypeText, Text: "first"}
	last := Event{Type: TypeToolStarted, Tool: &Tool{CallID: "c", Name: "n", Args: jsontext.Value(`{"a": [1]}`)}}
	var want, got bytes.Buffer
	enc := NewEncoder(&want)
	w := NewWriter(&got)
	require.NoError(t, json.MarshalEncode(enc, first))
	require.NoError(t, w.Write(first))
	wantErr := json.MarshalEncode(enc, ev)
	gotErr := w.Write(ev)
	require.Equal(t, wantErr == nil, gotErr == nil, "%#v: error %v, the encoder's %v", ev, gotErr, wantErr)
	if wantErr != nil {
		// Both are mid-value, with what was written of it depending on
		// when the encoder flushed: nothing more is compared.
		return
	}
	require.NoError(t, json.MarshalEncode(enc, last))
	require.NoError(t, w.Write(last))
	require.NoError(t, enc.WriteToken(jsontext.String("outcome")))
	require.NoError(t, w.Encoder().WriteToken(jsontext.String("outcome")))
	require.Equal(t, want.String(), got.String(), "%#v", ev)
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

// TestWriterOnBench holds the Writer to the encoder on the benchmark's
// events, and checks it writes them straight (none through the encoder).
func TestWriterOnBench(t *testing.T) {
	for _, ev := range benchEvents() {
		checkWriter(t, ev)
		w := NewWriter(io.Discard)
		b, ok := ev.appendLine(nil)
		assert.True(t, ok && w.plainRaws(ev), "%s %s is written through the encoder", ev.Type, b)
	}
}

func TestWriterRawValues(t *testing.T) {
	tests := []struct {
		raw   string
		plain bool
	}{
		{`{"command":"ls -la"}`, true},
		{`{"a": 1}`, false},                // reformatted: the space goes
		{"{\"a\":\"\u2028\"}", false},      // escaped by EscapeForJS
		{"{\"a\":\"\u2029\"}", false},      // escaped by EscapeForJS
		{"{\"a\":\"\u2027\u00e9\"}", true}, // as it is
		{"{\"a\":\"\xff\"}", true},         // invalid UTF-8 is kept as it is
		{`{"a":1,"a":2}`, true},
		{`{"a":`, false},                        // not JSON: the encoder refuses it
		{``, true},                              // written as null
		{`{},"type":"text","text":"hi"`, false}, // more than one value
		{`0,"0":""`, false},
		{strings.Repeat("[", 9999) + strings.Repeat("]", 9999), true},
		{strings.Repeat("[", 10000) + strings.Repeat("]", 10000), false}, // deeper than the encoder allows in the event
	}
	for _, tt := range tests {
		ev := Event{Type: TypeToolCompleted, Tool: &Tool{CallID: "c", Name: "n", Args: jsontext.Value(tt.raw), Result: jsontext.Value(`{}`)}}
		w := NewWriter(io.Discard)
		assert.Equal(t, tt.plain, w.plainRaws(ev), "%q", tt.raw)
		checkWriter(t, ev)
	}
}

// TestMarshalMatchesRefOnBench holds the benchmark's events to refMarshal.
func TestMarshalMatchesRefOnBench(t *testing.T) {
	for _, ev := range benchEvents() {
		for name, newEnc := range encoders {
			got, gotErr := encodeWith(newEnc, Event.MarshalJSONTo, ev)
			want, wantErr := encodeWith(newEnc, refMarshal, ev)
			if got != want || gotErr != wantErr {
				t.Fatalf("%s encoder, %#v:\ngot  %q, error %q\nwant %q, error %q", name, ev, got, gotErr, want, wantErr)
			}
		}
	}
}
