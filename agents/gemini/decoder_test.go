package gemini_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// feed runs lines through a new Decoder for turn and returns the events
// and the first error.
func feed(t *testing.T, req gemini.Turn, lines []string) (turn.StderrDecoder, []event.Event, error) {
	t.Helper()
	d, err := gemini.NewDecoder(req)
	require.NoError(t, err)
	var evs []event.Event
	for _, l := range lines {
		buf := []byte(l)
		got, err := d.Feed(buf)
		for i := range buf { // the caller reuses its buffer: events own their values
			buf[i] = 'X'
		}
		evs = append(evs, got...)
		if err != nil {
			return d, evs, err
		}
	}
	return d, evs, nil
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func types(evs []event.Event) []event.Type {
	var ts []event.Type
	for _, e := range evs {
		ts = append(ts, e.Type)
	}
	return ts
}

func text(evs []event.Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == event.TypeText {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func ptr(n int64) *int64 { return &n }

func TestDecoderGoodTurn(t *testing.T) {
	d, evs, err := feed(t, gemini.Turn{Mode: turn.ModeAsk}, readLines(t, "turn-tools.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, []event.Type{event.TypeInit, event.TypeText, event.TypeText, event.TypeToolStarted, event.TypeToolCompleted,
		event.TypeToolStarted, event.TypeToolCompleted, event.TypeText, event.TypeResult}, types(evs))
	assert.Equal(t, &event.Init{SessionID: "5f0c7b7e-2a51-4f3e-9d0e-7f1f4b2d9a10", Model: "gemini-2.5-pro"}, evs[0].Init)
	assert.Equal(t, "I'll read the README.The README says hello.", text(evs))
	started, done := evs[3].Tool, evs[4].Tool
	assert.Equal(t, "read_file", started.Name)
	assert.Equal(t, "read_file-1764583201200-0", started.CallID)
	assert.JSONEq(t, `{"file_path":"README.md"}`, string(started.Args))
	assert.Equal(t, "read_file", done.Name, "the completed call takes its started call's name")
	assert.JSONEq(t, `{"file_path":"README.md"}`, string(done.Args))
	assert.Equal(t, "success", done.Status)
	assert.Equal(t, `""`, string(done.Result))
	failed := evs[6].Tool
	assert.Equal(t, "error", failed.Status)
	assert.JSONEq(t, `{"type":"TOOL_EXECUTION_ERROR","message":"no matches"}`, string(failed.Result))
	r := evs[8].Result
	assert.Equal(t, "success", r.Subtype)
	assert.False(t, r.IsError)
	assert.Equal(t, int64(2100), r.DurationMs)
	assert.Equal(t, "5f0c7b7e-2a51-4f3e-9d0e-7f1f4b2d9a10", r.SessionID)
	assert.Equal(t, event.Usage{Reported: true, InputTokens: ptr(1000), OutputTokens: ptr(30), CacheReadTokens: ptr(200)}, r.Usage,
		"input excludes the cached tokens input_tokens includes")
	assert.True(t, d.Done())
	require.NoError(t, d.End(0, ""))
	for _, e := range evs {
		var b bytes.Buffer
		require.NoError(t, e.MarshalJSONTo(event.NewEncoder(&b)))
		assert.NotContains(t, b.String(), "SECRET", "the prompt's echo is never an event")
	}
}

func TestDecoderUsageWithoutInput(t *testing.T) {
	_, evs, err := feed(t, gemini.Turn{}, []string{
		`{"type":"init","session_id":"s","model":"m"}`,
		`{"type":"result","status":"success","stats":{"input_tokens":50,"cached":20,"output_tokens":null}}`,
	})
	require.NoError(t, err)
	assert.Equal(t, event.Usage{Reported: true, InputTokens: ptr(30), CacheReadTokens: ptr(20)}, evs[1].Result.Usage)
	_, evs, err = feed(t, gemini.Turn{}, []string{`{"type":"init"}`, `{"type":"result","status":"success"}`})
	require.NoError(t, err)
	assert.Equal(t, event.Usage{}, evs[1].Result.Usage, "no stats: not reported")
}

func TestDecoderModes(t *testing.T) {
	tests := []struct {
		file   string
		req    gemini.Turn
		policy bool
	}{
		{"turn-tools.jsonl", gemini.Turn{Mode: turn.ModePlan}, false},
		{"turn-shell.jsonl", gemini.Turn{Mode: turn.ModePlan}, true},
		{"turn-shell.jsonl", gemini.Turn{Mode: turn.ModeAsk}, true},
		{"turn-shell.jsonl", gemini.Turn{Mode: turn.ModeWrite}, false},
		{"turn-shell.jsonl", gemini.Turn{Mode: turn.ModeAsk, Tools: []string{"run_shell_command"}}, false},
		{"turn-mcp.jsonl", gemini.Turn{Mode: turn.ModeWrite}, true},
		{"turn-mcp.jsonl", gemini.Turn{Mode: turn.ModeAsk, Tools: []string{"mcp"}}, false},
		{"turn-mcp.jsonl", gemini.Turn{Mode: turn.ModeAsk, Tools: []string{"mcp_github_search_issues"}}, false},
		{"turn-mcp.jsonl", gemini.Turn{Mode: turn.ModeAsk, Tools: []string{"mcp_github_other"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+string(tt.req.Mode)+"/"+strings.Join(tt.req.Tools, ","), func(t *testing.T) {
			d, evs, err := feed(t, tt.req, readLines(t, tt.file))
			if !tt.policy {
				require.NoError(t, err)
				require.NoError(t, d.End(0, ""))
				return
			}
			require.Error(t, err)
			assert.Equal(t, failure.Policy, failure.KindOf(err))
			assert.Contains(t, err.Error(), "line 3, call id")
			assert.NotEqual(t, event.TypeToolStarted, evs[len(evs)-1].Type, "the refused call is not reported as started")
			again, err2 := d.Feed([]byte(`{"type":"result","status":"success"}`))
			assert.Nil(t, again)
			assert.Equal(t, err, err2, "sticky")
			assert.Equal(t, err, d.End(0, ""))
		})
	}
}

func TestDecoderPolicyEdges(t *testing.T) {
	init := `{"type":"init","session_id":"s","model":"m"}`
	for _, tt := range []struct {
		name string
		line string
	}{
		{"plan-mode exit goes yolo", `{"type":"tool_use","tool_name":"exit_plan_mode","tool_id":"1","parameters":{}}`},
		{"write_file in plan", `{"type":"tool_use","tool_name":"write_file","tool_id":"1","parameters":{"file_path":"a"}}`},
		{"no name", `{"type":"tool_use","tool_id":"1","parameters":{}}`},
		{"result without use", `{"type":"tool_result","tool_id":"9","status":"success","output":"x"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := feed(t, gemini.Turn{Mode: turn.ModePlan}, []string{init, tt.line})
			require.Error(t, err)
			assert.Equal(t, failure.Policy, failure.KindOf(err))
		})
	}
}

func TestDecoderResults(t *testing.T) {
	tests := []struct {
		file string
		kind failure.Kind
		msg  string
	}{
		{"turn-error-result.jsonl", failure.Auth, "API key not valid"},
		{"turn-quota.jsonl", failure.Quota, "daily quota"},
		{"turn-invalid-stream.jsonl", failure.Unclassified, "Invalid stream"},
		{"turn-resume-missing.jsonl", failure.Input, "Error resuming session"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			d, evs, err := feed(t, gemini.Turn{}, readLines(t, tt.file))
			require.NoError(t, err, "an error result is not a stream failure")
			require.True(t, d.Done())
			last := evs[len(evs)-1]
			require.Equal(t, event.TypeResult, last.Type)
			assert.True(t, last.Result.IsError)
			for _, code := range []int{0, 1, 41} {
				end := d.End(code, "")
				require.Error(t, end)
				assert.Equal(t, tt.kind, failure.KindOf(end))
				assert.Contains(t, end.Error(), tt.msg)
				assert.NotContains(t, end.Error(), "SECRET")
			}
		})
	}
}

func TestDecoderWarnings(t *testing.T) {
	_, evs, err := feed(t, gemini.Turn{}, readLines(t, "turn-invalid-stream.jsonl"))
	require.NoError(t, err)
	require.Equal(t, []event.Type{event.TypeInit, event.TypeWarning, event.TypeWarning, event.TypeResult}, types(evs))
	assert.Equal(t, event.Warning{Code: gemini.WarnGemini, Message: "Loop detected, stopping execution"}, *evs[1].Warning)
	assert.Equal(t, gemini.WarnGeminiError, evs[2].Warning.Code)

	// An error event fails the turn even when the result says success.
	d, _, err := feed(t, gemini.Turn{}, []string{`{"type":"init"}`,
		`{"type":"error","severity":"error","message":"Maximum session turns exceeded"}`,
		`{"type":"result","status":"success"}`})
	require.NoError(t, err)
	end := d.End(0, "")
	require.Error(t, end)
	assert.Contains(t, end.Error(), "Maximum session turns exceeded")
}

func TestDecoderRecordedNoNetwork(t *testing.T) {
	// Recorded: init, the prompt's echo, then gemini retried until stopped.
	d, evs, err := feed(t, gemini.Turn{}, readLines(t, "recorded-key-nonetwork.jsonl"))
	require.NoError(t, err)
	require.Equal(t, []event.Type{event.TypeInit}, types(evs), "the user echo yields nothing")
	assert.Equal(t, "auto", evs[0].Init.Model)
	assert.False(t, d.Done())
	end := d.End(1, "Attempt 4 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request")
	assert.Equal(t, failure.Network, failure.KindOf(end))
	assert.Contains(t, end.Error(), "without a result event")
}

func TestDecoderText(t *testing.T) {
	init := `{"type":"init","session_id":"s"}`
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"deltas", []string{`{"type":"message","role":"assistant","content":"ha","delta":true}`,
			`{"type":"message","role":"assistant","content":"ha","delta":true}`}, "haha"},
		{"final copy", []string{`{"type":"message","role":"assistant","content":"Hel","delta":true}`,
			`{"type":"message","role":"assistant","content":"lo","delta":true}`,
			`{"type":"message","role":"assistant","content":"Hello"}`}, "Hello"},
		{"final extension", []string{`{"type":"message","role":"assistant","content":"Hel","delta":true}`,
			`{"type":"message","role":"assistant","content":"Hello!"}`}, "Hello!"},
		{"whole messages are new", []string{`{"type":"message","role":"assistant","content":"Hi"}`,
			`{"type":"message","role":"assistant","content":"Hi"}`}, "HiHi"},
		{"after a tool call text is new", []string{`{"type":"message","role":"assistant","content":"Hi","delta":true}`,
			`{"type":"tool_use","tool_name":"glob","tool_id":"1","parameters":{"pattern":"*"}}`,
			`{"type":"message","role":"assistant","content":"Hi"}`}, "HiHi"},
		{"other roles pass as unknown", []string{`{"type":"message","role":"system","content":"x"}`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, evs, err := feed(t, gemini.Turn{}, append([]string{init}, tt.lines...))
			require.NoError(t, err)
			assert.Equal(t, tt.want, text(evs))
		})
	}
}

func TestDecoderProtocol(t *testing.T) {
	init := `{"type":"init","session_id":"s","model":"m"}`
	result := `{"type":"result","status":"success"}`
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"not JSON after init", []string{init, `{"type":`}, "line 2, byte offset 8"},
		{"array after init", []string{init, `[1]`}, "line 2, byte offset 0: not a JSON object"},
		{"first event not init", []string{`{"type":"message","role":"assistant","content":"x"}`}, "not an init event"},
		{"line after result", []string{init, result, `{"type":"init"}`}, "line 3, byte offset 0: output after a result event"},
		{"session id wrong kind", []string{`{"type":"init","session_id":5}`}, `line 1, byte offset 28: "init" event: field "/session_id" is a number, not a string`},
		{"delta wrong kind", []string{init, `{"type":"message","role":"assistant","content":"x","delta":"yes"}`}, `byte offset 59: "message" event: field "/delta" is a string, not a boolean`},
		{"parameters wrong kind", []string{init, `{"type":"tool_use","tool_name":"glob","tool_id":"1","parameters":[1]}`}, `byte offset 65: "tool_use" event: field "/parameters" is an array, not an object`},
		{"stats wrong kind", []string{init, `{"type":"result","status":"success","stats":{"input_tokens":1.5}}`}, `byte offset 60: "result" event: field "/stats/input_tokens" is a number, not an integer in range`},
		{"error wrong kind", []string{init, `{"type":"result","status":"error","error":"x"}`}, `byte offset 42: "result" event: field "/error" is a string, not an object`},
		{"timestamp wrong kind", []string{init, `{"type":"error","timestamp":1,"severity":"warning","message":"x"}`}, `byte offset 28: "error" event: field "/timestamp" is a number, not a string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := feed(t, gemini.Turn{Mode: turn.ModeWrite}, tt.lines)
			require.Error(t, err)
			assert.Equal(t, failure.Protocol, failure.KindOf(err))
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestDecoderLenientJSON(t *testing.T) {
	_, evs, err := feed(t, gemini.Turn{}, []string{
		"banner line",
		`{"type":"init","session_id":"a","session_id":"b","model":"m"}`,
		"{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"a\xffb\\ud800\",\"delta\":true}",
		`{"type":"mystery","x":1}`,
		`{"type":"init","session_id":"c"}`,
		``,
		`{"type":"mystery","session_id":5,"parameters":[1],"stats":"x","error":true}`,
		`{"type":"message","role":"assistant","content":"c","delta":true,"stats":"x","tool_name":3,"parameters":[]}`,
		`{"type":"result","status":"success","unused":[1,{"a":null}]}`,
	})
	require.NoError(t, err)
	require.Equal(t, []event.Type{event.TypeWarning, event.TypeInit, event.TypeText, event.TypeUnknown, event.TypeWarning,
		event.TypeUnknown, event.TypeUnknown, event.TypeText, event.TypeResult}, types(evs),
		"an unknown type passes whole, and a known type's members of other types may hold anything")
	assert.Equal(t, event.WarnBanner, evs[0].Warning.Code)
	assert.Equal(t, "b", evs[1].Init.SessionID, "the last of a member given twice")
	assert.Equal(t, "a\uFFFDb\uFFFD", evs[2].Text)
	assert.Equal(t, "mystery", evs[3].Unknown.Type)
	assert.JSONEq(t, `{"type":"mystery","x":1}`, string(evs[3].Unknown.Raw))
	assert.Equal(t, event.WarnDuplicateInit, evs[4].Warning.Code)
	assert.JSONEq(t, `{"type":"mystery","session_id":5,"parameters":[1],"stats":"x","error":true}`, string(evs[6].Unknown.Raw))
	assert.Equal(t, "c", evs[7].Text)
}

func TestDecoderEnd(t *testing.T) {
	init := `{"type":"init","session_id":"s","model":"m"}`
	noauth, err := os.ReadFile(filepath.Join("testdata", "recorded-noauth.stderr"))
	require.NoError(t, err)
	tests := []struct {
		name   string
		lines  []string
		code   int
		stderr string
		want   failure.Kind
		msg    string
	}{
		{"exit 0 nothing", nil, 0, "", failure.Protocol, "without an init"},
		{"exit 0 no result", []string{init}, 0, "", failure.Protocol, "without a result"},
		{"success without init", []string{`{"type":"result","status":"success"}`}, 0, "", failure.Protocol, "without an init"},
		{"recorded no auth: 41", nil, 41, string(noauth), failure.Auth, "Please set an Auth method"},
		{"42 input", nil, 42, "Error resuming session: No previous sessions found for this project.", failure.Input, "code 42"},
		{"44 sandbox", nil, 44, "", failure.Sandbox, "sandbox"},
		{"52 config", []string{init}, 52, "", failure.Setup, "configuration"},
		{"53 turns", []string{init}, 53, "", failure.Unclassified, "turn limit"},
		{"55 untrusted", nil, 55, "Gemini CLI is not running in a trusted directory.", failure.Setup, "not trusted"},
		{"130", []string{init}, 130, "", failure.Process, "cancelled"},
		{"1 classified", []string{init}, 1, "getaddrinfo ENOTFOUND x", failure.Network, "ENOTFOUND"},
		{"1 unknown", []string{init}, 1, "boom", failure.Process, "code 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _, err := feed(t, gemini.Turn{}, tt.lines)
			require.NoError(t, err)
			end := d.End(tt.code, tt.stderr)
			require.Error(t, end)
			assert.Equal(t, tt.want, failure.KindOf(end))
			assert.Contains(t, end.Error(), tt.msg)
			assert.Less(t, len(end.Error()), 800)
		})
	}
}
