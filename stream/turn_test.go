package stream

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

const (
	userLine        = `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"SECRET PROMPT"}]},"session_id":"abc"}`
	resultLine      = `{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"duration_api_ms":1200,"result":"Hello","session_id":"abc","request_id":"r1","usage":{"inputTokens":10,"outputTokens":20,"cacheReadTokens":0,"cacheWriteTokens":0}}`
	thinkingDelta   = `{"type":"thinking","subtype":"delta","text":"pondering","session_id":"abc","timestamp_ms":1}`
	thinkingDone    = `{"type":"thinking","subtype":"completed","session_id":"abc","timestamp_ms":2}`
	shellStarted    = `{"type":"tool_call","subtype":"started","call_id":"s1","tool_call":{"shellToolCall":{"args":{"command":"rm -rf /"}}},"session_id":"abc"}`
	mcpStarted      = `{"type":"tool_call","subtype":"started","call_id":"m1","tool_call":{"mcpToolCall":{"args":{"name":"x"}}},"session_id":"abc"}`
	getMcpStarted   = `{"type":"tool_call","subtype":"started","call_id":"g1","tool_call":{"getMcpToolsToolCall":{"args":{}}},"session_id":"abc"}`
	unnamedToolCall = `{"type":"tool_call","subtype":"started","call_id":"u1","tool_call":{"function":{"name":"read"}},"session_id":"abc"}`
)

func errorResult(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "result", "subtype": "error", "is_error": true, "result": text, "session_id": "abc"})
	return string(b)
}

type feedResult struct {
	outputs []Output
	err     error // the first Feed error
	errLine int   // 1-based index of the line that failed
}

func feedAll(t *testing.T, turn *Turn, lines []string) feedResult {
	t.Helper()
	var r feedResult
	for i, l := range lines {
		outs, err := turn.Feed([]byte(l))
		r.outputs = append(r.outputs, outs...)
		if err != nil {
			r.err, r.errLine = err, i+1
			return r
		}
	}
	return r
}

func outputTypes(outs []Output) []OutputType {
	var types []OutputType
	for _, o := range outs {
		types = append(types, o.Type)
	}
	return types
}

func readOnly(t *testing.T, extra ...string) Policy {
	t.Helper()
	p, err := NewPolicy(ModeDefault, extra...)
	require.NoError(t, err)
	return p
}

func TestTurnFullTurn(t *testing.T) {
	turn := NewTurn(readOnly(t))
	turn.KeepText()
	lines := seq(initLine, userLine, thinkingDelta, thinkingDone,
		snap("m1", "Let me read it."), toolPair(`toolu_1\nx`), flushLine("Let me read it."),
		`{"type":"mystery","x":1}`, resultLine)
	r := feedAll(t, turn, lines)
	require.NoError(t, r.err)
	assert.Equal(t, []OutputType{OutputInit, OutputThinking, OutputThinking, OutputText,
		OutputToolStarted, OutputToolCompleted, OutputUnknown, OutputResult}, outputTypes(r.outputs))
	require.NoError(t, turn.End(0, true))
	assert.True(t, turn.Done())
	assert.Equal(t, "abc", turn.SessionID())
	assert.Equal(t, "Claude 4.5 Sonnet", turn.Init().Model)
	assert.Equal(t, "r1", turn.Result().RequestID)
	assert.Equal(t, "Let me read it.", turn.Text())
	assert.Equal(t, int64(len("Let me read it.")), turn.TextLen())

	completed := r.outputs[5].Tool
	assert.Equal(t, "toolu_1\nx", completed.CallID)
	assert.Equal(t, "read", completed.Name)
	assert.Equal(t, "success", completed.Result.Status)

	o := turn.Outcome(nil)
	assert.Equal(t, StatusDone, o.Status)
	assert.Equal(t, failure.Kind(""), o.Kind)
	assert.Equal(t, i64(20), o.Usage.OutputTokens)
	b, err := json.Marshal(o)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"outcome","status":"done","kind":null,"sessionId":"abc","model":"Claude 4.5 Sonnet",
		"usage":{"reported":true,"inputTokens":10,"outputTokens":20,"cacheReadTokens":0,"cacheWriteTokens":0},"warnings":[]}`, string(b))

	for _, out := range r.outputs {
		assert.NotContains(t, string(out.AppendJSON(nil)), "SECRET PROMPT", "the prompt's echo is never output")
	}
}

func TestTurnRemembersArgs(t *testing.T) {
	turn := NewTurn(readOnly(t))
	r := feedAll(t, turn, seq(initLine,
		`{"type":"tool_call","subtype":"started","call_id":"c\n1","tool_call":{"grepToolCall":{"args":{"pattern":"x"}}}}`,
		`{"type":"tool_call","subtype":"completed","call_id":"c\n1","tool_call":{"grepToolCall":{"result":{"rejected":{"reason":"no"}}}}}`,
		`{"type":"tool_call","subtype":"completed","call_id":"c\n1","tool_call":{"grepToolCall":{}}}`,
	))
	require.NoError(t, r.err)
	require.Len(t, r.outputs, 4)
	done := r.outputs[2].Tool
	assert.JSONEq(t, `{"pattern":"x"}`, string(done.Args), "args from started")
	assert.Equal(t, "rejected", done.Result.Status)
	assert.Nil(t, r.outputs[3].Tool.Args, "a completed call is forgotten")
}

func TestTurnCompletedNamesToolFromStarted(t *testing.T) {
	turn := NewTurn(readOnly(t))
	r := feedAll(t, turn, seq(initLine,
		`{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"lsToolCall":{"args":{"path":"."}}}}`,
		`{"type":"tool_call","subtype":"completed","call_id":"c1"}`,
	))
	require.NoError(t, r.err)
	assert.Equal(t, "ls", r.outputs[2].Tool.Name)
	assert.JSONEq(t, `{"path":"."}`, string(r.outputs[2].Tool.Args))
}

func TestTurnProtocol(t *testing.T) {
	tests := []struct {
		name     string
		lines    []string
		feedErr  string // substring of the Feed error, "" for none
		feedLine int
		exit     int
		exited   bool
		endKind  failure.Kind // "" for success
		endErr   string
		warnings []string // warning codes
	}{
		{name: "a complete turn", lines: seq(initLine, snap("m1", "Hello"), resultLine), exited: true},
		{name: "a complete turn, then stopped after the grace", lines: seq(initLine, resultLine), exited: false},
		{name: "a complete turn with a non-zero exit after the result", lines: seq(initLine, resultLine), exit: 1, exited: true},
		{name: "banner before init is a warning", lines: seq("Cursor Agent 2026.10.02", "\x1b[2K", initLine, resultLine),
			exited: true, warnings: []string{WarnBanner, WarnBanner}},
		{name: "blank lines, CRLF and a missing final newline", lines: seq("", initLine+"\r\n", "  \r\n", snap("m1", "x")+"\n", resultLine), exited: true},
		{name: "non-JSON after init", lines: seq(initLine, `{"type":"assistant","message":{"content":[{"type":"te`, resultLine),
			feedErr: "line 2, byte offset 53: not JSON: unexpected end of JSON input", feedLine: 2, endKind: failure.Protocol, exited: true},
		{name: "plain text after init", lines: seq(initLine, "Error: something"),
			feedErr: "line 2, byte offset 0: not JSON", feedLine: 2, endKind: failure.Protocol, exited: true, exit: 1},
		{name: "malformed known event", lines: seq(initLine, `{"type":"result","is_error":"no"}`),
			feedErr: `result event: field "is_error" is not a boolean`, feedLine: 2, endKind: failure.Protocol, exited: true},
		{name: "missing init", lines: seq(snap("m1", "Hello"), resultLine),
			feedErr: `line 1: the first event is of type "assistant", not system/init`, feedLine: 1, endKind: failure.Protocol, exited: true},
		{name: "missing init, unknown first event", lines: seq(`{"type":"mystery"}`),
			feedErr: `the first event is of type "mystery"`, feedLine: 1, endKind: failure.Protocol, exited: true},
		{name: "JSON array first is a banner, then nothing", lines: seq(`[1]`), exited: true,
			endKind: failure.Protocol, endErr: "without a system/init event", warnings: []string{WarnBanner}},
		{name: "exit 0 with no output", lines: nil, exited: true, endKind: failure.Protocol, endErr: "exited 0 without a system/init event"},
		{name: "exit 0 without a result", lines: seq(initLine, snap("m1", "Hello")), exited: true,
			endKind: failure.Protocol, endErr: "exited 0 without a result event"},
		{name: "non-zero exit without a result", lines: seq(initLine, userLine), exit: 2, exited: true,
			endKind: failure.Process, endErr: "exited with code 2 without a result event"},
		{name: "non-zero exit before any event", lines: nil, exit: 1, exited: true,
			endKind: failure.Process, endErr: "exited with code 1 before its first event"},
		{name: "stopped before the first event", lines: nil, endKind: failure.Process, endErr: "stopped before its first event"},
		{name: "stopped mid-stream", lines: seq(initLine), endKind: failure.Process, endErr: "stopped before its result event"},
		{name: "a line after the result", lines: seq(initLine, resultLine, snap("m9", "late")),
			feedErr: "line 3, byte offset 0: output after the result event", feedLine: 3, endKind: failure.Protocol, exited: true},
		{name: "a second result", lines: seq(initLine, resultLine, resultLine),
			feedErr: "output after the result event", feedLine: 3, endKind: failure.Protocol, exited: true},
		{name: "blank lines after the result are fine", lines: seq(initLine, resultLine, "", "\r\n"), exited: true},
		{name: "a second init is a warning", lines: seq(initLine, initLine, resultLine), exited: true, warnings: []string{WarnDuplicateInit}},
		{name: "usage limit", lines: seq(initLine, errorResult("You've hit your usage limit for this model. Upgrade to continue.")),
			exit: 1, exited: true, endKind: failure.Quota, endErr: "cursor-agent reported an error: You've hit your usage limit"},
		{name: "rate limit", lines: seq(initLine, errorResult("Rate limit exceeded, retry in 30s")),
			exit: 1, exited: true, endKind: failure.RateLimited, endErr: "Rate limit exceeded"},
		{name: "authentication", lines: seq(initLine, errorResult("Authentication required. Run cursor-agent login.")),
			exit: 1, exited: true, endKind: failure.Auth, endErr: "Authentication required"},
		{name: "other error", lines: seq(initLine, errorResult("The model crashed")),
			exit: 1, exited: true, endKind: failure.Other, endErr: "The model crashed"},
		{name: "subtype error without is_error", lines: seq(initLine, `{"type":"result","subtype":"error","is_error":false,"result":"bad"}`),
			exited: true, endKind: failure.Other, endErr: "bad"},
		{name: "is_error without a message", lines: seq(initLine, `{"type":"result","subtype":"success","is_error":true}`),
			exited: true, endKind: failure.Other, endErr: "(no message)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := NewTurn(readOnly(t))
			r := feedAll(t, turn, tt.lines)
			if tt.feedErr == "" {
				require.NoError(t, r.err)
			} else {
				require.Error(t, r.err)
				assert.Equal(t, failure.Protocol, failure.KindOf(r.err))
				assert.Contains(t, r.err.Error(), tt.feedErr)
				assert.Equal(t, tt.feedLine, r.errLine)
				// Sticky: the turn stays failed.
				_, again := turn.Feed([]byte(resultLine))
				assert.Equal(t, r.err, again)
			}
			err := turn.End(tt.exit, tt.exited)
			if tt.endKind == "" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Equal(t, tt.endKind, failure.KindOf(err), err.Error())
				assert.Contains(t, err.Error(), tt.endErr)
			}
			var codes []string
			for _, w := range turn.Warnings() {
				codes = append(codes, w.Code)
			}
			assert.Equal(t, tt.warnings, codes)
			for _, o := range r.outputs {
				assert.True(t, json.Valid(o.AppendJSON(nil)))
			}
		})
	}
}

func TestTurnErrorMessagesAreBounded(t *testing.T) {
	long := "You've hit your usage limit. " + strings.Repeat("x", 5000)
	turn := NewTurn(readOnly(t))
	r := feedAll(t, turn, seq(initLine, errorResult(long)))
	require.NoError(t, r.err)
	err := turn.End(1, true)
	var fe *failure.Error
	require.ErrorAs(t, err, &fe)
	assert.LessOrEqual(t, len(fe.Detail), MaxAgentMessage+len("…"))
	assert.Equal(t, failure.Quota, fe.Kind)

	o := turn.Outcome(err)
	assert.Equal(t, StatusError, o.Status)
	assert.Equal(t, failure.Quota, o.Kind)
	assert.LessOrEqual(t, len(o.Message), 2*MaxAgentMessage+len("…"))
}

func TestTurnProtocolExcerpts(t *testing.T) {
	t.Run("bounded", func(t *testing.T) {
		turn := NewTurn(readOnly(t))
		bad := `{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("A", 10000) + `"}]}}x`
		r := feedAll(t, turn, seq(initLine, bad))
		require.Error(t, r.err)
		var fe *failure.Error
		require.ErrorAs(t, r.err, &fe)
		assert.Contains(t, fe.Message, "byte offset 10070")
		assert.Less(t, len(fe.Detail), 2*excerptWidth)
		assert.Contains(t, fe.Detail, "}]}}x")
	})
	t.Run("never the prompt", func(t *testing.T) {
		turn := NewTurn(readOnly(t))
		r := feedAll(t, turn, seq(initLine, userLine[:len(userLine)-20]))
		require.Error(t, r.err)
		assert.NotContains(t, r.err.Error(), "SECRET")
		assert.Contains(t, r.err.Error(), "withheld")
	})
	t.Run("banner warning quotes the banner", func(t *testing.T) {
		turn := NewTurn(readOnly(t))
		outs, err := turn.Feed([]byte("Update available: 2026.11.01\r\n"))
		require.NoError(t, err)
		require.Len(t, outs, 1)
		assert.Equal(t, OutputWarning, outs[0].Type)
		assert.Equal(t, WarnBanner, outs[0].Warning.Code)
		assert.Contains(t, outs[0].Warning.Message, `"Update available: 2026.11.01"`)
	})
}

func TestTurnPolicy(t *testing.T) {
	tests := []struct {
		name    string
		mode    Mode
		extra   []string
		line    string
		allowed bool
		msg     string
	}{
		{name: "read in the default mode", mode: ModeDefault, line: toolPair("r")[0], allowed: true},
		{name: "shell in the default mode", mode: ModeDefault, line: shellStarted, msg: `tool "shell", which the default mode does not allow`},
		{name: "shell in plan", mode: ModePlan, line: shellStarted, msg: "the plan mode"},
		{name: "shell in ask", mode: ModeAsk, line: shellStarted, msg: "the ask mode"},
		{name: "shell in write", mode: ModeWrite, line: shellStarted, allowed: true},
		{name: "mcp in write", mode: ModeWrite, line: mcpStarted, msg: `tool "mcp"`},
		{name: "mcp added by the caller", mode: ModeDefault, extra: []string{"mcp"}, line: mcpStarted, allowed: true},
		{name: "getMcpTools added by the caller", mode: ModeAsk, extra: []string{"mcp", "getMcpTools"}, line: getMcpStarted, allowed: true},
		{name: "getMcpTools not added", mode: ModeWrite, extra: []string{"mcp"}, line: getMcpStarted, msg: `"getMcpTools"`},
		{name: "an unidentifiable tool", mode: ModeWrite, line: unnamedToolCall, msg: "cannot be identified"},
		{name: "a completed call of a forbidden tool", mode: ModeDefault,
			line: `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"result":{"success":{}}}}}`, msg: `"edit"`},
		{name: "an odd subtype is checked too", mode: ModeDefault,
			line: `{"type":"tool_call","subtype":"progress","call_id":"e","tool_call":{"deleteToolCall":{}}}`, msg: `"delete"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPolicy(tt.mode, tt.extra...)
			require.NoError(t, err)
			turn := NewTurn(p)
			r := feedAll(t, turn, seq(initLine, snap("m1", "Working."), tt.line))
			if tt.allowed {
				require.NoError(t, r.err)
				return
			}
			require.Error(t, r.err)
			assert.Equal(t, 3, r.errLine)
			assert.Equal(t, failure.Policy, failure.KindOf(r.err))
			assert.Contains(t, r.err.Error(), tt.msg)
			assert.Contains(t, r.err.Error(), "line 3")
			assert.Equal(t, r.err, turn.End(0, false), "End reports the policy failure")
			o := turn.Outcome(turn.End(0, false))
			assert.Equal(t, StatusError, o.Status)
			assert.Equal(t, failure.Policy, o.Kind)
		})
	}
}

func TestTurnOddToolSubtypePassesThrough(t *testing.T) {
	turn := NewTurn(readOnly(t))
	line := `{"type":"tool_call","subtype":"progress","call_id":"c","tool_call":{"readToolCall":{}}}`
	r := feedAll(t, turn, seq(initLine, line))
	require.NoError(t, r.err)
	require.Len(t, r.outputs, 2)
	assert.Equal(t, OutputUnknown, r.outputs[1].Type)
	assert.Equal(t, "progress", r.outputs[1].Unknown.Subtype)
	assert.JSONEq(t, line, string(r.outputs[1].Unknown.Raw))
}

func TestTurnOutcome(t *testing.T) {
	turn := NewTurn(readOnly(t))
	assert.Equal(t, "", turn.SessionID())
	o := turn.Outcome(failure.New(failure.Timeout, "no first line within 30s"))
	assert.Equal(t, StatusError, o.Status)
	assert.Equal(t, failure.Timeout, o.Kind)
	b, err := json.Marshal(o)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"outcome","status":"error","kind":"timeout","message":"no first line within 30s",
		"sessionId":null,"usage":{"reported":false},"warnings":[]}`, string(b))

	_ = feedAll(t, turn, seq(`{"type":"system","subtype":"init"}`, `{"type":"result","subtype":"success","session_id":"from-result"}`))
	assert.Equal(t, "from-result", turn.SessionID(), "init without a session id")
	w := turn.Warn(WarnLateClose, "cursor-agent did not exit within 15s of its result; its group was stopped")
	assert.Equal(t, OutputWarning, w.Type)
	o = turn.Outcome(failure.New(failure.Cancelled, "interrupted"))
	assert.Equal(t, StatusCancelled, o.Status)
	assert.Equal(t, []Warning{{Code: WarnLateClose, Message: "cursor-agent did not exit within 15s of its result; its group was stopped"}}, o.Warnings)
	assert.Equal(t, Usage{}, o.Usage)
}

func TestTurnEndWithStderr(t *testing.T) {
	usage := "Error: You've hit your usage limit. Upgrade to Pro."
	long := strings.Repeat("noise line\n", 200) + "panic: boom"
	tests := []struct {
		name   string
		lines  []string
		exit   int
		exited bool
		stderr string
		kind   failure.Kind
		detail string // substring of the error, "" for no error
	}{
		{name: "usage limit on stderr, no stream", exit: 1, exited: true, stderr: usage, kind: failure.Quota, detail: "stderr: " + usage},
		{name: "rate limit on stderr after init", lines: seq(initLine), exit: 1, exited: true, stderr: "429 Too Many Requests", kind: failure.RateLimited},
		{name: "auth on stderr", exit: 1, exited: true, stderr: "Error: Authentication required", kind: failure.Auth},
		{name: "a crash keeps process with the tail", lines: seq(initLine, userLine), exit: 2, exited: true, stderr: long, kind: failure.Process, detail: "panic: boom"},
		{name: "an empty stderr changes nothing", exit: 1, exited: true, stderr: " \n", kind: failure.Process, detail: "exited with code 1 before its first event"},
		{name: "exit 0 stays protocol", lines: seq(initLine), exited: true, stderr: usage, kind: failure.Protocol},
		{name: "stopped stays process", lines: seq(initLine), exit: -1, stderr: usage, kind: failure.Process},
		{name: "after a result the result decides", lines: seq(initLine, resultLine), exit: 1, exited: true, stderr: usage},
		{name: "an error result is not overridden", lines: seq(initLine, errorResult("Rate limit exceeded")), exit: 1, exited: true, stderr: "Authentication required", kind: failure.RateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := NewTurn(readOnly(t))
			require.NoError(t, feedAll(t, turn, tt.lines).err)
			err := turn.EndWithStderr(tt.exit, tt.exited, tt.stderr)
			if tt.kind == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.kind, failure.KindOf(err), err.Error())
			assert.Contains(t, err.Error(), tt.detail)
			var fe *failure.Error
			require.ErrorAs(t, err, &fe)
			assert.LessOrEqual(t, len(fe.Detail), len("stderr: …")+MaxAgentMessage)
		})
	}
}
