package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// recordedLines are the lines of every recorded stream: this package's
// and the real CLI's (testdata/real).
func recordedLines(t testing.TB) map[string][][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	require.NoError(t, err)
	real, err := filepath.Glob(filepath.Join("..", "..", "testdata", "real", "claude", "*", "*.ndjson"))
	require.NoError(t, err)
	files = append(files, real...)
	require.NotEmpty(t, real)
	out := map[string][][]byte{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for line := range bytes.Lines(data) {
			if line = bytes.TrimSpace(line); len(line) > 0 {
				out[file] = append(out[file], line)
			}
		}
	}
	return out
}

// TestDecoderReadsOnlyTheMembersItUses: a member the line's type (or a
// block's) does not use may hold anything, as may every member of an
// event or a block of a type the decoder does not read; a member it uses
// must have its kind.
func TestDecoderReadsOnlyTheMembersItUses(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		types []event.Type // Feed's events after init's
		has   string       // in the protocol failure; "": none
	}{
		{name: "an unknown type", line: `{"type":"x","subtype":5,"message":5,"is_error":"no","usage":[1],"error":{}}`,
			types: []event.Type{event.TypeUnknown}},
		{name: "an unknown system subtype", line: `{"type":"system","subtype":"hook_response","message":5,"error":{},"model":1}`,
			types: []event.Type{event.TypeUnknown}},
		{name: "a result's members in an assistant event", line: `{"type":"assistant","is_error":"no","usage":5,"message":{"content":[{"type":"text","text":"a"}]}}`,
			types: []event.Type{event.TypeText}},
		{name: "an assistant's members in a result", line: `{"type":"result","message":5,"error":{},"model":[],"is_error":false,"result":"ok"}`,
			types: []event.Type{event.TypeText, event.TypeResult}},
		{name: "a user message's model", line: `{"type":"user","error":5,"message":{"model":5,"content":"SECRET PROMPT"}}`},
		{name: "a retry's members in init", line: `{"type":"system","subtype":"init","attempt":"x","message":5}`,
			types: []event.Type{event.TypeWarning, event.TypeUnknown}},
		{name: "an init's members in a retry", line: `{"type":"system","subtype":"api_retry","model":5,"attempt":2.7,"error":"rate_limit"}`,
			types: []event.Type{event.TypeWarning}},
		{name: "a block of another type", line: `{"type":"assistant","message":{"content":[{"type":"image","text":5,"id":{},"input":1},{"type":"redacted_thinking","thinking":5}]}}`,
			types: []event.Type{event.TypeThinking}},
		{name: "an assistant's blocks in a user message", line: `{"type":"user","message":{"content":[{"type":"text","text":5},{"type":"tool_use","id":5},{"type":"tool_result","tool_use_id":"t1","text":5}]}}`,
			types: []event.Type{event.TypeToolCompleted}},
		{name: "a user's blocks in an assistant message", line: `{"type":"assistant","message":{"content":[{"type":"tool_result","is_error":"x"},{"type":"text","text":"a","is_error":"x"}]}}`,
			types: []event.Type{event.TypeText}},
		{name: "a used member of another kind", line: `{"type":"assistant","usage":5,"message":{"content":[{"type":"image","id":5},{"type":"text","text":5}]}}`,
			has: `line 2, byte offset 98: "assistant" event: field "/message/content/1/text" is a number, not a string`},
		{name: "a used block member of another kind", line: `{"type":"user","is_error":"x","message":{"content":[{"type":"tool_result","is_error":"x"}]}}`,
			has: `"user" event: field "/message/content/0/is_error" is a string, not a boolean`},
		{name: "a block that is not an object", line: `{"type":"user","usage":5,"message":{"content":[{"type":"text"},null]}}`,
			has: `"user" event: field "/message/content/1" is null, not an object`},
		{name: "a system subtype of another kind", line: `{"type":"system","subtype":5}`,
			types: []event.Type{event.TypeUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newTestDecoder(t, Turn{})
			r := feedLines(d, []string{initLine, tt.line})
			if tt.has != "" {
				require.Error(t, r.err)
				assert.Equal(t, 2, r.errLine)
				assert.Equal(t, failure.Protocol, failure.KindOf(r.err))
				assert.Contains(t, r.err.Error(), tt.has)
				return
			}
			require.NoError(t, r.err)
			assert.Equal(t, append([]event.Type{event.TypeInit}, tt.types...), types(r.events))
		})
	}
}

// TestDecoderForeignMembers: each recorded line with a member its type
// does not use but another does, of another kind, yields what the line
// yields without it.
func TestDecoderForeignMembers(t *testing.T) {
	for file, lines := range recordedLines(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			plain, foreign := newTestDecoder(t, Turn{Mode: turn.ModeWrite}), newTestDecoder(t, Turn{Mode: turn.ModeWrite})
			for i, line := range lines {
				member := `,"is_error":"foreign"}`
				if bytes.HasPrefix(line, []byte(`{"type":"result"`)) {
					member = `,"message":5}`
				}
				other := append(bytes.TrimSuffix(bytes.Clone(line), []byte("}")), member...)
				want, wantErr := plain.Feed(line)
				got, gotErr := foreign.Feed(other)
				require.Equal(t, wantErr, gotErr, "%s:%d", file, i+1)
				for _, e := range want {
					if e.Type == event.TypeUnknown {
						e.Unknown.Raw = other // passed whole
					}
				}
				require.Equal(t, want, got, "%s:%d", file, i+1)
			}
			assert.Equal(t, plain.End(1, "boom"), foreign.End(1, "boom"))
		})
	}
}

// BenchmarkDecoder feeds the middle lines of the good turn (thinking,
// text, tool calls and results, a compact_boundary), repeated, as
// BenchmarkAgentStream's turn has them.
func BenchmarkDecoder(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "good-turn.jsonl"))
	require.NoError(b, err)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	head, middle := lines[0], lines[1:len(lines)-1]
	size := 0
	for _, l := range middle {
		size += len(l) + 1
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	d := newTestDecoder(b, Turn{Mode: turn.ModeWrite})
	_, err = d.Feed([]byte(head))
	require.NoError(b, err)
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		for _, l := range middle {
			buf = append(append(buf[:0], l...), '\n')
			if _, err := d.Feed(buf); err != nil {
				b.Fatal(err)
			}
		}
	}
}
