package codex_test

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/codex"
	"github.com/cursorkit/cursorkit/event"
)

// oddLines are lines the one-pass read may refuse, and what the walk
// makes of them: members of other kinds, nulls, names given twice,
// escapes and invalid UTF-8 in raw values, numbers that are no int64.
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

// FuzzFastSlow feeds the same lines to a Decoder that reads them in one
// pass where it can and to one that only walks their members: both must
// return the same events and errors, and the same verdict.
func FuzzFastSlow(f *testing.F) {
	seeds := append(seedLines(f), oddLines...)
	f.Add([]byte(strings.Join(seeds, "\n")), byte(0))
	f.Add([]byte(strings.Join(seeds, "\n")), byte(7))
	var refs []string
	for i := range seeds {
		refs = append(refs, "#"+strconv.Itoa(i))
	}
	for i := range oddLines {
		f.Add([]byte("#0\n#"+strconv.Itoa(len(seeds)-len(oddLines)+i)), byte(i))
	}
	f.Add([]byte(strings.Join(refs, "\n")), byte(5))
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		modes := []agent.Mode{"", agent.ModePlan, agent.ModeAsk, agent.ModeWrite}
		turn := codex.Turn{Mode: modes[int(mode)%len(modes)]}
		if mode&4 != 0 {
			turn.Tools = []string{"mcp", "collab"}
		}
		fast, err := codex.NewDecoder(turn)
		require.NoError(t, err)
		slow, err := codex.NewDecoder(turn)
		require.NoError(t, err)
		codex.SlowPathOnly(slow)
		for n, line := range bytes.Split(data, []byte("\n")) {
			if len(line) > 1 && line[0] == '#' {
				if i, err := strconv.Atoi(string(line[1:])); err == nil && i >= 0 && i < len(seeds) {
					line = []byte(seeds[i])
				}
			}
			buf := bytes.Clone(line)
			fastEvs, fastErr := fast.Feed(buf)
			clear(buf) // the caller reuses its buffer: the events must not view it
			slowEvs, slowErr := slow.Feed(line)
			require.Equal(t, slowErr, fastErr, "line %d: %q", n+1, line)
			require.Equal(t, slowEvs, fastEvs, "line %d: %q", n+1, line)
		}
		require.Equal(t, slow.End(int(mode)%3, ""), fast.End(int(mode)%3, ""))
		require.Equal(t, slow.Done(), fast.Done())
	})
}

// TestFastPathTakesRecordedLines: every line of the recorded streams but
// the web_search items (whose "id" is given twice) is read in one pass,
// up to the first failure.
func TestFastPathTakesRecordedLines(t *testing.T) {
	for _, name := range []string{"success.jsonl", "write.jsonl", "failed.jsonl", "disallowed.jsonl", "real-nonetwork.jsonl"} {
		d, err := codex.NewDecoder(codex.Turn{Mode: agent.ModeWrite, Tools: []string{"mcp"}})
		require.NoError(t, err)
		want, fed := 0, 0
		for _, l := range fileLines(t, name) {
			fed++
			if !strings.Contains(l, `"web_search"`) {
				want++
			}
			if _, err := d.Feed([]byte(l)); err != nil {
				break // a policy or network failure: the line was read
			}
		}
		require.Positive(t, fed, name)
		require.Equal(t, want, codex.FastLines(d), name)
	}
}

// BenchmarkDecoder is Feed over success.jsonl's middle lines repeated, the
// item ids made distinct per copy as BenchmarkAgentStream makes them; a
// new Decoder every 4096 copies. MB/s is input line bytes per second.
func BenchmarkDecoder(b *testing.B) {
	data, err := os.ReadFile("testdata/success.jsonl")
	require.NoError(b, err)
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	head, middle := all[:2], all[2:len(all)-1]
	var lines [][]byte
	size := 0
	for k := range 4096 {
		for _, l := range middle {
			l = strings.ReplaceAll(l, `"item_`, `"item_`+strconv.Itoa(k)+"-")
			lines = append(lines, []byte(l))
			size += len(l) + 1
		}
	}
	newDecoder := func() *codex.Decoder {
		d, err := codex.NewDecoder(codex.Turn{Mode: agent.ModeWrite})
		require.NoError(b, err)
		for _, l := range head {
			_, err := d.Feed([]byte(l))
			require.NoError(b, err)
		}
		return d
	}
	b.SetBytes(int64(size / len(lines)))
	b.ReportAllocs()
	d := newDecoder()
	i := 0
	var evs []event.Event
	for b.Loop() {
		if i == len(lines) {
			d, i = newDecoder(), 0
		}
		if evs, err = d.Feed(lines[i]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	_ = evs
}
