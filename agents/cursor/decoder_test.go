package cursor

import (
	"bytes"
	"encoding/json/jsontext"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

func TestDecoderFullTurn(t *testing.T) {
	d := newDecoder(t, Turn{})
	d.keepText()
	lines := seq(initLine, userLine, thinkingDelta, thinkingDone,
		snap("m1", "Let me read it."), toolPair(`toolu_1\nx`), flushLine("Let me read it."),
		`{"type":"mystery","x":1}`, resultLine)
	r := feedAll(t, d, lines)
	require.NoError(t, r.err)
	assert.Equal(t, []event.Type{event.TypeInit, event.TypeThinking, event.TypeThinking, event.TypeText,
		event.TypeToolStarted, event.TypeToolCompleted, event.TypeUnknown, event.TypeResult}, eventTypes(r.events))
	require.NoError(t, d.End(0, ""))
	assert.True(t, d.Done())
	assert.Equal(t, "Let me read it.", d.saidText())

	assert.Equal(t, &event.Init{SessionID: "abc", Model: "Claude 4.5 Sonnet", CWD: "/repo", PermissionMode: "default", APIKeySource: "login"}, r.events[0].Init)
	assert.Equal(t, event.Event{Type: event.TypeThinking, Subtype: "delta", Text: "pondering"}, r.events[1])
	assert.Equal(t, event.Event{Type: event.TypeThinking, Subtype: "completed"}, r.events[2])
	assert.Equal(t, event.Event{Type: event.TypeText, Text: "Let me read it."}, r.events[3])
	assert.Equal(t, &event.Tool{CallID: "toolu_1\nx", Name: "read", Args: jsontext.Value(`{"path":"README.md"}`),
		Status: "success", Result: jsontext.Value(`{"content":"..."}`)}, r.events[5].Tool)
	assert.Equal(t, &event.Unknown{Type: "mystery", Raw: jsontext.Value(`{"type":"mystery","x":1}`)}, r.events[6].Unknown)
	assert.Equal(t, &event.Result{Subtype: "success", Text: "Hello", DurationMs: 1234, DurationAPIMs: 1200, SessionID: "abc", RequestID: "r1",
		Usage: event.Usage{Reported: true, InputTokens: i64(10), OutputTokens: i64(20), CacheReadTokens: i64(0), CacheWriteTokens: i64(0)}}, r.events[7].Result)

	for _, ev := range r.events {
		var b bytes.Buffer
		require.NoError(t, ev.MarshalJSONTo(event.NewEncoder(&b)))
		assert.NotContains(t, b.String(), "SECRET PROMPT", "the prompt's echo is never output")
	}
}

// TestDecoderEventsStayValid holds Feed to its contract: the events of one
// call are not changed by later calls.
func TestDecoderEventsStayValid(t *testing.T) {
	d := newDecoder(t, Turn{})
	var kept [][]event.Event
	var want []event.Event
	for i, l := range seq(initLine, deltaLine("a"), thinkingDelta, deltaLine("b"), initLine, toolPair("t"), `{"type":"x"}`) {
		for range 40 * (i + 1) { // blank lines between, counted
			_, err := d.Feed([]byte(" "))
			require.NoError(t, err)
		}
		evs, err := d.Feed([]byte(l))
		require.NoError(t, err)
		kept = append(kept, evs)
		want = append(want, evs...) // copies of the events as returned
	}
	var got []event.Event
	for _, evs := range kept {
		got = append(got, evs...)
	}
	assert.Equal(t, want, got)
	assert.Len(t, got, 9)
}

func TestDecoderRemembersArgs(t *testing.T) {
	d := newDecoder(t, Turn{})
	r := feedAll(t, d, seq(initLine,
		`{"type":"tool_call","subtype":"started","call_id":"c\n1","tool_call":{"grepToolCall":{"args":{"pattern":"x"}}}}`,
		`{"type":"tool_call","subtype":"completed","call_id":"c\n1","tool_call":{"grepToolCall":{"result":{"rejected":{"reason":"no"}}}}}`,
		`{"type":"tool_call","subtype":"completed","call_id":"c\n1","tool_call":{"grepToolCall":{}}}`,
	))
	require.NoError(t, r.err)
	require.Len(t, r.events, 4)
	done := r.events[2].Tool
	assert.Equal(t, jsontext.Value(`{"pattern":"x"}`), done.Args, "args from started")
	assert.Equal(t, "rejected", done.Status)
	assert.Nil(t, r.events[3].Tool.Args, "a completed call is forgotten")
	assert.Equal(t, "", r.events[3].Tool.Status)
}

func TestDecoderCompletedNamesToolFromStarted(t *testing.T) {
	d := newDecoder(t, Turn{})
	r := feedAll(t, d, seq(initLine,
		`{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"lsToolCall":{"args":{"path":"."}}}}`,
		`{"type":"tool_call","subtype":"completed","call_id":"c1"}`,
	))
	require.NoError(t, r.err)
	assert.Equal(t, "ls", r.events[2].Tool.Name)
	assert.Equal(t, jsontext.Value(`{"path":"."}`), r.events[2].Tool.Args)
}

// protocolCase is a turn's lines and what Feed and End make of them.
type protocolCase struct {
	name     string
	lines    []string
	feedErr  string // substring of the Feed error, "" for none
	feedLine int
	exit     int
	endKind  failure.Kind // "" for success
	endErr   string
	warnings []string // warning codes
}

func TestDecoderProtocol(t *testing.T) {
	for _, tt := range []protocolCase{
		{name: "a complete turn", lines: seq(initLine, snap("m1", "Hello"), resultLine)},
		{name: "a complete turn with a non-zero exit after the result", lines: seq(initLine, resultLine), exit: 1},
		{name: "banner before init is a warning", lines: seq("Cursor Agent 2026.10.02", "\x1b[2K", initLine, resultLine),
			warnings: []string{event.WarnBanner, event.WarnBanner}},
		{name: "blank lines, CRLF and a missing final newline", lines: seq("", initLine+"\r\n", "  \r\n", "\t\n", snap("m1", "x")+"\n", resultLine)},
		{name: "non-JSON after init", lines: seq(initLine, `{"type":"assistant","message":{"content":[{"type":"te`, resultLine),
			feedErr: "line 2, byte offset 53: not valid JSON", feedLine: 2, endKind: failure.Protocol},
		{name: "plain text after init", lines: seq(initLine, "Error: something"),
			feedErr: "line 2, byte offset 0: not a JSON object", feedLine: 2, endKind: failure.Protocol, exit: 1},
		{name: "malformed known event", lines: seq(initLine, `{"type":"result","is_error":"no"}`),
			feedErr: `line 2, byte offset 28: "result" event: field "/is_error" is a string, not a boolean`, feedLine: 2, endKind: failure.Protocol},
		{name: "a type mismatch names the field", lines: seq(initLine, `{"type":"assistant","timestamp_ms":"x"}`),
			feedErr: `line 2, byte offset 35: "assistant" event: field "/timestamp_ms" is a string, not an integer in range`, feedLine: 2, endKind: failure.Protocol},
		{name: "missing init", lines: seq(snap("m1", "Hello"), resultLine),
			feedErr: `line 1: the first event is of type "assistant", not a system/init event`, feedLine: 1, endKind: failure.Protocol},
		{name: "missing init, unknown first event", lines: seq(`{"type":"mystery"}`),
			feedErr: `the first event is of type "mystery"`, feedLine: 1, endKind: failure.Protocol},
		{name: "missing init, no type", lines: seq(`{"a":1}`),
			feedErr: `the first event is an event without a type, not a system/init event`, feedLine: 1, endKind: failure.Protocol},
		{name: "malformed first event", lines: seq(`{"type":"system","subtype":"init","cwd":1}`),
			feedErr: `line 1, byte offset 40: "system" event: field "/cwd" is a number, not a string`, feedLine: 1, endKind: failure.Protocol},
		{name: "JSON array first is a banner, then nothing", lines: seq(`[1]`),
			endKind: failure.Protocol, endErr: "without a system/init event", warnings: []string{event.WarnBanner}},
		{name: "exit 0 with no output", lines: nil, endKind: failure.Protocol, endErr: "exited 0 without a system/init event (0 lines read)"},
		{name: "exit 0 without a result", lines: seq(initLine, snap("m1", "Hello")),
			endKind: failure.Protocol, endErr: "exited 0 without a result event (2 lines read)"},
		{name: "non-zero exit without a result", lines: seq(initLine, userLine), exit: 2,
			endKind: failure.Process, endErr: "exited with code 2 without a result event"},
		{name: "non-zero exit before any event", lines: nil, exit: 1,
			endKind: failure.Process, endErr: "exited with code 1 before its first event"},
		{name: "a line after the result", lines: seq(initLine, resultLine, snap("m9", "late")),
			feedErr: "line 3, byte offset 0: output after a result event", feedLine: 3, endKind: failure.Protocol},
		{name: "a second result", lines: seq(initLine, resultLine, resultLine),
			feedErr: "output after a result event", feedLine: 3, endKind: failure.Protocol},
		{name: "blank lines after the result are fine", lines: seq(initLine, resultLine, "", "\r\n")},
		{name: "a second init is a warning", lines: seq(initLine, initLine, resultLine), warnings: []string{event.WarnDuplicateInit}},
	} {
		t.Run(tt.name, func(t *testing.T) { checkProtocol(t, tt) })
	}
}

func TestDecoderErrorResults(t *testing.T) {
	for _, tt := range []protocolCase{
		{name: "usage limit", lines: seq(initLine, errorResult("You've hit your usage limit for this model. Upgrade to continue.")),
			exit: 1, endKind: failure.Quota, endErr: "cursor-agent reported an error: You've hit your usage limit"},
		{name: "rate limit", lines: seq(initLine, errorResult("Rate limit exceeded, retry in 30s")),
			exit: 1, endKind: failure.RateLimited, endErr: "Rate limit exceeded"},
		{name: "authentication", lines: seq(initLine, errorResult("Authentication required. Run cursor-agent login.")),
			exit: 1, endKind: failure.Auth, endErr: "Authentication required"},
		{name: "connection error", lines: seq(initLine, errorResult("Connection error: getaddrinfo ENOTFOUND api2.cursor.sh")),
			exit: 1, endKind: failure.Network, endErr: "cursor-agent reported an error: Connection error: getaddrinfo ENOTFOUND"},
		{name: "other error", lines: seq(initLine, errorResult("The model crashed")),
			exit: 1, endKind: failure.Unclassified, endErr: "The model crashed"},
		{name: "subtype error without is_error", lines: seq(initLine, `{"type":"result","subtype":"error","is_error":false,"result":"bad"}`),
			endKind: failure.Unclassified, endErr: "bad"},
		{name: "is_error without a message", lines: seq(initLine, `{"type":"result","subtype":"success","is_error":true}`),
			endKind: failure.Unclassified, endErr: "(no message)"},
	} {
		t.Run(tt.name, func(t *testing.T) { checkProtocol(t, tt) })
	}
}

func checkProtocol(t *testing.T, tt protocolCase) {
	t.Helper()
	d := newDecoder(t, Turn{})
	r := feedAll(t, d, tt.lines)
	if tt.feedErr == "" {
		require.NoError(t, r.err)
	} else {
		require.Error(t, r.err)
		assert.Equal(t, failure.Protocol, failure.KindOf(r.err))
		assert.Contains(t, r.err.Error(), tt.feedErr)
		assert.Equal(t, tt.feedLine, r.errLine)
		// Sticky: the turn stays failed.
		_, again := d.Feed([]byte(resultLine))
		assert.Equal(t, r.err, again)
		assert.Equal(t, r.err, d.End(0, ""))
	}
	err := d.End(tt.exit, "")
	if tt.endKind == "" {
		require.NoError(t, err)
	} else {
		require.Error(t, err)
		assert.Equal(t, tt.endKind, failure.KindOf(err), err.Error())
		assert.Contains(t, err.Error(), tt.endErr)
	}
	var codes []string
	for _, ev := range r.events {
		if ev.Type == event.TypeWarning {
			codes = append(codes, ev.Warning.Code)
		}
	}
	assert.Equal(t, tt.warnings, codes)
}

func TestDecoderSecondInit(t *testing.T) {
	d := newDecoder(t, Turn{})
	second := `{"type":"system","subtype":"init","session_id":"other"}`
	r := feedAll(t, d, seq(initLine, second))
	require.NoError(t, r.err)
	require.Len(t, r.events, 3)
	assert.Equal(t, &event.Warning{Code: event.WarnDuplicateInit, Message: `line 2: a second system/init event (session "other")`}, r.events[1].Warning)
	assert.Equal(t, &event.Unknown{Type: "system", Subtype: "init", Raw: jsontext.Value(second)}, r.events[2].Unknown)
}

func TestDecoderErrorMessagesAreBounded(t *testing.T) {
	long := "You've hit your usage limit. " + strings.Repeat("x", 5000)
	d := newDecoder(t, Turn{})
	r := feedAll(t, d, seq(initLine, errorResult(long)))
	require.NoError(t, r.err)
	assert.Equal(t, long, r.events[1].Result.Text, "the event carries the whole text")
	err := d.End(1, "")
	var fe *failure.Error
	require.ErrorAs(t, err, &fe)
	assert.LessOrEqual(t, len(fe.Detail), maxAgentMessage+len("…"))
	assert.Equal(t, failure.Quota, fe.Kind)
}

func TestDecoderProtocolExcerpts(t *testing.T) {
	t.Run("bounded", func(t *testing.T) {
		d := newDecoder(t, Turn{})
		bad := `{"type":"assistant","message":{"content":[{"type":"text","text":"` + strings.Repeat("A", 10000) + `"}]}}x`
		r := feedAll(t, d, seq(initLine, bad))
		require.Error(t, r.err)
		var fe *failure.Error
		require.ErrorAs(t, r.err, &fe)
		assert.Contains(t, fe.Message, "byte offset 10070")
		assert.Less(t, len(fe.Detail), 2*80, "an excerpt of at most 80 bytes, quoted")
		assert.Contains(t, fe.Detail, "}]}}x")
	})
	t.Run("banner warning quotes the banner", func(t *testing.T) {
		d := newDecoder(t, Turn{})
		evs, err := d.Feed([]byte("Update available: 2026.11.01\r\n"))
		require.NoError(t, err)
		require.Len(t, evs, 1)
		assert.Equal(t, event.TypeWarning, evs[0].Type)
		assert.Equal(t, event.WarnBanner, evs[0].Warning.Code)
		assert.Contains(t, evs[0].Warning.Message, `"Update available: 2026.11.01"`)
	})
}

func TestDecoderPolicy(t *testing.T) {
	tests := []struct {
		name    string
		mode    turn.Mode
		tools   []string
		line    string
		allowed bool
		msg     string
	}{
		{name: "read with no mode given", line: toolPair("r")[0], allowed: true},
		{name: "shell with no mode given", line: shellStarted, msg: `tool "shell", which the plan mode does not allow`},
		{name: "shell in plan", mode: turn.ModePlan, line: shellStarted, msg: "the plan mode"},
		{name: "shell in ask", mode: turn.ModeAsk, line: shellStarted, msg: "the ask mode"},
		{name: "shell in write", mode: turn.ModeWrite, line: shellStarted, allowed: true},
		{name: "mcp in write", mode: turn.ModeWrite, line: mcpStarted, msg: `tool "mcp"`},
		{name: "mcp added by the caller", tools: []string{"mcp"}, line: mcpStarted, allowed: true},
		{name: "getMcpTools added by the caller", mode: turn.ModeAsk, tools: []string{"mcp", "getMcpTools"}, line: getMcpStarted, allowed: true},
		{name: "getMcpTools not added", mode: turn.ModeWrite, tools: []string{"mcp"}, line: getMcpStarted, msg: `"getMcpTools"`},
		{name: "an unidentifiable tool", mode: turn.ModeWrite, line: unnamedToolCall, msg: "cannot be identified"},
		{name: "a completed call of a forbidden tool",
			line: `{"type":"tool_call","subtype":"completed","call_id":"e","tool_call":{"editToolCall":{"result":{"success":{}}}}}`, msg: `"edit"`},
		{name: "an odd subtype is checked too",
			line: `{"type":"tool_call","subtype":"progress","call_id":"e","tool_call":{"deleteToolCall":{}}}`, msg: `"delete"`},
		{name: "a completed call naming nothing, never started", mode: turn.ModeWrite,
			line: `{"type":"tool_call","subtype":"completed","call_id":"n"}`, msg: "cannot be identified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDecoder(t, Turn{Mode: tt.mode, Tools: tt.tools})
			r := feedAll(t, d, seq(initLine, snap("m1", "Working."), tt.line))
			if tt.allowed {
				require.NoError(t, r.err)
				return
			}
			require.Error(t, r.err)
			assert.Equal(t, 3, r.errLine)
			assert.Equal(t, failure.Policy, failure.KindOf(r.err))
			assert.Contains(t, r.err.Error(), tt.msg)
			assert.Contains(t, r.err.Error(), "line 3, call id")
			assert.Equal(t, r.err, d.End(0, ""), "End reports the policy failure")
		})
	}
}

func TestDecoderMCPServers(t *testing.T) {
	const staged = "cursorkit-tools-0b8e6c2a-41f7-4c8e-9d1e-5a2f3b4c6d7e"
	mcpWith := func(args string) string {
		return `{"type":"tool_call","subtype":"started","call_id":"toolu_m","tool_call":{"mcpToolCall":{"args":` + args + `}},"session_id":"abc"}`
	}
	tests := []struct {
		name    string
		req     Turn
		lines   []string
		allowed bool
		msg     string
		errLine int
	}{
		{name: "the staged server's call and its result", req: Turn{Mode: turn.ModeWrite, MCPServers: []string{staged}},
			lines: []string{mcpStartedOf(staged), mcpCompletedOnly}, allowed: true},
		{name: "one of several servers, in plan mode", req: Turn{MCPServers: []string{"a", staged, "b"}},
			lines: []string{mcpStartedOf(staged), mcpCompletedOnly}, allowed: true},
		{name: "another server", req: Turn{Mode: turn.ModeWrite, MCPServers: []string{staged}},
			lines: []string{mcpStartedOf("github")}, msg: `tool of the MCP server "github", which the turn does not allow (allowed MCP servers: ` + staged + `)`, errLine: 3},
		{name: "a server that only starts like the staged one", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpStartedOf(staged + "x")}, msg: "which the turn does not allow", errLine: 3},
		{name: "the name alone does not identify the server", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpWith(`{"name":"` + staged + `-search","toolName":"search"}`)}, msg: "cannot be identified", errLine: 3},
		{name: "a providerIdentifier that is not a string", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpWith(`{"providerIdentifier":["` + staged + `"]}`)}, msg: "cannot be identified", errLine: 3},
		{name: "an empty providerIdentifier", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpWith(`{"providerIdentifier":""}`)}, msg: "cannot be identified", errLine: 3},
		{name: "a null providerIdentifier", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpWith(`{"providerIdentifier":null}`)}, msg: "cannot be identified", errLine: 3},
		{name: "args that are not an object", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpWith(`"` + staged + `"`)}, msg: "cannot be identified", errLine: 3},
		{name: "no args at all", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpStarted}, msg: "cannot be identified", errLine: 3},
		{name: "the last providerIdentifier counts", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpWith(`{"providerIdentifier":"` + staged + `","providerIdentifier":"github"}`)}, msg: `"github"`, errLine: 3},
		{name: "the last providerIdentifier counts, allowed", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpWith(`{"providerIdentifier":"github","providerIdentifier":"` + staged + `"}`)}, allowed: true},
		{name: "a completed call never started cannot name its server", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpCompletedOnly}, msg: "cannot be identified", errLine: 3},
		{name: "a completed call naming another server", req: Turn{MCPServers: []string{staged}},
			lines: []string{mcpStartedOf(staged), strings.Replace(mcpStartedOf("github"), `"started"`, `"completed"`, 1)}, msg: `"github"`, errLine: 4},
		{name: "MCP servers allow no other tool", req: Turn{MCPServers: []string{staged}},
			lines: []string{getMcpStarted}, msg: `"getMcpTools"`, errLine: 3},
		{name: "without MCP servers every MCP call is refused", req: Turn{Mode: turn.ModeWrite},
			lines: []string{mcpStartedOf(staged)}, msg: `tool "mcp", which the write mode does not allow`, errLine: 3},
		{name: "Tools naming mcp still allow every server", req: Turn{Tools: []string{"mcp"}, MCPServers: []string{staged}},
			lines: []string{mcpStartedOf("github")}, allowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDecoder(t, tt.req)
			r := feedAll(t, d, seq(initLine, snap("m1", "Working."), tt.lines))
			if tt.allowed {
				require.NoError(t, r.err)
				return
			}
			require.Error(t, r.err)
			assert.Equal(t, failure.Policy, failure.KindOf(r.err))
			assert.Equal(t, tt.errLine, r.errLine)
			assert.Contains(t, r.err.Error(), tt.msg)
			assert.Equal(t, r.err, d.End(0, ""), "End reports the policy failure")
		})
	}
}

func TestDecoderOddToolSubtypePassesThrough(t *testing.T) {
	d := newDecoder(t, Turn{})
	line := `{"type":"tool_call","subtype":"progress","call_id":"c","tool_call":{"readToolCall":{}}}`
	r := feedAll(t, d, seq(initLine, line))
	require.NoError(t, r.err)
	require.Len(t, r.events, 2)
	assert.Equal(t, &event.Unknown{Type: "tool_call", Subtype: "progress", Raw: jsontext.Value(line)}, r.events[1].Unknown)
}

func TestDecoderEnd(t *testing.T) {
	usage := "Error: You've hit your usage limit. Upgrade to Pro."
	long := strings.Repeat("noise line\n", 200) + "panic: boom"
	tests := []struct {
		name   string
		lines  []string
		exit   int
		stderr string
		kind   failure.Kind
		detail string // substring of the error, "" for no error
	}{
		{name: "usage limit on stderr, no stream", exit: 1, stderr: usage, kind: failure.Quota, detail: "stderr: " + usage},
		{name: "rate limit on stderr after init", lines: seq(initLine), exit: 1, stderr: "429 Too Many Requests", kind: failure.RateLimited},
		{name: "auth on stderr", exit: 1, stderr: "Error: Authentication required", kind: failure.Auth},
		{name: "network on stderr", exit: 1, stderr: "Error: Connection error: connect ECONNREFUSED 10.0.0.1:443", kind: failure.Network},
		{name: "proxy on stderr after init", lines: seq(initLine), exit: 1, stderr: "Error: 407 Proxy Authentication Required", kind: failure.Network},
		{name: "keychain on stderr", exit: 1, stderr: "Error: Your macOS login keychain is locked.", kind: failure.Auth},
		{name: "IDE missing on stderr", exit: 1, stderr: "Error: No Cursor IDE installation found.", kind: failure.Setup},
		{name: "a crash keeps process with the tail", lines: seq(initLine, userLine), exit: 2, stderr: long, kind: failure.Process, detail: "panic: boom"},
		{name: "an empty stderr changes nothing", exit: 1, stderr: " \n", kind: failure.Process, detail: "exited with code 1 before its first event"},
		{name: "exit 0 stays protocol", lines: seq(initLine), stderr: usage, kind: failure.Protocol},
		{name: "after a result the result decides", lines: seq(initLine, resultLine), exit: 1, stderr: usage},
		{name: "an error result is not overridden", lines: seq(initLine, errorResult("Rate limit exceeded")), exit: 1, stderr: "Authentication required", kind: failure.RateLimited},
		{name: "a protocol failure is not overridden", lines: seq(initLine, "oops"), exit: 1, stderr: usage, kind: failure.Protocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDecoder(t, Turn{})
			feedAll(t, d, tt.lines)
			err := d.End(tt.exit, tt.stderr)
			if tt.kind == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.kind, failure.KindOf(err), err.Error())
			assert.Contains(t, err.Error(), tt.detail)
			var fe *failure.Error
			require.ErrorAs(t, err, &fe)
			assert.LessOrEqual(t, len(fe.Detail), len("stderr: …")+maxAgentMessage)
		})
	}
}
