package codex_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/codex"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// feed feeds lines to a new Decoder of turn until the first error.
func feed(t *testing.T, req codex.Turn, lines []string) (turn.Decoder, []event.Event, error) {
	t.Helper()
	d, err := codex.NewDecoder(req)
	require.NoError(t, err)
	var evs []event.Event
	for _, l := range lines {
		got, err := d.Feed([]byte(l))
		evs = append(evs, got...)
		if err != nil {
			return d, evs, err
		}
	}
	return d, evs, nil
}

func fileLines(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

func types(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		s := string(e.Type)
		switch e.Type {
		case event.TypeWarning:
			s += ":" + e.Warning.Code
		case event.TypeToolStarted, event.TypeToolCompleted:
			s += ":" + e.Tool.Name
		case event.TypeThinking:
			s += ":" + e.Subtype
		case event.TypeUnknown:
			s += ":" + e.Unknown.Type
		}
		out = append(out, s)
	}
	return out
}

func i64(n int64) *int64 { return &n }

func TestDecoderRecordedStreams(t *testing.T) {
	tests := []struct {
		file  string
		req   codex.Turn
		types []string
		kind  failure.Kind // of Feed's error, or else of End(0, "")
		check func(t *testing.T, evs []event.Event)
	}{
		{file: "success.jsonl", types: []string{"init", "thinking:delta", "thinking:completed", "tool_started:shell", "tool_completed:shell",
			"unknown:item.started", "text", "unknown:item.completed", "result"},
			check: func(t *testing.T, evs []event.Event) {
				assert.Equal(t, "0199a213-81c0-7800-8aa1-bbab2a035a53", evs[0].Init.SessionID)
				assert.Empty(t, evs[0].Init.Model, "the stream names no model")
				assert.Equal(t, "**Looking at the README**", evs[1].Text)
				assert.JSONEq(t, `{"command":"bash -lc 'cat README.md'"}`, string(evs[3].Tool.Args))
				assert.Equal(t, "item_1", evs[4].Tool.CallID)
				assert.Equal(t, "completed", evs[4].Tool.Status)
				assert.JSONEq(t, `{"exit_code":0,"aggregated_output":"# Hello\n"}`, string(evs[4].Tool.Result))
				assert.Equal(t, "The README says hello.", evs[6].Text)
				r := evs[8].Result
				assert.False(t, r.IsError)
				assert.Equal(t, event.Usage{Reported: true, InputTokens: i64(24763 - 24448), CacheReadTokens: i64(24448), OutputTokens: i64(122)}, r.Usage)
			}},
		{file: "write.jsonl", req: codex.Turn{Mode: turn.ModeWrite, Tools: []string{"mcp:docs"}},
			types: []string{"init", "tool_started:file_change", "tool_completed:file_change", "tool_started:web_search", "tool_completed:web_search",
				"tool_started:mcp", "tool_completed:mcp", "warning:codex_item_error", "warning:retry", "text", "result"},
			check: func(t *testing.T, evs []event.Event) {
				assert.JSONEq(t, `{"changes":[{"path":"/repo/a.txt","kind":"add"}]}`, string(evs[2].Tool.Args))
				assert.Equal(t, "ws_1", evs[3].Tool.CallID, "the last of two ids counts")
				assert.JSONEq(t, `{"server":"docs","tool":"search","arguments":{"q":"x"}}`, string(evs[5].Tool.Args))
				assert.JSONEq(t, `{"result":{"content":[{"type":"text","text":"found"}],"structured_content":null},"error":null}`, string(evs[6].Tool.Result))
			}},
		{file: "write.jsonl", req: codex.Turn{Mode: turn.ModeWrite, Tools: []string{"mcp"}},
			types: []string{"init", "tool_started:file_change", "tool_completed:file_change", "tool_started:web_search", "tool_completed:web_search",
				"tool_started:mcp", "tool_completed:mcp", "warning:codex_item_error", "warning:retry", "text", "result"}},
		{file: "write.jsonl", req: codex.Turn{Mode: turn.ModeWrite, Tools: []string{"mcp:other"}}, kind: failure.Policy,
			types: []string{"init", "tool_started:file_change", "tool_completed:file_change", "tool_started:web_search", "tool_completed:web_search"}},
		{file: "write.jsonl", req: codex.Turn{Mode: turn.ModeWrite}, kind: failure.Policy,
			types: []string{"init", "tool_started:file_change", "tool_completed:file_change", "tool_started:web_search", "tool_completed:web_search"}},
		{file: "disallowed.jsonl", req: codex.Turn{Mode: turn.ModeAsk}, kind: failure.Policy, types: []string{"init"}},
		{file: "disallowed.jsonl", req: codex.Turn{Mode: turn.ModeAsk, Tools: []string{"file_change"}},
			types: []string{"init", "tool_started:file_change", "tool_completed:file_change", "text", "result"}},
		{file: "failed.jsonl", kind: failure.Quota, types: []string{"init", "warning:codex_error", "result"},
			check: func(t *testing.T, evs []event.Event) {
				assert.True(t, evs[2].Result.IsError)
				assert.Contains(t, evs[2].Result.Text, "usage limit")
			}},
		{file: "unauthorized.jsonl", kind: failure.Auth, types: []string{"init", "warning:codex_error", "result"}},
		{file: "real-nonetwork.jsonl", kind: failure.Network,
			types: []string{"init", "warning:retry", "warning:retry", "warning:retry", "warning:retry", "warning:codex_item_error"}},
	}
	for _, tt := range tests {
		t.Run(tt.file+" "+string(tt.req.Mode)+" "+strings.Join(tt.req.Tools, ","), func(t *testing.T) {
			d, evs, err := feed(t, tt.req, fileLines(t, tt.file))
			assert.Equal(t, tt.types, types(evs))
			if err != nil {
				assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
				assert.Equal(t, err, d.End(1, ""), "End repeats Feed's failure")
			} else {
				require.True(t, d.Done())
				end := d.End(0, "")
				if tt.kind == "" {
					assert.NoError(t, end)
				} else {
					assert.Equal(t, tt.kind, failure.KindOf(end), "%v", end)
					assert.LessOrEqual(t, len(end.Error()), 1000)
				}
			}
			if tt.check != nil {
				tt.check(t, evs)
			}
		})
	}
}

func TestDecoderLines(t *testing.T) {
	const start = `{"type":"thread.started","thread_id":"t1"}`
	const done = `{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":0,"output_tokens":1}}`
	tests := []struct {
		name  string
		lines []string
		types []string
		kind  failure.Kind // Feed's
		check func(t *testing.T, evs []event.Event, err error)
	}{
		{name: "banners before the first event", lines: []string{"Codex v0.171.0", "", start, done}, types: []string{"warning:banner", "init", "result"}},
		{name: "CRLF and blank lines", lines: []string{start + "\r", "  ", done + "\r\n"}, types: []string{"init", "result"}},
		{name: "a text item comes once", lines: []string{start,
			`{"type":"item.started","item":{"id":"item_0","type":"agent_message","text":""}}`,
			`{"type":"item.updated","item":{"id":"item_0","type":"agent_message","text":"Hel"}}`,
			`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Hello"}}`,
			`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Hello"}}`,
			`{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Hello"}}`, done},
			types: []string{"init", "text", "text", "result"}},
		{name: "unknown events and item types pass through", lines: []string{start, `{"type":"item.plan.delta","item_id":"i","delta":"x"}`,
			`{"type":"item.completed","item":{"id":"p","type":"plan","text":"1. x"}}`, `{"type":"request_user_input","id":"1","call_id":"c","questions":[]}`, done},
			types: []string{"init", "unknown:item.plan.delta", "unknown:item.completed", "unknown:request_user_input", "result"}},
		{name: "a second thread.started", lines: []string{start, start, done}, types: []string{"init", "warning:duplicate_init", "unknown:thread.started", "result"}},
		{name: "usage: null counts stay nil, cached is subtracted", lines: []string{start, `{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":null}}`},
			types: []string{"init", "result"}, check: func(t *testing.T, evs []event.Event, _ error) {
				assert.Equal(t, event.Usage{Reported: true, InputTokens: i64(6), CacheReadTokens: i64(4)}, evs[1].Result.Usage)
			}},
		{name: "no usage", lines: []string{start, `{"type":"turn.completed"}`}, types: []string{"init", "result"},
			check: func(t *testing.T, evs []event.Event, _ error) { assert.False(t, evs[1].Result.Usage.Reported) }},
		{name: "invalid UTF-8 and duplicate names", lines: []string{start, "{\"type\":\"item.completed\",\"item\":{\"id\":\"a\",\"type\":\"agent_message\",\"text\":\"x\xffy\",\"text\":\"z\xff\"}}", done},
			types: []string{"init", "text", "result"}, check: func(t *testing.T, evs []event.Event, _ error) { assert.Equal(t, "z\uFFFD", evs[1].Text) }},
		{name: "a failed command is its status", lines: []string{start,
			`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"rm x","aggregated_output":"denied","exit_code":null,"status":"declined"}}`, done},
			types: []string{"init", "tool_completed:shell", "result"}, check: func(t *testing.T, evs []event.Event, _ error) {
				assert.Equal(t, "declined", evs[1].Tool.Status)
				assert.JSONEq(t, `{"exit_code":null,"aggregated_output":"denied"}`, string(evs[1].Tool.Result))
			}},
		{name: "the first event is not thread.started", lines: []string{`{"type":"turn.started"}`}, kind: failure.Protocol},
		{name: "not JSON after the first event", lines: []string{start, `{"type":"item.completed",`}, types: []string{"init"}, kind: failure.Protocol,
			check: func(t *testing.T, _ []event.Event, err error) {
				assert.Contains(t, err.Error(), "line 2, byte offset")
			}},
		{name: "JSON but not an object", lines: []string{start, `[1]`}, types: []string{"init"}, kind: failure.Protocol},
		{name: "a member of the wrong kind", lines: []string{start, `{"type":"item.completed","item":{"id":"a","type":"agent_message","text":7}}`}, types: []string{"init"}, kind: failure.Protocol,
			check: func(t *testing.T, _ []event.Event, err error) {
				assert.Contains(t, err.Error(), `line 2, byte offset 72: "item.completed" event: field "/item/text" is a number, not a string`)
			}},
		{name: "an item that is not an object", lines: []string{start, `{"type":"item.started","item":"x"}`}, types: []string{"init"}, kind: failure.Protocol},
		{name: "an item event without an item", lines: []string{start, `{"type":"item.started"}`}, types: []string{"init"}, kind: failure.Protocol},
		{name: "a usage count that is no integer", lines: []string{start, `{"type":"turn.completed","usage":{"input_tokens":1.5}}`}, types: []string{"init"}, kind: failure.Protocol},
		{name: "thread_id of the wrong kind", lines: []string{`{"type":"thread.started","thread_id":1}`}, kind: failure.Protocol},
		{name: "a line after the final event", lines: []string{start, done, `{"type":"turn.started"}`}, types: []string{"init", "result"}, kind: failure.Protocol},
		{name: "waiting for the network fails at once", lines: []string{start, `{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}`},
			types: []string{"init"}, kind: failure.Network},
		{name: "a shell call in a read-only mode runs under the sandbox", lines: []string{start,
			`{"type":"item.started","item":{"id":"c","type":"command_execution","command":"ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}`, done},
			types: []string{"init", "tool_started:shell", "result"}},
		{name: "an MCP call without mcp in Tools", lines: []string{start,
			`{"type":"item.updated","item":{"id":"m","type":"mcp_tool_call","server":"gh","tool":"x","arguments":{},"status":"in_progress"}}`},
			types: []string{"init"}, kind: failure.Policy},
		{name: "a sub-agent without collab in Tools", lines: []string{start,
			`{"type":"item.started","item":{"id":"s","type":"collab_tool_call","tool":"spawn_agent","prompt":"SECRET","status":"in_progress"}}`},
			types: []string{"init"}, kind: failure.Policy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, evs, err := feed(t, codex.Turn{}, tt.lines)
			assert.Equal(t, tt.types, types(evs))
			assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
			if err != nil {
				var fe *failure.Error
				require.ErrorAs(t, err, &fe)
				_, again := d.Feed([]byte(`{"type":"turn.started"}`))
				assert.Equal(t, err, again, "failures are sticky")
			}
			if tt.check != nil {
				tt.check(t, evs, err)
			}
		})
	}
}

// TestDecoderMembers: a line is read for the members its type uses, each
// of the kind Codex sends (null as absent), a member given twice its last
// value; what a type does not use, and every member of a type the decoder
// does not know, may hold anything.
func TestDecoderMembers(t *testing.T) {
	const start = `{"type":"thread.started","thread_id":"t1"}`
	tests := []struct {
		line  string
		types []string // after init
		err   string   // Feed's protocol error holds it
		check func(t *testing.T, evs []event.Event)
	}{
		{line: `{"type":"mystery","item":5,"usage":1}`, types: []string{"unknown:mystery"}},
		{line: `{"type":"item.completed","item":{"id":"t","type":"todo_list","items":5,"text":5}}`, types: []string{"unknown:item.completed"},
			check: func(t *testing.T, evs []event.Event) {
				assert.JSONEq(t, `{"type":"item.completed","item":{"id":"t","type":"todo_list","items":5,"text":5}}`, string(evs[1].Unknown.Raw))
			}},
		{line: `{"type":"turn.completed","usage":null,"item":5}`, types: []string{"result"}},
		{line: `{"type":"error","message":"a","thread_id":3}`, types: []string{"warning:codex_error"}},
		{line: `{"type":"item.started","item":{"id":"c","type":"command_execution","command":"a","command":"b","text":5,"changes":{}}}`,
			types: []string{"tool_started:shell"}, check: func(t *testing.T, evs []event.Event) {
				assert.JSONEq(t, `{"command":"b"}`, string(evs[1].Tool.Args))
			}},
		{line: `{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"\u0064ocs","tool":"t","arguments":[1, 2 ],"result":null,"error":{"message":"no"},"status":"failed"}}`,
			types: []string{"tool_completed:mcp"}, check: func(t *testing.T, evs []event.Event) {
				assert.JSONEq(t, `{"server":"docs","tool":"t","arguments":[1,2]}`, string(evs[1].Tool.Args))
				assert.JSONEq(t, `{"result":null,"error":{"message":"no"}}`, string(evs[1].Tool.Result))
			}},
		{line: `{"type":"item.completed","item":{"id":"s","type":"collab_tool_call","tool":"spawn_agent","prompt":"p","receiver_thread_ids":["t2"],"agents_states":{"t2":{}},"status":"completed"}}`,
			types: []string{"tool_completed:collab"}, check: func(t *testing.T, evs []event.Event) {
				assert.JSONEq(t, `{"tool":"spawn_agent","receiver_thread_ids":["t2"]}`, string(evs[1].Tool.Args), "not the prompt")
				assert.JSONEq(t, `{"t2":{}}`, string(evs[1].Tool.Result))
			}},
		{line: `{"type":"item.completed","item":{"id":"r","type":"reasoning","text":null}}`, types: []string{"thinking:delta", "thinking:completed"}},
		{line: `{"type":5}`, types: []string{"unknown:"}}, // a type that is no string names none
		{line: `{"type":"item.started","item":[]}`, err: `"item.started" event: field "/item" is an array, not an object`},
		{line: `{"type":"item.completed","item":null}`, err: `"item.completed" event: field "/item" is missing`},
		{line: `{"type":"item.completed","item":{"id":1,"type":"agent_message","text":"x"}}`, err: `field "/item/id" is a number, not a string`},
		{line: `{"type":"item.completed","item":{"id":"c","type":"command_execution","exit_code":1.5}}`, err: `field "/item/exit_code" is a number, not an integer in range`},
		{line: `{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"docs","result":[]}}`, err: `byte offset 90: "item.completed" event: field "/item/result" is an array, not an object`},
		{line: `{"type":"item.completed","item":{"id":"f","type":"file_change","changes":"all"}}`, err: `field "/item/changes" is a string, not an array`},
		{line: `{"type":"turn.completed","usage":{"input_tokens":"10"}}`, err: `field "/usage/input_tokens" is a string, not an integer in range`},
		{line: `{"type":"turn.failed","error":{"message":7}}`, err: `field "/error/message" is a number, not a string`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			_, evs, err := feed(t, codex.Turn{Tools: []string{"mcp:docs", "collab"}}, []string{start, tt.line})
			if tt.err != "" {
				require.Error(t, err)
				assert.Equal(t, failure.Protocol, failure.KindOf(err))
				assert.Contains(t, err.Error(), "protocol violation at line 2")
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, append([]string{"init"}, tt.types...), types(evs))
			if tt.check != nil {
				tt.check(t, evs)
			}
		})
	}
}

func TestDecoderEnd(t *testing.T) {
	const start = `{"type":"thread.started","thread_id":"t1"}`
	norepo, err := os.ReadFile("testdata/real-norepo.stderr")
	require.NoError(t, err)
	tests := []struct {
		name   string
		lines  []string
		code   int
		stderr string
		kind   failure.Kind
	}{
		{name: "exit 0 without any event", code: 0, kind: failure.Protocol},
		{name: "exit 0 without a final event", lines: []string{start}, code: 0, kind: failure.Protocol},
		{name: "outside a git repository", code: 1, stderr: string(norepo), kind: failure.Setup},
		{name: "a crash before the first event", code: 1, stderr: "thread 'main' panicked", kind: failure.Process},
		{name: "interrupted: exit 1 without a final event", lines: []string{start, `{"type":"turn.started"}`}, code: 1, kind: failure.Process},
		{name: "a fatal error, then exit 1 without a final event", lines: []string{start, `{"type":"error","message":"Quota exceeded. Check your plan and billing details."}`}, code: 1, kind: failure.Quota},
		{name: "a fatal error before a completed turn", lines: []string{start, `{"type":"error","message":"unexpected status 401 Unauthorized"}`, `{"type":"turn.completed"}`}, kind: failure.Auth},
		{name: "a turn.failed without a message", lines: []string{start, `{"type":"turn.failed","error":{}}`}, kind: failure.Unclassified},
		{name: "a completed turn", lines: []string{start, `{"type":"turn.completed"}`}, code: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _, err := feed(t, codex.Turn{}, tt.lines)
			require.NoError(t, err)
			end := d.End(tt.code, tt.stderr)
			assert.Equal(t, tt.kind, failure.KindOf(end), "%v", end)
			if tt.kind == failure.Setup {
				assert.Contains(t, end.Error(), "git")
			}
		})
	}
}

// TestEventsMarshal: every event of the recorded streams marshals to one
// valid line with event.NewEncoder.
func TestEventsMarshal(t *testing.T) {
	for _, f := range []string{"success.jsonl", "write.jsonl", "failed.jsonl"} {
		_, evs, err := feed(t, codex.Turn{Mode: turn.ModeWrite, Tools: []string{"mcp"}}, fileLines(t, f))
		require.NoError(t, err)
		var out bytes.Buffer
		enc := event.NewEncoder(&out)
		for _, e := range evs {
			require.NoError(t, e.MarshalJSONTo(enc))
		}
		assert.Equal(t, len(evs), bytes.Count(out.Bytes(), []byte("\n")))
	}
}
