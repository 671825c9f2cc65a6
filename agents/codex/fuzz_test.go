package codex_test

import (
	"bytes"
	"encoding/json/jsontext"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/codex"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// seedLines are the lines of every testdata stream, near misses and
// oddLines; a fuzzed line "#N" stands for seedLines()[N].
func seedLines(f *testing.F) []string {
	var lines []string
	for _, name := range []string{"success.jsonl", "write.jsonl", "failed.jsonl", "unauthorized.jsonl", "disallowed.jsonl", "real-nonetwork.jsonl"} {
		data, err := os.ReadFile("testdata/" + name)
		require.NoError(f, err)
		lines = append(lines, strings.Split(strings.TrimRight(string(data), "\n"), "\n")...)
	}
	lines = append(lines,
		`{"type":"item.started","item":{"id":"s","type":"collab_tool_call","tool":"spawn_agent","prompt":"SECRET","status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"x\ud800"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":1e3}}`, `{"type":"turn.failed","error":null}`, `{"type":"error"}`,
		`{"type":"item.completed","item":null}`, `null`, `[1]`, "Codex banner", `{"type":"mystery"}`)
	return append(lines, oddLines...)
}

// oddLines are lines that test the reading of members: members of other
// kinds, nulls, names given twice, escapes and invalid UTF-8 in raw
// values, numbers that are no int64, members an event type does not use.
var oddLines = []string{
	`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"ls","aggregated_output":null,"exit_code":1.5,"status":"failed"}}`,
	`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"ls","exit_code":"0","status":"completed"}}`,
	`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":null,"aggregated_output":"\u00e9\ud800 \xff","exit_code":null,"status":null}}`,
	`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"a","command":"b","exit_code":99999999999999999999}}`,
	`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":["ls"],"exit_code":-0}}`,
	`{"type":"item.started","item":{"id":"c","type":"command_execution","command":"x","text":5,"changes":{}}}`,
	`{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"\u0064ocs","tool":"t","arguments":[1, 2 ],"result":null,"error":{"message":"no"},"status":"failed"}}`,
	`{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":5,"tool":"t"}}`,
	`{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"docs","tool":"t","result":[]}}`,
	`{"type":"item.completed","item":{"id":"w","type":"web_search","query":"q","action":{"a":1,"a":2}}}`,
	`{"type":"item.completed","item":{"id":"w","type":"web_search","query":null,"action":null}}`,
	`{"type":"item.completed","item":{"id":"f","type":"file_change","changes":"all","status":"completed"}}`,
	`{"type":"item.completed","item":{"id":"s","type":"collab_tool_call","tool":"spawn_agent","receiver_thread_ids":["t1"],"agents_states":{"t1":{"status":"done"}},"status":"completed"}}`,
	`{"type":"item.completed","item":{"id":"s","type":"collab_tool_call","tool":"spawn_agent","agents_states":[]}}`,
	`{"type":"item.completed","item":{"id":"r","type":"reasoning","text":null}}`,
	`{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"A","Text":"B"}}`,
	`{"type":"item.completed","item":{"id":"e","type":"error","message":["x"]}}`,
	`{"type":"item.completed","item":{"id":"t","type":"todo_list","items":5,"text":5}}`,
	`{"type":"item.completed","item":{"id":1,"type":"agent_message","text":"x"}}`,
	`{"type":"item.completed","item":{"type":null}}`,
	`{"type":"item.completed","item":5}`, `{"type":"item.updated"}`, `{"type":"item.started","item":[]}`,
	`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":20,"output_tokens":null}}`,
	`{"type":"turn.completed","usage":{"input_tokens":"10"}}`, `{"type":"turn.completed","usage":[]}`,
	`{"type":"turn.completed","usage":null,"item":5}`, `{"type":"turn.completed","usage":{"output_tokens":1.0}}`,
	`{"type":"turn.failed","error":{"message":"boom","message":"last"}}`, `{"type":"turn.failed","error":"x"}`,
	`{"type":"turn.failed","error":{"message":7}}`,
	`{"type":"error","message":"Reconnecting... 1/5 (x)"}`, `{"type":"error","message":"Reconnecting... waiting for network (x)"}`,
	`{"type":"error","message":null}`, `{"type":"error","message":{}}`, `{"type":"error","message":"a","thread_id":3}`,
	`{"type":"thread.started","thread_id":7}`, `{"type":"thread.started","thread_id":"t","type":"turn.started"}`,
	`{"type":5}`, `{"type":null}`, `{"TYPE":"turn.started"}`, ` {"type":"turn.started"} `, `{"type":"turn.started"} x`,
	`{"type":"turn.started","x":"\xff"}`, `{"type":"mystery","item":5,"usage":1}`, `"str"`, `{`, "\xff",
}

// FuzzDecoder feeds arbitrary lines, a line "#N" standing for
// seedLines()[N]: Feed never panics; a failure is a *failure.Error of a
// kind Feed documents (protocol, policy, network), and Feed keeps
// returning it, as End does; Done turns true with the final event and
// only then; every event marshals to one valid line with
// event.NewEncoder; End's verdict has a valid kind.
func FuzzDecoder(f *testing.F) {
	seeds := seedLines(f)
	f.Add([]byte(strings.Join(seeds, "\n")), byte(0))
	f.Add([]byte("#9\n#10\n#11\n#12\n#13\n#14\n#15\n#16\n#17\n#18\n#19\n#20\n#21"), byte(2))
	f.Add([]byte("#0\n#1\n#2\n#3\n#4\n#5\n#6\n#7\n#8"), byte(1))
	f.Add([]byte("Codex banner\n#0\n#38\n#39\n#40"), byte(3))
	for i := range oddLines {
		f.Add([]byte("#0\n#"+strconv.Itoa(len(seeds)-len(oddLines)+i)), byte(i))
	}
	f.Add([]byte(strings.Join([]string{bridgeThread, bridgeStarted, bridgeDone, bridgeFailed, bridgeAnswer, bridgeEnd}, "\n")), byte(10))
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		modes := []turn.Mode{"", turn.ModePlan, turn.ModeAsk, turn.ModeWrite}
		req := codex.Turn{Mode: modes[int(mode)%len(modes)]}
		if mode&4 != 0 {
			req.Tools = []string{"mcp", "collab"}
		}
		if mode&8 != 0 {
			req.Bridge = testBridge()
		}
		d, err := codex.NewDecoder(req)
		require.NoError(t, err)
		var failed error
		final := false
		var out bytes.Buffer
		enc := event.NewEncoder(&out)
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(line) > 1 && line[0] == '#' {
				if n, err := strconv.Atoi(string(line[1:])); err == nil && n >= 0 && n < len(seeds) {
					line = []byte(seeds[n])
				}
			}
			buf := bytes.Clone(line)
			evs, err := d.Feed(buf)
			clear(buf) // the caller reuses its buffer: the events must not view it
			if failed != nil {
				require.Equal(t, failed, err, "failures are sticky")
				require.Empty(t, evs)
				continue
			}
			if err != nil {
				var fe *failure.Error
				require.ErrorAs(t, err, &fe)
				require.Contains(t, []failure.Kind{failure.Protocol, failure.Policy, failure.Network}, fe.Kind, "%v", err)
				require.Empty(t, evs)
				failed = err
			}
			for _, ev := range evs {
				require.False(t, final, "an event after the final event")
				final = ev.Type == event.TypeResult
				out.Reset()
				require.NoError(t, ev.MarshalJSONTo(enc))
				b := out.Bytes()
				require.True(t, jsontext.Value(b).IsValid(turn.UnmarshalOptions()), "%s", b)
				require.Equal(t, 1, bytes.Count(b, []byte("\n")), "one line: %s", b)
			}
			require.Equal(t, final, d.Done(), "Done exactly after the final event")
		}
		end := d.End(int(mode)%3, string(data))
		if failed != nil {
			require.Equal(t, failed, end, "End repeats Feed's failure")
		} else if end != nil {
			require.True(t, failure.KindOf(end).Valid())
		}
	})
}

// FuzzArgs: Args never panics, refuses only as failure.Input, and never
// passes the prompt or a value an option parser could take for an option.
func FuzzArgs(f *testing.F) {
	f.Add("plan", "gpt-5", "", "mcp:docs")
	f.Add("write", "", "01a233f7-8906-78b1-976c-e96fd9301087", "file_change")
	f.Add("ask", "-m", "--last", "read")
	f.Fuzz(func(t *testing.T, mode, model, resume, tool string) {
		args, err := codex.Args(codex.Turn{Prompt: "SECRET", Mode: turn.Mode(mode), Model: model, Resume: resume, Tools: []string{tool}})
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		require.Equal(t, "-", args[len(args)-1])
		for i, a := range args {
			require.NotContains(t, a, "SECRET")
			if i > 0 && (args[i-1] == "--model" || args[i-1] == "resume") {
				require.False(t, strings.HasPrefix(a, "-"))
			}
		}
	})
}

// FuzzParseVersion: never panics; a failure is failure.Protocol with a
// bounded message; a version is a line's.
func FuzzParseVersion(f *testing.F) {
	f.Add("codex-cli 0.171.0\n")
	f.Add("WARNING: x\ncodex-cli 0.171.0-alpha.1")
	f.Add("\xff")
	f.Fuzz(func(t *testing.T, out string) {
		v, err := codex.ParseVersion(out)
		if err != nil {
			require.Equal(t, failure.Protocol, failure.KindOf(err))
			require.Less(t, len(err.Error()), 400)
			return
		}
		require.Contains(t, out, v)
	})
}

// FuzzClassifyMessage: never panics and returns a valid kind.
func FuzzClassifyMessage(f *testing.F) {
	f.Add("Reconnecting... waiting for network (Connection failed: error sending request)")
	f.Add("Not inside a trusted directory and --skip-git-repo-check was not specified.")
	f.Add("\x1b[31mstatus 401\x1b")
	f.Fuzz(func(t *testing.T, text string) {
		require.True(t, codex.ClassifyMessage(text).Valid())
	})
}
