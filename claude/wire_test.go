package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agent"
)

// wireSeeds are lines on the border of what the first way reads: each is
// read by the walk alone, or by both ways with the same events.
var wireSeeds = []string{
	`{"type":"assistant","type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
	`{"type":"assistant","\u0074ype":"user","message":{"content":"SECRET PROMPT"}}`,
	`{"Type":"assistant","message":{"content":[{"type":"text","text":"a"}]}}`,
	`{"type":"assistant","message":{"content":[null]}}`,
	`{"type":"assistant","message":{"content":[{"type":"text","text":"a"},1]}}`,
	`{"type":"assistant","message":{"content":"x"}}`,
	`{"type":"assistant","message":{"content":{}}}`,
	`{"type":"assistant","message":null,"error":null}`,
	`{"type":"assistant","message":[]}`,
	`{"type":"assistant","error":5,"message":{"content":[{"type":"text","text":"a"}]}}`,
	`{"type":"assistant","error":"rate_limit","message":{"content":[{"type":"text","text":" busy "},{"type":"thinking","thinking":"t"},{"type":"text","text":"x"}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"redacted_thinking","text":5}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"text","text":"a","id":5}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t9","name":"Read","input":null}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t8","name":"Read","input":{"a":1,"a":2}}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t7","name":"Read","input": [ 1 , "\ud800" ] }]}}`,
	"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"t6\",\"name\":\"Read\",\"input\":\"\xff\"}]}}",
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t5","name":"Bash","input":{}},{"type":"text","text":1}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t9","content":null,"is_error":null}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t7","content":[{"type":"text","text":"x"}],"is_error":"no"}]}}`,
	`{"type":"user","message":{"content":[{"type":"text","text":"SECRET PROMPT"},{"type":"tool_result","tool_use_id":"t8","content":{"k":1}}]}}`,
	`{"type":"system","subtype":"api_retry","attempt":"1","max_retries":null}`,
	`{"type":"system","subtype":"api_retry","attempt":2.7,"max_retries":1e30,"retry_delay_ms":-5,"error_status":429,"error":"rate_limit"}`,
	`{"type":"system","subtype":"api_retry","attempt":1,"retry_delay_ms":1e400}`,
	`{"type":"system","subtype":"hook_response","message":5,"error":{}}`,
	`{"type":"system","subtype":"init","session_id":"s2","model":null}`,
	`{"type":"x","subtype":5}`,
	`{"type":"result","subtype":5}`,
	`{"type":"result","errors":["a",null,"","b"],"usage":null,"duration_ms":1e30,"duration_api_ms":-1e30}`,
	`{"type":"result","subtype":"error_during_execution","errors":[],"result":null}`,
	`{"type":"result","errors":{"a":1}}`,
	`{"type":"result","usage":{"input_tokens":-1e300,"output_tokens":1.5,"cache_read_input_tokens":null}}`,
	`{"type":"result","usage":{"input_tokens":1,"input_tokens":2}}`,
	`{"type":"result","usage":[1]}`,
	` {"type":"result","is_error":null} `,
	`{"type":"result"} x`,
	`{"type":"result","result":"\ud800\udc00\udc00"}`,
	"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xff\\ud800\"}]}}",
	`null`, `[]`, `"x"`, `{}`, `{"type":null}`, `{"type":1}`,
}

// FuzzFastSlow feeds the same lines to a Decoder that reads them the first
// way when it can (wire.go) and to one that reads every line with the
// walk: both yield the same events and errors, line by line, and the same
// verdict. Each line is fed from a buffer overwritten after Feed, so an
// event that kept a view of it would differ.
func FuzzFastSlow(f *testing.F) {
	for _, name := range []string{"good-turn.jsonl", "not-logged-in.jsonl", "api-retry-no-network.jsonl", "max-turns.jsonl",
		"rate-limited.jsonl", "resume-missing.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(data, byte(3))
		f.Add(data, byte(1))
	}
	f.Add([]byte(strings.Join([]string{initLine, thinkingAndTool, toolResult, notLoggedIn, notLoggedInResult}, "\n")), byte(7))
	f.Add([]byte(strings.Join(append([]string{initLine, textLine("hi"), toolUse("t1", "mcp__github__x")}, wireSeeds...), "\n")), byte(7))
	for _, s := range wireSeeds {
		f.Add([]byte(initLine+"\n"+s+"\n"+resultLine), byte(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		modes := []agent.Mode{"", agent.ModePlan, agent.ModeAsk, agent.ModeWrite}
		turn := Turn{Prompt: "SECRET PROMPT", Mode: modes[int(mode)%len(modes)]}
		if mode&4 != 0 {
			turn.Tools = []string{"mcp__github", "Task"}
		}
		fast, slow := newTestDecoder(t, turn), newTestDecoder(t, turn)
		slow.useWalkOnly()
		for i, line := range bytes.Split(data, []byte("\n")) {
			fastLine, slowLine := bytes.Clone(line), bytes.Clone(line)
			fastEvs, fastErr := fast.Feed(fastLine)
			slowEvs, slowErr := slow.Feed(slowLine)
			for i := range fastLine {
				fastLine[i], slowLine[i] = 'x', 'y'
			}
			require.Equal(t, slowErr, fastErr, "line %d: %q", i+1, line)
			require.Equal(t, slowEvs, fastEvs, "line %d: %q", i+1, line)
		}
		exit := int(mode>>3) % 3
		require.Equal(t, slow.End(exit, "boom"), fast.End(exit, "boom"))
		require.Equal(t, slow.Done(), fast.Done())
	})
}

// TestWireReadsRecordedLines: every line of a recorded turn is read the
// first way, or the fast path would be dead.
func TestWireReadsRecordedLines(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var r lineReader
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for i, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
			require.NotNil(t, r.decode(line), "%s:%d", file, i+1)
		}
	}
	for _, line := range []string{initLine, resultLine, echoLine, textLine("hi"), toolUse("t1", "Bash"), notLoggedIn, notLoggedInResult,
		thinkingAndTool, toolResult} {
		require.NotNil(t, r.decode([]byte(line)), line)
	}
}

// BenchmarkDecoder feeds the middle lines of the good turn (thinking,
// text, tool calls and results, a compact_boundary), repeated, as
// BenchmarkAgentStream's turn has them; walk reads every line with the
// member walk.
func BenchmarkDecoder(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "good-turn.jsonl"))
	require.NoError(b, err)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	head, middle := lines[0], lines[1:len(lines)-1]
	size := 0
	for _, l := range middle {
		size += len(l) + 1
	}
	for _, walk := range []bool{false, true} {
		name := "wire"
		if walk {
			name = "walk"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			d := newTestDecoder(b, Turn{Mode: agent.ModeWrite})
			if walk {
				d.useWalkOnly()
			}
			_, err := d.Feed(head)
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
		})
	}
}
