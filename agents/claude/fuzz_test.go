package claude

import (
	"bytes"
	"encoding/json/v2"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/cliversion"
	"github.com/cursorkit/cursorkit/turn"
)

// Compact lines in the recorded shapes (testdata).
const (
	notLoggedIn       = `{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Not logged in · Please run /login"}]},"session_id":"s1","error":"authentication_failed"}`
	notLoggedInResult = `{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","usage":{"input_tokens":0}}`
	thinkingAndTool   = `{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"t"},{"type":"redacted_thinking","data":"x"},{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}`
	toolResult        = `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x","is_error":false}]}}`
)

// edgeLines are lines on the border of what the decoder reads: members of
// other kinds, used or not by the line's type, nulls, repeated names,
// numbers out of range, escapes, invalid UTF-8, lines that are not
// objects.
var edgeLines = []string{
	`{"type":"assistant","type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1"}]}}`,
	`{"type":"assistant","\u0074ype":"user","message":{"content":"SECRET PROMPT"}}`,
	`{"Type":"assistant","message":{"content":[{"type":"text","text":"a"}]}}`,
	`{"type":"assistant","message":{"content":[null]}}`,
	`{"type":"assistant","message":{"content":[{"type":"text","text":"a"},1]}}`,
	`{"type":"assistant","message":{"content":{}}}`,
	`{"type":"assistant","message":null,"error":null}`,
	`{"type":"assistant","message":[]}`,
	`{"type":"assistant","error":5,"message":{"content":[{"type":"text","text":"a"}]}}`,
	`{"type":"assistant","error":"rate_limit","message":{"content":[{"type":"text","text":" busy "},{"type":"thinking","thinking":"t"},{"type":"text","text":"x"}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"redacted_thinking","text":5}]}}`,
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
	`{"type":"system","subtype":"api_retry","attempt":1e308,"max_retries":-1,"retry_delay_ms":1e400,"error_status":null,"error":"x"}`,
	`{"type":"system","subtype":"hook_response","message":5,"error":{}}`,
	`{"type":"system","subtype":"init","session_id":"s2","model":null}`,
	`{"type":"x","subtype":5}`,
	`{"type":"result","subtype":5}`,
	`{"type":"result","errors":["a",null,"","b"],"usage":null,"duration_ms":1e30,"duration_api_ms":-1e30}`,
	`{"type":"result","subtype":"error_during_execution","errors":[],"result":null}`,
	`{"type":"result","errors":{"a":1}}`,
	`{"type":"result","errors":["a",1],"usage":{"input_tokens":1.5}}`,
	`{"type":"result","usage":{"input_tokens":-1e300,"output_tokens":1.5,"cache_read_input_tokens":null}}`,
	`{"type":"result","usage":{"input_tokens":1,"input_tokens":2}}`,
	`{"type":"result","usage":[1]}`,
	` {"type":"result","is_error":null} `,
	`{"type":"result"} x`,
	`{"type":"result","result":"\ud800\udc00\udc00"}`,
	"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xff\\ud800\"}]}}",
	"banner", `null`, `[]`, `"x"`, `{}`, `{"type":null}`, `{"type":1}`,
}

// FuzzDecoder feeds any lines: Feed never panics; its errors are
// protocol or policy failures, and after one Feed returns it again, with
// no events, for every line; Done reports exactly whether a result event
// was returned; every event marshals with event.NewEncoder; End returns
// Feed's failure, or a failure of a valid kind.
func FuzzDecoder(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new input for up to a
	// minute, which the recorded files' 3 KB lines would spend in full.
	f.Add([]byte(strings.Join([]string{initLine, textLine("hi"), resultLine}, "\n")), byte(0))
	f.Add([]byte(strings.Join([]string{initLine, notLoggedIn, notLoggedInResult}, "\n")), byte(1))
	f.Add([]byte(strings.Join([]string{initLine, thinkingAndTool, toolResult, resultLine}, "\n")), byte(3))
	f.Add([]byte(strings.Join(append([]string{initLine, echoLine, textLine("ha"), toolUse("t1", "Bash"), toolUse("t2", "mcp__github__x")},
		edgeLines...), "\n")), byte(7))
	for _, line := range edgeLines {
		f.Add([]byte(initLine+"\n"+line+"\n"+resultLine), byte(7))
	}
	f.Add([]byte(strings.Join([]string{bridgeInit, bridgeCall, bridgeResult, toolUse("t3", "mcp__cursorkita092e71e__fn_x"), resultLine}, "\n")), byte(10))
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		modes := []turn.Mode{"", turn.ModePlan, turn.ModeAsk, turn.ModeWrite}
		req := Turn{Prompt: "SECRET PROMPT", Mode: modes[int(mode)%len(modes)]}
		if mode&4 != 0 {
			req.Tools = []string{"mcp__github", "Task"}
		}
		if mode&8 != 0 {
			req.Bridge = testBridge()
		}
		d := newTestDecoder(t, req)
		var out bytes.Buffer
		enc := event.NewEncoder(&out)
		var failed error
		result := false
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			evs, err := d.Feed(line)
			if failed != nil {
				require.Equal(t, failed, err, "sticky")
				require.Empty(t, evs)
				continue
			}
			for _, e := range evs {
				require.NoError(t, json.MarshalEncode(enc, e))
				result = result || e.Type == event.TypeResult
			}
			require.Equal(t, result, d.Done())
			if err != nil {
				var fe *failure.Error
				require.True(t, errors.As(err, &fe))
				require.Contains(t, []failure.Kind{failure.Protocol, failure.Policy}, fe.Kind, "%v", err)
				require.Empty(t, evs)
				failed = err
			}
		}
		err := d.End(int(mode)%3, "")
		if failed != nil {
			require.Equal(t, failed, err)
		}
		if err != nil {
			var fe *failure.Error
			require.True(t, errors.As(err, &fe))
			require.True(t, fe.Kind.Valid())
		}
	})
}

// FuzzArgs: Args and NewDecoder agree, and what Args accepts never puts a
// value where an option parser could take it for an option.
func FuzzArgs(f *testing.F) {
	f.Add("sonnet", "43367082-969f-4ff0-ae35-0bfcf4c259a1", "WebFetch,mcp__github", byte(3))
	f.Add("-x", "", "Bash(git *)", byte(0))
	f.Add("", "a b", "", byte(1))
	f.Fuzz(func(t *testing.T, model, resume, tools string, mode byte) {
		modes := []turn.Mode{"", turn.ModePlan, turn.ModeAsk, turn.ModeWrite, "other"}
		req := Turn{Model: model, Resume: resume, Mode: modes[int(mode)%len(modes)]}
		if tools != "" {
			req.Tools = strings.Split(tools, ",")
		}
		args, err := Args(req)
		_, derr := NewDecoder(req)
		if err != nil {
			require.Equal(t, failure.Input, failure.KindOf(err))
			return
		}
		if derr != nil {
			require.Equal(t, failure.Input, failure.KindOf(derr))
		}
		for i, a := range args {
			if i > 0 && strings.HasPrefix(args[i-1], "--") && args[i-1] != "--verbose" {
				require.NotEmpty(t, a)
				require.NotEqual(t, byte('-'), a[0], "%q", args)
			}
		}
	})
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"2.1.197 (Claude Code)\n", "1.0.0-beta.1", "", "x\n2.0.0", "1.2.3 extra"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			require.Equal(t, failure.Protocol, failure.KindOf(err))
			require.Less(t, len(err.Error()), 200)
			return
		}
		require.True(t, cliversion.Valid(v))
		require.Contains(t, s, v)
	})
}

func FuzzClassifyMessage(f *testing.F) {
	for _, s := range []string{"Not logged in · Please run /login", "API Error: Repeated 529 Overloaded errors", "\x1b[31m", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.True(t, ClassifyMessage(s).Valid())
	})
}
