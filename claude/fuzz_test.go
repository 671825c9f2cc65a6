package claude

import (
	"bytes"
	stdjson "encoding/json"
	"encoding/json/v2"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
)

// Compact lines in the recorded shapes (testdata).
const (
	notLoggedIn       = `{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Not logged in · Please run /login"}]},"session_id":"s1","error":"authentication_failed"}`
	notLoggedInResult = `{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","usage":{"input_tokens":0}}`
	thinkingAndTool   = `{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"t"},{"type":"redacted_thinking","data":"x"},{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}`
	toolResult        = `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x","is_error":false}]}}`
)

// FuzzDecoder feeds any lines: Feed never panics, its errors are
// protocol or policy failures, End's are failures of a kind, every event
// marshals with event.NewEncoder, and the prompt (in the user events of
// the seeds) never appears in an error.
func FuzzDecoder(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new input for up to a
	// minute, which the recorded files' 3 KB lines would spend in full.
	f.Add([]byte(strings.Join([]string{initLine, textLine("hi"), resultLine}, "\n")), byte(0))
	f.Add([]byte(strings.Join([]string{initLine, notLoggedIn, notLoggedInResult}, "\n")), byte(1))
	f.Add([]byte(strings.Join([]string{initLine, thinkingAndTool, toolResult, resultLine}, "\n")), byte(3))
	seeds := []string{initLine, echoLine, resultLine, textLine("ha"), toolUse("t1", "Bash"), toolUse("t2", "mcp__github__x"),
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"SECRET PROMPT","is_error":true}]}}`,
		`{"type":"system","subtype":"api_retry","attempt":1e308,"max_retries":-1,"retry_delay_ms":1e400,"error_status":null,"error":"x"}`,
		`{"type":"result","errors":["a",1],"usage":{"input_tokens":1.5}}`, `{"\u0074ype":"user","message":{"content":"SECRET PROMPT"}} x`,
		"banner", `[]`, `null`, "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xff\\ud800\"}]}}"}
	f.Add([]byte(strings.Join(seeds, "\n")), byte(2))
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		modes := []agent.Mode{"", agent.ModePlan, agent.ModeAsk, agent.ModeWrite}
		turn := Turn{Prompt: "SECRET PROMPT", Mode: modes[int(mode)%len(modes)]}
		if mode&4 != 0 {
			turn.Tools = []string{"mcp__github", "Task"}
		}
		d := newTestDecoder(t, turn)
		var out bytes.Buffer
		enc := event.NewEncoder(&out)
		var failed error
		// The prompt may appear only in user events (its echo): an agent's
		// own text may say anything, and an error may quote it.
		echoOnly := true
		for _, line := range bytes.Split(data, []byte("\n")) {
			var v struct{ Type string }
			if bytes.Contains(line, []byte("SECRET PROMPT")) && (stdjson.Unmarshal(line, &v) != nil || v.Type != "user") {
				echoOnly = false
			}
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			evs, err := d.Feed(line)
			for _, e := range evs {
				require.NoError(t, json.MarshalEncode(enc, e))
			}
			if err != nil {
				var fe *failure.Error
				require.True(t, errors.As(err, &fe))
				require.Contains(t, []failure.Kind{failure.Protocol, failure.Policy}, fe.Kind, "%v", err)
				if echoOnly {
					require.NotContains(t, err.Error(), "SECRET PROMPT")
				}
				require.Empty(t, evs)
				failed = err
				break
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
			if echoOnly {
				require.NotContains(t, err.Error(), "SECRET PROMPT")
			}
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
		modes := []agent.Mode{"", agent.ModePlan, agent.ModeAsk, agent.ModeWrite, "other"}
		turn := Turn{Model: model, Resume: resume, Mode: modes[int(mode)%len(modes)]}
		if tools != "" {
			turn.Tools = strings.Split(tools, ",")
		}
		args, err := Args(turn)
		_, derr := NewDecoder(turn)
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
		require.True(t, isVersion(v))
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
