package gemini_test

import (
	"bytes"
	"encoding/json/jsontext"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// seedLines are realistic lines and near misses; a fuzzed line "#N"
// stands for seedLines()[N].
func seedLines() []string {
	return []string{
		`{"type":"init","timestamp":"2026-12-01T23:39:18.008Z","session_id":"f7753902","model":"auto"}`,
		`{"type":"message","timestamp":"t","role":"user","content":"SECRET PROMPT"}`,
		`{"type":"message","role":"assistant","content":"Hel","delta":true}`,
		`{"type":"message","role":"assistant","content":"Hello"}`,
		`{"type":"tool_use","tool_name":"read_file","tool_id":"r1","parameters":{"file_path":"a"}}`,
		`{"type":"tool_result","tool_id":"r1","status":"success","output":"x"}`,
		`{"type":"tool_use","tool_name":"run_shell_command","tool_id":"s1","parameters":{"command":"ls"}}`,
		`{"type":"tool_result","tool_id":"s1","status":"error","error":{"type":"E","message":"m"}}`,
		`{"type":"error","severity":"warning","message":"Loop detected"}`,
		`{"type":"error","severity":"error","message":"Invalid stream"}`,
		`{"type":"result","status":"success","stats":{"input_tokens":5,"cached":1,"input":4,"output_tokens":2,"duration_ms":9}}`,
		`{"type":"result","status":"error","error":{"type":"FatalAuthenticationError","message":"Please set an Auth method"}}`,
		`{"type":"message","role":"\u0075ser","content":"SECRET PROMPT","delta":1}`,
		`{"type":"tool_use","tool_name":"mcp_github_x","tool_id":"m1","parameters":null}`,
		"banner", `[1]`, `null`, `{"type":"mystery"}`, "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"a\xff\\ud800\",\"delta\":true}",
		// Near misses: members given twice, named in another case or with
		// escapes, of other kinds or null, members of other types.
		`{"type":"init","session_id":"a","session_id":"b","model":"m"}`, `{"type":"init","Session_ID":"x","MODEL":"y"}`,
		`{"\u0074ype":"message","role":"assistant","content":"\u0048i","delta":null}`,
		`{"type":"tool_use","tool_name":"read_file","tool_id":"r1","parameters":[1]}`,
		`{"type":"tool_result","tool_id":"r1","status":"success","output":{"a":1},"error":null}`,
		`{"type":"tool_result","tool_id":"r1","status":"error","output":null,"error":{"type":1,"message":"m"}}`,
		`{"type":"result","status":"success","stats":{"input_tokens":1.5}}`, `{"type":"result","stats":{"input_tokens":5,"cached":9,"duration_ms":null}}`,
		`{"type":"result","status":"error","error":{"type":"E","type":"F","message":"m"},"stats":null}`,
		`{"type":"message","role":"assistant","content":"a","delta":true,"stats":"x","tool_name":3}`, `{"type":"error","severity":"warning","message":null,"timestamp":1}`,
		`{"type":"tool_use","timestamp":null,"tool_name":"read_file","tool_id":"r1","parameters":{"a":{"b":1,"b":2}}} `, ` {"type":"init"} x`, `{"type":null}`, `{}`,
	}
}

// FuzzDecoder feeds arbitrary lines: never a panic; every failure a
// *failure.Error of kind protocol or policy, returned again, with no
// events, by every later Feed; Done exactly once a result event was
// yielded; every event marshals to one JSON line; the prompt's echo is
// never an event.
func FuzzDecoder(f *testing.F) {
	seeds := seedLines()
	f.Add([]byte(strings.Join(seeds, "\n")), byte(0))
	f.Add([]byte("#0\n#1\n#2\n#3\n#4\n#5\n#8\n#10"), byte(1))
	f.Add([]byte("#0\n#1\n#6\n#7\n#9\n#11"), byte(2))
	f.Add([]byte("#14\n#0\n#12\n#13"), byte(3))
	for i := 19; i < len(seeds); i++ {
		f.Add([]byte("#0\n#"+strconv.Itoa(i)+"\n#2\n#10"), byte(7))
	}
	for _, name := range []string{"turn-tools.jsonl", "turn-mcp.jsonl", "turn-shell.jsonl", "turn-error-result.jsonl", "turn-invalid-stream.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(b, byte(7))
	}
	f.Add([]byte(strings.Join([]string{bridgeInit, bridgeUse, bridgeResult,
		`{"type":"tool_result","tool_id":"mcp_cursorkitfa33fb33_fn_lookup_word__call_standin_0_0","status":"error","error":{"type":"mcp_tool_error","message":"x with response: [{\"functionResponse\":{\"response\":{\"content\":[]}}}]"}}`}, "\n")), byte(10))
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		modes := []turn.Mode{"", turn.ModePlan, turn.ModeAsk, turn.ModeWrite}
		req := gemini.Turn{Mode: modes[int(mode)%len(modes)]}
		if mode&4 != 0 {
			req.Tools = []string{"mcp"}
		}
		if mode&8 != 0 {
			// A bridge: never in plan mode, which refuses one.
			req.Mode, req.Bridge = modes[2+int(mode)%2], testBridge(os.TempDir())
		}
		d, err := gemini.NewDecoder(req)
		require.NoError(t, err)
		var failed error
		var result bool
		var out bytes.Buffer
		enc := event.NewEncoder(&out)
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) > 1 && line[0] == '#' {
				if n, err := strconv.Atoi(string(line[1:])); err == nil && n >= 0 && n < len(seeds) {
					line = []byte(seeds[n])
				}
			}
			evs, err := d.Feed(line)
			if failed != nil {
				require.Equal(t, failed, err, "failures are sticky")
				require.Empty(t, evs)
				continue
			}
			if err != nil {
				var fe *failure.Error
				require.ErrorAs(t, err, &fe)
				require.True(t, fe.Kind == failure.Protocol || fe.Kind == failure.Policy, "kind %q: %v", fe.Kind, err)
				require.Empty(t, evs)
				failed = err
			}
			for _, ev := range evs {
				out.Reset()
				require.NoError(t, ev.MarshalJSONTo(enc))
				b := out.Bytes()
				require.True(t, jsontext.Value(b).IsValid(turn.UnmarshalOptions()), "%s", b)
				require.Equal(t, 1, bytes.Count(b, []byte("\n")), "one line: %s", b)
				if bytes.Equal(line, []byte(seeds[1])) {
					require.NotContains(t, string(b), "SECRET", "the prompt's echo in an event")
				}
				if ev.Type == event.TypeResult {
					require.False(t, result, "a second result")
					result = true
				}
			}
			require.Equal(t, result, d.Done(), "Done exactly after a result")
		}
		if end := d.End(int(mode)%3, "stderr"); end != nil {
			require.True(t, failure.KindOf(end).Valid())
		}
	})
}

// FuzzArgs: Args never panics, refuses only with failure.Input, and never
// puts the prompt or an option-like value in argv.
func FuzzArgs(f *testing.F) {
	f.Add("plan", "gemini-2.5-pro", "5f0c7b7e-2a51", "read_file")
	f.Add("write", "-x", "latest", "mcp")
	f.Add("ask", "a b", "12", "a,b")
	f.Fuzz(func(t *testing.T, mode, model, resume, tool string) {
		req := gemini.Turn{Prompt: "SECRET", Mode: turn.Mode(mode), Model: model, Resume: resume, Tools: []string{tool}}
		args, err := gemini.Args(req)
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		require.Equal(t, []string{"-p", ""}, args[len(args)-2:])
		for _, a := range args[:len(args)-1] {
			require.NotEqual(t, "SECRET", a)
		}
		for i, a := range args {
			if i > 0 && (args[i-1] == "--model" || args[i-1] == "--resume") {
				require.False(t, strings.HasPrefix(a, "-"))
			}
		}
		_, err = gemini.NewDecoder(req)
		require.NoError(t, err)
	})
}

// FuzzParseVersion: never a panic; a version or a bounded protocol error.
func FuzzParseVersion(f *testing.F) {
	f.Add("0.61.0\n")
	f.Add("v1.2.3-preview.1+b")
	f.Add("\uFEFF\x1b[1m0.1.0")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := gemini.ParseVersion(s)
		if err != nil {
			require.Equal(t, failure.Protocol, failure.KindOf(err))
			require.Less(t, len(err.Error()), 400)
			return
		}
		require.NotEmpty(t, v)
		require.NotContains(t, v, " ")
	})
}

// FuzzClassifyMessage: never a panic, always a valid kind.
func FuzzClassifyMessage(f *testing.F) {
	f.Add("Please set an Auth method")
	f.Add("fetch failed sending request")
	f.Add("\x1b[31mquota exceeded")
	f.Fuzz(func(t *testing.T, s string) {
		require.True(t, gemini.ClassifyMessage(s).Valid())
	})
}
