package bench

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/agents/claude"
	"github.com/cursorkit/cursorkit/agents/codex"
	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/bench/internal/turns"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/turn"
)

// agentStream is how BenchmarkAgentStream builds one agent's 100 MB turn
// from a recorded turn of the agent's package's testdata: its first head
// lines (the init event, and the prompt's echo when the agent sends one),
// then its middle lines (text, thinking, tool started and completed
// pairs) repeated with each id made distinct per copy, then its last tail
// lines (the final event).
type agentStream struct {
	name string
	// file is the recorded turn, relative to the module's root.
	file       string
	head, tail int
	// ids are the strings that begin every id of the middle lines; each
	// copy k has them followed by "k-", or with numbered by k's digits
	// (Codex numbers its items "item_N" from a counter: the middle lines'
	// ids item_0 to item_9 become item_k0 to item_k9, each N distinct).
	ids      []string
	numbered bool
	// final is the type of the stream's last event (for the Node script).
	final string
}

// agentStreams are the agents BenchmarkAgentStream measures: the decoders
// other than Cursor's (BenchmarkStreamInProcess measures that one), each
// over its own format. Every turn runs in write mode, whose policy allows
// the tools the middle lines call.
func agentStreams() []agentStream {
	return []agentStream{
		// thinking, text and a Read tool_use; its tool_result; redacted
		// thinking and a Bash tool_use; its tool_result (an error); a
		// compact_boundary (passed through whole); text.
		{name: claude.Name, file: "agents/claude/testdata/good-turn.jsonl", head: 1, tail: 1, ids: []string{`"toolu_`, `"msg_`, `"uuid":"u-`}, final: "result"},
		// reasoning, a command_execution started and completed, a
		// todo_list started (passed through whole), an agent_message, the
		// todo_list completed.
		{name: codex.Name, file: "agents/codex/testdata/success.jsonl", head: 2, tail: 1, ids: []string{`"item_`}, numbered: true, final: "turn.completed"},
		// two assistant text deltas, read_file and grep_search (one
		// succeeding, one failing) started and completed, a last delta.
		// Gemini streams no thinking.
		{name: gemini.Name, file: "agents/gemini/testdata/turn-tools.jsonl", head: 2, tail: 1, ids: []string{`"tool_id":"`}, final: "result"},
	}
}

// writeAgentStream writes s's turn with copies of the middle lines to
// path: as many as make the file larger than size when copies is 0. It
// returns the number of copies.
func writeAgentStream(b *testing.B, s agentStream, path string, size int64, copies int) int {
	b.Helper()
	root, err := filepath.Abs("..")
	require.NoError(b, err)
	data, err := os.ReadFile(filepath.Join(root, s.file))
	require.NoError(b, err)
	lines := strings.SplitAfter(strings.TrimRight(string(data), "\n")+"\n", "\n")
	lines = lines[:len(lines)-1] // the "" after the last newline
	require.Greater(b, len(lines), s.head+s.tail, "%s has no middle lines", s.file)
	head := strings.Join(lines[:s.head], "")
	middle := strings.Join(lines[s.head:len(lines)-s.tail], "")
	tail := strings.Join(lines[len(lines)-s.tail:], "")
	for _, id := range s.ids {
		require.Contains(b, middle, id, "%s: no id to make distinct", s.file)
	}

	f, err := os.Create(path)
	require.NoError(b, err)
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	written := int64(len(head) + len(tail))
	_, err = w.WriteString(head)
	require.NoError(b, err)
	k := 0
	for ; copies > 0 && k < copies || copies == 0 && written <= size; k++ {
		block := middle
		for _, id := range s.ids {
			if s.numbered {
				block = strings.ReplaceAll(block, id, id+strconv.Itoa(k))
			} else {
				block = strings.ReplaceAll(block, id, id+strconv.Itoa(k)+"-")
			}
		}
		n, err := w.WriteString(block)
		require.NoError(b, err)
		written += int64(n)
	}
	_, err = w.WriteString(tail)
	require.NoError(b, err)
	require.NoError(b, w.Flush())
	return k
}

// agentTurn runs one turn of ag on res as `cursorkit run --agent NAME
// --write --json` does (Agent.Run with its TurnDefaults, every event
// written with event.NewWriter into a buffered io.Discard, flushed when
// the input drains) and returns how many events it had. The turn must be
// done.
func agentTurn(b *testing.B, ag agents.Agent, res discovery.Resolution, env []string) int64 {
	b.Helper()
	out := bufio.NewWriterSize(io.Discard, 64<<10)
	enc := event.NewWriter(out)
	var events int64
	var encErr error
	opts := ag.TurnDefaults()
	opts.Env = env
	opts.OnDrained = func() { _ = out.Flush() }
	opts.OnEvent = func(e event.Event) {
		events++
		if err := enc.Write(e); err != nil && encErr == nil {
			encErr = err
		}
	}
	o, err := ag.Run(context.Background(), res, true, agents.Turn{Prompt: turns.Prompt, Mode: turn.ModeWrite}, opts)
	require.NoError(b, err, "%s turn", ag.Name)
	require.NoError(b, encErr)
	require.NoError(b, out.Flush())
	require.Equal(b, turn.StatusDone, o.Status)
	return events
}

// BenchmarkAgentStream is BenchmarkStreamInProcess for each agent other
// than Cursor: a 100 MB turn in the agent's own format (agentStreams),
// played by the replay stand-in (this test binary installed under the
// agent's command name) and run in this process by Agent.Run (supervise,
// the agent's decoder and policy, turn.Run's verdict) with every event
// encoded as `run --json` does, against the raw pipe and Node over the
// same stand-in in the same run (medians of five alternating rounds).
// Floor, per agent: AGENT/node-speed >= 1.0.
func BenchmarkAgentStream(b *testing.B) {
	node := nodePath(b)
	dir := b.TempDir()
	for _, s := range agentStreams() {
		b.Run(s.name, func(b *testing.B) {
			ag, err := agents.Lookup(s.name)
			require.NoError(b, err)
			dir := filepath.Join(dir, s.name)
			bin := testkit.Install(b, dir, ag.Command, testkit.Simulator)
			res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: bin, Source: discovery.SourceOverride, Origin: ag.EnvBinary},
				discovery.EnvFromOS(), discovery.OSFS())
			require.NoError(b, err)
			args, err := ag.Args(agents.Turn{Prompt: turns.Prompt, Mode: turn.ModeWrite})
			require.NoError(b, err)
			replay := func(path string) []string { return testkit.ChildEnv(testkit.Simulator, agentsim.EnvReplay+"="+path) }

			// The events of one and of two copies of the middle lines tell
			// how many each copy has, so the big turn's count is known.
			small := func(copies int) int64 {
				path := filepath.Join(dir, "small"+strconv.Itoa(copies)+".jsonl")
				writeAgentStream(b, s, path, 0, copies)
				return agentTurn(b, ag, res, replay(path))
			}
			one, two := small(1), small(2)
			require.Positive(b, two-one, "%s: a copy of the middle lines had no event", s.name)
			stream := filepath.Join(dir, "stream.jsonl")
			copies := writeAgentStream(b, s, stream, streamBytes, 0)
			want := one + int64(copies-1)*(two-one)

			base := streamBaselines{b: b, sim: bin, node: node, env: replay(stream), args: args, final: s.final}
			var pipe, got, nodes []time.Duration
			for b.Loop() {
				for range streamRounds {
					pipe = append(pipe, base.pipe())
					var events int64
					got = append(got, timed(func() { events = agentTurn(b, ag, res, base.env) }))
					require.Equal(b, want, events, "events of %d copies of the middle lines", copies)
					if base.node != "" {
						nodes = append(nodes, base.viaNode())
					}
				}
			}
			reportThroughput(b, s.name, got, pipe, nodes)
			b.ReportMetric(float64(want), "events")
		})
	}
}
