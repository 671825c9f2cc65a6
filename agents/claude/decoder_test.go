package claude

import (
	"bytes"
	"encoding/json/v2"
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

const (
	initLine   = `{"type":"system","subtype":"init","cwd":"/repo","session_id":"s1","model":"claude-sonnet-4-5","permissionMode":"plan","apiKeySource":"none"}`
	resultLine = `{"type":"result","subtype":"success","is_error":false,"duration_ms":10,"duration_api_ms":5,"result":"Done.","session_id":"s1","usage":{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":3,"cache_creation_input_tokens":4}}`
	echoLine   = `{"type":"user","message":{"role":"user","content":"SECRET PROMPT"},"session_id":"s1"}`
)

func textLine(text string) string {
	return `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + text + `"}]},"session_id":"s1"}`
}

func toolUse(id, name string) string {
	return `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{"x":1}}]},"session_id":"s1"}`
}

func newTestDecoder(t testing.TB, req Turn) *decoder {
	t.Helper()
	d, err := NewDecoder(req)
	require.NoError(t, err)
	return d.(*decoder)
}

type fed struct {
	events  []event.Event
	err     error
	errLine int
}

func feedLines(d *decoder, lines []string) fed {
	var r fed
	for i, l := range lines {
		evs, err := d.Feed([]byte(l))
		r.events = append(r.events, evs...)
		if err != nil {
			r.err, r.errLine = err, i+1
			return r
		}
	}
	return r
}

func readStream(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

func types(evs []event.Event) []event.Type {
	var out []event.Type
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func TestDecoderRecordedStreams(t *testing.T) {
	tests := []struct {
		file   string
		mode   turn.Mode
		exit   int
		stderr string
		types  []event.Type
		kind   failure.Kind // End's verdict, "" for nil
		check  func(t *testing.T, evs []event.Event, err error)
	}{
		{file: "not-logged-in.jsonl", exit: 1, kind: failure.Auth,
			types: []event.Type{event.TypeInit, event.TypeWarning, event.TypeResult},
			check: func(t *testing.T, evs []event.Event, err error) {
				assert.Equal(t, event.Init{SessionID: "43367082-969f-4ff0-ae35-0bfcf4c259a1", Model: "claude-opus-4-8[1m]",
					CWD: "/tmp/rc/ws", PermissionMode: "default", APIKeySource: "none"}, *evs[0].Init)
				assert.Equal(t, WarnAPIError, evs[1].Warning.Code)
				assert.Contains(t, evs[1].Warning.Message, "Not logged in")
				r := evs[2].Result
				assert.Equal(t, "success", r.Subtype)
				assert.True(t, r.IsError)
				assert.Contains(t, err.Error(), "Not logged in · Please run /login")
				zero := int64(0)
				assert.Equal(t, event.Usage{Reported: true, InputTokens: &zero, OutputTokens: &zero, CacheReadTokens: &zero, CacheWriteTokens: &zero}, r.Usage)
			}},
		{file: "api-retry-no-network.jsonl", exit: 143, kind: failure.Process,
			types: []event.Type{event.TypeInit, event.TypeWarning, event.TypeWarning, event.TypeWarning, event.TypeWarning,
				event.TypeWarning, event.TypeWarning, event.TypeWarning, event.TypeWarning},
			check: func(t *testing.T, evs []event.Event, _ error) {
				assert.Equal(t, "ANTHROPIC_API_KEY", evs[0].Init.APIKeySource)
				assert.Equal(t, event.WarnRetry, evs[1].Warning.Code)
				assert.Equal(t, `a model request got no answer (network: unknown): retry 1 of 10 in 0.6 s`, evs[1].Warning.Message)
				assert.Equal(t, &event.Retry{Attempt: 1, Max: 10, DelayMs: 619, Kind: failure.Network}, evs[1].Warning.Retry)
			}},
		{file: "resume-missing.jsonl", exit: 1, stderr: "resume-missing.stderr", kind: failure.Input,
			types: []event.Type{event.TypeResult},
			check: func(t *testing.T, evs []event.Event, err error) {
				assert.Equal(t, "error_during_execution", evs[0].Result.Subtype)
				assert.Contains(t, evs[0].Result.Text, "No conversation found with session ID")
				assert.Contains(t, err.Error(), "No conversation found")
			}},
		{file: "good-turn.jsonl", mode: turn.ModeWrite,
			types: []event.Type{event.TypeInit, event.TypeThinking, event.TypeThinking, event.TypeText, event.TypeToolStarted,
				event.TypeToolCompleted, event.TypeThinking, event.TypeToolStarted, event.TypeToolCompleted, event.TypeUnknown,
				event.TypeText, event.TypeResult},
			check: func(t *testing.T, evs []event.Event, _ error) {
				assert.Equal(t, "delta", evs[1].Subtype)
				assert.Equal(t, "The user wants a summary.", evs[1].Text)
				assert.Equal(t, "completed", evs[2].Subtype)
				assert.Equal(t, "I'll read the README first.", evs[3].Text)
				assert.Equal(t, &event.Tool{CallID: "toolu_01", Name: "Read", Args: []byte(`{"file_path":"/repo/README.md"}`)}, evs[4].Tool)
				assert.Equal(t, "success", evs[5].Tool.Status)
				assert.Equal(t, "Read", evs[5].Tool.Name)
				assert.JSONEq(t, `"     1\thello\n"`, string(evs[5].Tool.Result))
				assert.Equal(t, "completed", evs[6].Subtype)
				assert.Equal(t, "Bash", evs[8].Tool.Name)
				assert.Equal(t, "error", evs[8].Tool.Status)
				assert.Equal(t, "compact_boundary", evs[9].Unknown.Subtype)
				assert.Equal(t, "The README says hello.", evs[10].Text, "the result's copy of the text is not said again")
				u := evs[11].Result.Usage
				assert.Equal(t, int64(36), *u.InputTokens)
				assert.Equal(t, int64(18), *u.OutputTokens)
				assert.Equal(t, int64(2000), *u.CacheReadTokens)
				assert.Equal(t, int64(100), *u.CacheWriteTokens)
				assert.Equal(t, int64(2345), evs[11].Result.DurationMs)
			}},
		{file: "good-turn.jsonl", mode: turn.ModePlan, kind: failure.Policy,
			types: []event.Type{event.TypeInit, event.TypeThinking, event.TypeThinking, event.TypeText, event.TypeToolStarted, event.TypeToolCompleted},
			check: func(t *testing.T, _ []event.Event, err error) {
				assert.Contains(t, err.Error(), `tool "Bash" is not allowed in plan mode`)
				assert.Contains(t, err.Error(), `line 4, call id "toolu_02"`)
			}},
		{file: "max-turns.jsonl", mode: turn.ModeAsk, exit: 1, kind: failure.Unclassified,
			types: []event.Type{event.TypeInit, event.TypeToolStarted, event.TypeToolCompleted, event.TypeResult},
			check: func(t *testing.T, evs []event.Event, err error) {
				assert.JSONEq(t, `[{"type":"text","text":"a.go"}]`, string(evs[2].Tool.Result))
				assert.Equal(t, "Reached maximum number of turns (1)", evs[3].Result.Text)
				assert.Contains(t, err.Error(), `"error_max_turns"`)
			}},
		{file: "rate-limited.jsonl", exit: 1, kind: failure.RateLimited,
			types: []event.Type{event.TypeInit, event.TypeWarning, event.TypeWarning, event.TypeResult},
			check: func(t *testing.T, evs []event.Event, _ error) {
				assert.Equal(t, `a model request failed (HTTP 529, rate_limited: rate_limit): retry 1 of 10 in 0.5 s`, evs[1].Warning.Message)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+string(tt.mode), func(t *testing.T) {
			d := newTestDecoder(t, Turn{Mode: tt.mode})
			r := feedLines(d, readStream(t, tt.file))
			assert.Equal(t, tt.types, types(r.events))
			var stderr string
			if tt.stderr != "" {
				b, err := os.ReadFile(filepath.Join("testdata", tt.stderr))
				require.NoError(t, err)
				stderr = string(b)
			}
			err := d.End(tt.exit, stderr)
			if tt.kind == "" {
				require.NoError(t, r.err)
				require.NoError(t, err)
				assert.True(t, d.Done())
			} else {
				assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
			}
			var out bytes.Buffer
			enc := event.NewEncoder(&out)
			for _, e := range r.events {
				require.NoError(t, json.MarshalEncode(enc, e))
			}
			if tt.check != nil {
				tt.check(t, r.events, err)
			}
		})
	}
}

func TestDecoderProtocol(t *testing.T) {
	tests := []struct {
		name    string
		lines   []string
		errLine int // the line Feed fails on; 0: none
		kind    failure.Kind
		has     string // in the error
		types   []event.Type
	}{
		{name: "banners before the first event", lines: []string{"Update available!", "[1]", "null", initLine, resultLine},
			types: []event.Type{event.TypeWarning, event.TypeWarning, event.TypeWarning, event.TypeInit, event.TypeText, event.TypeResult}},
		{name: "an unknown event before init passes", lines: []string{`{"type":"system","subtype":"hook_started"}`, initLine, resultLine},
			types: []event.Type{event.TypeUnknown, event.TypeInit, event.TypeText, event.TypeResult}},
		{name: "an assistant event first", lines: []string{textLine("hi")}, errLine: 1, kind: failure.Protocol, has: "not a system/init event"},
		{name: "not JSON after init", lines: []string{initLine, "oops {"}, errLine: 2, kind: failure.Protocol, has: "line 2, byte offset 0"},
		{name: "null after init", lines: []string{initLine, "null"}, errLine: 2, kind: failure.Protocol, has: "line 2, byte offset 0: not a JSON object"},
		{name: "truncated JSON", lines: []string{initLine, `{"type":"assistant","message":{`}, errLine: 2, kind: failure.Protocol, has: "excerpt"},
		{name: "a wrong kind", lines: []string{initLine, `{"type":"result","is_error":"yes"}`}, errLine: 2, kind: failure.Protocol, has: `line 2, byte offset 28: "result" event: field "/is_error" is a string, not a boolean`},
		{name: "a wrong kind in usage", lines: []string{initLine, `{"type":"result","usage":{"input_tokens":"1"}}`}, errLine: 2, kind: failure.Protocol, has: `field "/usage/input_tokens" is a string, not a number`},
		{name: "content neither array nor string", lines: []string{initLine, `{"type":"assistant","message":{"content":5}}`}, errLine: 2, kind: failure.Protocol,
			has: `field "/message/content" is a number, not an array`},
		{name: "a block that is not an object", lines: []string{initLine, `{"type":"assistant","message":{"content":[null]}}`}, errLine: 2, kind: failure.Protocol,
			has: `field "/message/content/0" is null, not an object`},
		{name: "a line after the result", lines: []string{initLine, resultLine, textLine("more")}, errLine: 3, kind: failure.Protocol, has: "output after a result event"},
		{name: "duplicate names: the last wins", lines: []string{initLine, `{"type":"result","is_error":true,"is_error":false,"result":"ok"}`},
			types: []event.Type{event.TypeInit, event.TypeText, event.TypeResult}},
		{name: "a type given twice: the first names the event", lines: []string{initLine, `{"type":"stream_event","type":"result","is_error":false,"result":"ok"}`, resultLine},
			types: []event.Type{event.TypeInit, event.TypeUnknown, event.TypeText, event.TypeResult}},
		{name: "duplicate names in a block and in raw members", lines: []string{initLine,
			`{"type":"assistant","message":{"content":[{"type":"text","text":"a","text":"b"},{"type":"tool_use","id":"t8","name":"Read","input":{"a":1,"a":2}}]}}`,
			`{"type":"assistant","usage":5,"message":{"content":[{"type":"text","text":"a","text":"b"},{"type":"tool_use","id":"t9","name":"Read","input":{"a":1,"a":2}}]}}`},
			types: []event.Type{event.TypeInit, event.TypeText, event.TypeToolStarted, event.TypeText, event.TypeToolStarted}},
		{name: "invalid UTF-8 reads as U+FFFD", lines: []string{initLine, "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}}", resultLine},
			types: []event.Type{event.TypeInit, event.TypeText, event.TypeResult}},
		{name: "a second init", lines: []string{initLine, initLine, resultLine},
			types: []event.Type{event.TypeInit, event.TypeWarning, event.TypeUnknown, event.TypeText, event.TypeResult}},
		{name: "the prompt's echo says nothing", lines: []string{initLine, echoLine, resultLine},
			types: []event.Type{event.TypeInit, event.TypeText, event.TypeResult}},
		{name: "stream_event is unknown", lines: []string{initLine, `{"type":"stream_event","event":{"type":"content_block_delta"}}`, resultLine},
			types: []event.Type{event.TypeInit, event.TypeUnknown, event.TypeText, event.TypeResult}},
		{name: "blank lines and CRLF", lines: []string{"", initLine + "\r\n", "  ", resultLine + "\n"},
			types: []event.Type{event.TypeInit, event.TypeText, event.TypeResult}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newTestDecoder(t, Turn{})
			r := feedLines(d, tt.lines)
			if tt.errLine == 0 {
				require.NoError(t, r.err)
				assert.Equal(t, tt.types, types(r.events))
				return
			}
			require.Error(t, r.err)
			assert.Equal(t, tt.errLine, r.errLine)
			assert.Equal(t, tt.kind, failure.KindOf(r.err))
			assert.Contains(t, r.err.Error(), tt.has)
			_, again := d.Feed([]byte(resultLine))
			assert.Equal(t, r.err, again, "sticky")
			assert.Equal(t, r.err, d.End(0, ""))
		})
	}
}

func TestDecoderText(t *testing.T) {
	d := newTestDecoder(t, Turn{})
	r := feedLines(d, []string{initLine, textLine("ha"), textLine("ha"), resultLine})
	require.NoError(t, r.err)
	var said strings.Builder
	for _, e := range r.events {
		if e.Type == event.TypeText {
			said.WriteString(e.Text)
		}
	}
	assert.Equal(t, "haha", said.String(), "messages are whole: identical ones are both said; the result's copy is not")
}

func TestDecoderPolicy(t *testing.T) {
	tests := []struct {
		name  string
		req   Turn
		tool  string
		allow bool
	}{
		{name: "plan reads", req: Turn{}, tool: "Read", allow: true},
		{name: "plan presents its plan", req: Turn{}, tool: "ExitPlanMode", allow: true},
		{name: "plan never edits", req: Turn{}, tool: "Edit"},
		{name: "ask greps", req: Turn{Mode: turn.ModeAsk}, tool: "Grep", allow: true},
		{name: "ask never runs commands", req: Turn{Mode: turn.ModeAsk}, tool: "Bash"},
		{name: "ask has no ExitPlanMode", req: Turn{Mode: turn.ModeAsk}, tool: "ExitPlanMode"},
		{name: "write runs commands", req: Turn{Mode: turn.ModeWrite}, tool: "Bash", allow: true},
		{name: "write writes", req: Turn{Mode: turn.ModeWrite}, tool: "Write", allow: true},
		{name: "write has no web", req: Turn{Mode: turn.ModeWrite}, tool: "WebFetch"},
		{name: "a named tool", req: Turn{Tools: []string{"WebFetch"}}, tool: "WebFetch", allow: true},
		{name: "names are exact", req: Turn{}, tool: "read"},
		{name: "no name", req: Turn{}, tool: ""},
		{name: "MCP needs naming", req: Turn{Mode: turn.ModeWrite}, tool: "mcp__github__search"},
		{name: "an MCP tool named", req: Turn{Tools: []string{"mcp__github__search"}}, tool: "mcp__github__search", allow: true},
		{name: "another tool of that server", req: Turn{Tools: []string{"mcp__github__search"}}, tool: "mcp__github__delete"},
		{name: "a whole server", req: Turn{Tools: []string{"mcp__github"}}, tool: "mcp__github__delete", allow: true},
		{name: "not another server with the same start", req: Turn{Tools: []string{"mcp__git"}}, tool: "mcp__github__delete"},
		{name: "a tool name is not a server", req: Turn{Tools: []string{"mcp__github__search"}}, tool: "mcp__github__search__x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newTestDecoder(t, tt.req)
			r := feedLines(d, []string{initLine, toolUse("toolu_1", tt.tool)})
			if tt.allow {
				require.NoError(t, r.err)
				assert.Equal(t, []event.Type{event.TypeInit, event.TypeToolStarted}, types(r.events))
				return
			}
			assert.Equal(t, failure.Policy, failure.KindOf(r.err), "%v", r.err)
			assert.Equal(t, 2, r.errLine)
		})
	}
}

func TestDecoderSubagentToolsAreChecked(t *testing.T) {
	d := newTestDecoder(t, Turn{Tools: []string{"Task"}})
	sub := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Bash","input":{}}]},"parent_tool_use_id":"t1","session_id":"s1"}`
	r := feedLines(d, []string{initLine, toolUse("t1", "Task"), sub})
	assert.Equal(t, failure.Policy, failure.KindOf(r.err))
	assert.Equal(t, 3, r.errLine)
}

func TestDecoderEnd(t *testing.T) {
	tests := []struct {
		name   string
		lines  []string
		exit   int
		stderr string
		kind   failure.Kind
	}{
		{name: "a good turn", lines: []string{initLine, resultLine}},
		{name: "a good result whatever the exit code", lines: []string{initLine, resultLine}, exit: 1},
		{name: "exit 0 with nothing", exit: 0, kind: failure.Protocol},
		{name: "exit 0 without a result", lines: []string{initLine}, kind: failure.Protocol},
		{name: "a non-zero exit before any event", exit: 1, kind: failure.Process},
		{name: "a non-zero exit without a result", lines: []string{initLine}, exit: 1, kind: failure.Process},
		{name: "stderr names the cause", exit: 1, stderr: "error: unknown option '--tools'", kind: failure.Setup},
		{name: "stderr names a network failure", lines: []string{initLine}, exit: 1, stderr: "Unable to connect to API (ENOTFOUND)", kind: failure.Network},
		{name: "an error result", lines: []string{initLine, `{"type":"result","subtype":"success","is_error":true,"result":"Credit balance is too low"}`}, exit: 1, kind: failure.Quota},
		{name: "an error subtype without is_error", lines: []string{initLine, `{"type":"result","subtype":"error_during_execution"}`}, exit: 1, kind: failure.Unclassified},
		{name: "the budget", lines: []string{initLine, `{"type":"result","subtype":"error_max_budget_usd","is_error":true}`}, exit: 1, kind: failure.Quota},
		{name: "the assistant's error category when the text says nothing known", lines: []string{initLine,
			`{"type":"assistant","message":{"content":[{"type":"text","text":"boom"}]},"error":"billing_error"}`,
			`{"type":"result","subtype":"success","is_error":true,"result":"boom"}`}, exit: 1, kind: failure.Quota},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newTestDecoder(t, Turn{})
			r := feedLines(d, tt.lines)
			require.NoError(t, r.err)
			err := d.End(tt.exit, tt.stderr)
			if tt.kind == "" {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
			assert.LessOrEqual(t, len(err.Error()), 800)
		})
	}
}

func TestDecoderBoundsTheErrorMessage(t *testing.T) {
	d := newTestDecoder(t, Turn{})
	long := strings.Repeat("x", 5000)
	r := feedLines(d, []string{initLine, `{"type":"result","subtype":"success","is_error":true,"result":"` + long + `"}`})
	require.NoError(t, r.err)
	err := d.End(1, strings.Repeat("y", 5000))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 700)
}

func TestDecoderEventsOwnTheirValues(t *testing.T) {
	d := newTestDecoder(t, Turn{Mode: turn.ModeWrite})
	line := []byte(toolUse("toolu_1", "Bash"))
	evs, err := d.Feed([]byte(initLine))
	require.NoError(t, err)
	require.Len(t, evs, 1)
	evs, err = d.Feed(line)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	for i := range line {
		line[i] = 'z'
	}
	assert.Equal(t, `{"x":1}`, string(evs[0].Tool.Args))
	assert.Equal(t, "toolu_1", evs[0].Tool.CallID)
}
