package codex_test

import (
	"bytes"
	stdjson "encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/codex"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
)

// seedLines are the lines of every testdata stream and near misses; a
// fuzzed line "#N" stands for seedLines()[N].
func seedLines(f *testing.F) []string {
	var lines []string
	for _, name := range []string{"success.jsonl", "write.jsonl", "failed.jsonl", "unauthorized.jsonl", "disallowed.jsonl", "real-nonetwork.jsonl"} {
		data, err := os.ReadFile("testdata/" + name)
		require.NoError(f, err)
		lines = append(lines, strings.Split(strings.TrimRight(string(data), "\n"), "\n")...)
	}
	return append(lines,
		`{"type":"item.started","item":{"id":"s","type":"collab_tool_call","tool":"spawn_agent","prompt":"SECRET","status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"x\ud800"}}`,
		`{"type":"turn.completed","usage":{"input_tokens":1e3}}`, `{"type":"turn.failed","error":null}`, `{"type":"error"}`,
		`{"type":"item.completed","item":null}`, `null`, `[1]`, "Codex banner", `{"type":"mystery"}`)
}

// FuzzDecoder feeds arbitrary lines: Feed never panics, every failure is
// a typed *failure.Error and sticky, every event marshals to one valid
// line with event.NewEncoder, and a line holding the prompt is never
// quoted in an error.
func FuzzDecoder(f *testing.F) {
	seeds := seedLines(f)
	f.Add([]byte(strings.Join(seeds, "\n")), byte(0))
	f.Add([]byte("#9\n#10\n#11\n#12\n#13\n#14\n#15\n#16\n#17\n#18\n#19\n#20\n#21"), byte(2))
	f.Add([]byte("#0\n#1\n#2\n#3\n#4\n#5\n#6\n#7\n#8"), byte(1))
	f.Add([]byte("Codex banner\n#0\n#38\n#39\n#40"), byte(3))
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		modes := []agent.Mode{"", agent.ModePlan, agent.ModeAsk, agent.ModeWrite}
		turn := codex.Turn{Mode: modes[int(mode)%len(modes)]}
		if mode&4 != 0 {
			turn.Tools = []string{"mcp", "collab"}
		}
		d, err := codex.NewDecoder(turn)
		require.NoError(t, err)
		var failed error
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
				continue
			}
			if err != nil {
				var fe *failure.Error
				require.ErrorAs(t, err, &fe)
				k := fe.Kind
				if k != failure.Protocol && k != failure.Policy {
					require.Equal(t, failure.Network, k, "%v", err)
				}
				if bytes.Contains(bytes.ToLower(line), []byte("prompt")) && k == failure.Protocol {
					require.NotContains(t, err.Error(), "SECRET", "a line holding the prompt in an error")
				}
				failed = err
			}
			for _, ev := range evs {
				out.Reset()
				require.NoError(t, ev.MarshalJSONTo(enc))
				b := out.Bytes()
				require.True(t, stdjson.Valid(b), "%s", b)
				require.Equal(t, 1, bytes.Count(b, []byte("\n")), "one line: %s", b)
			}
		}
		if end := d.End(int(mode)%3, string(data)); end != nil {
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
		args, err := codex.Args(codex.Turn{Prompt: "SECRET", Mode: agent.Mode(mode), Model: model, Resume: resume, Tools: []string{tool}})
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
