package agentsim

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// kv and obj build JSON objects whose keys keep the order the real agent
// prints them in (type first), which a Go map would not.
type kv struct {
	k string
	v any
}

type obj []kv

// MarshalJSONTo writes the pairs in order, with the encoder's options.
func (o obj) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, p := range o {
		if err := enc.WriteToken(jsontext.String(p.k)); err != nil {
			return err
		}
		if err := json.MarshalEncode(enc, p.v); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// marshal encodes v as the real agent, a Node program, prints it:
// JSON.stringify escapes neither HTML nor U+2028 and U+2029, and invalid
// UTF-8 (a prompt's, an argument's) became U+FFFD when Node read the bytes
// into a string (Go replaces each invalid byte, Node a truncated sequence
// as one). Records use it too, so that bytes which are not UTF-8 never
// leave an invocation unrecorded.
func marshal(v any) ([]byte, error) {
	return json.Marshal(v, jsontext.AllowInvalidUTF8(true))
}

// lineWriter writes stream lines, flushing each one so that a reader sees
// events as they happen, with the scenario's line ending and pacing.
type lineWriter struct {
	w     *bufio.Writer
	eol   string
	delay time.Duration
	err   error
}

func (lw *lineWriter) raw(line []byte, eol bool) {
	if lw.err != nil {
		return
	}
	if lw.delay > 0 {
		time.Sleep(lw.delay)
	}
	lw.w.Write(line)
	if eol {
		lw.w.WriteString(lw.eol)
	}
	lw.err = lw.w.Flush()
}

func (lw *lineWriter) event(o obj) {
	line, err := marshal(o)
	if err != nil {
		lw.err = err
		return
	}
	lw.raw(line, true)
}

func newID(prefix string, n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func newSessionID() string {
	h := newID("", 16)
	return h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
}

func nowMS() int64 { return time.Now().UnixMilli() }

func textContent(role, text string) obj {
	return obj{{"role", role}, {"content", []obj{{{"type", "text"}, {"text", text}}}}}
}

// assistantPrefix starts an assistant event written by hand: encoding/json
// takes seconds over megabytes of text under the race detector.
const assistantPrefix = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`

// turn is one print-mode run's state.
type turn struct {
	s       *sim
	inv     invocation
	w       *lineWriter
	session string
	cwd     string        // the workspace: --workspace, else the working directory
	mcp     *mcpServerRun // the mcp-call scenario's server, nil when none
}

func (t *turn) assistant(text, modelCallID string) {
	partial := t.inv.streamPartialOutput
	if partial {
		// Deltas first (each with timestamp_ms), then the buffered copy of
		// the whole message: the same text twice, by design of the real CLI.
		for _, piece := range splitText(text, 3) {
			t.w.event(obj{{"type", "assistant"}, {"message", textContent("assistant", piece)},
				{"session_id", t.session}, {"timestamp_ms", nowMS()}})
		}
	}
	e := obj{{"type", "assistant"}, {"message", textContent("assistant", text)}, {"session_id", t.session}}
	if modelCallID != "" {
		e = append(e, kv{"model_call_id", modelCallID})
		if !partial {
			e = append(e, kv{"timestamp_ms", nowMS()})
		}
	}
	t.w.event(e)
}

// splitText cuts text into at most n non-empty pieces on rune boundaries.
func splitText(text string, n int) []string {
	runes := []rune(text)
	size := (len(runes) + n - 1) / n
	if size == 0 {
		return []string{text}
	}
	var pieces []string
	for len(runes) > 0 {
		k := min(size, len(runes))
		pieces = append(pieces, string(runes[:k]))
		runes = runes[k:]
	}
	return pieces
}

// toolEvent writes one tool_call event; body is what the tool's object
// holds (its args, its result or both).
func (t *turn) toolEvent(subtype, callID, modelCallID, tool string, body obj) {
	t.w.event(obj{{"type", "tool_call"}, {"subtype", subtype}, {"call_id", callID}, {"tool_call", obj{{tool, body}}},
		{"model_call_id", modelCallID}, {"session_id", t.session}, {"timestamp_ms", nowMS()}})
}

// toolCall writes a call's started event and, with a result, its
// completed one.
func (t *turn) toolCall(callID, modelCallID, tool string, args obj, result obj) {
	t.toolEvent("started", callID, modelCallID, tool, obj{{"args", args}})
	if result != nil {
		t.toolEvent("completed", callID, modelCallID, tool, obj{{"args", args}, {"result", result}})
	}
}

func (t *turn) result(isError bool, text string, eol bool) {
	subtype := "success"
	if isError {
		subtype = "error"
	}
	// The text is spliced in after encoding: a big text of bigAlphabet
	// needs no escaping, and encoding 10 MiB takes a second under the race
	// detector.
	const placeholder = "\x00result\x00"
	e := obj{{"type", "result"}, {"subtype", subtype}, {"is_error", isError},
		{"duration_ms", 1234}, {"duration_api_ms", 1200}, {"result", placeholder},
		{"session_id", t.session}, {"request_id", newID("req_", 8)}}
	if !t.s.has(ScenarioNoUsage) {
		e = append(e, kv{"usage", obj{{"inputTokens", 10}, {"outputTokens", 20}, {"cacheReadTokens", 0}, {"cacheWriteTokens", 0}}})
	}
	line, err := marshal(e)
	if err != nil {
		t.w.err = err
		return
	}
	var encoded []byte
	if strings.Trim(text, bigAlphabet) == "" {
		encoded = []byte(`"` + text + `"`)
	} else {
		encoded, _ = marshal(text)
	}
	t.w.raw(bytes.Replace(line, []byte(`"\u0000result\u0000"`), encoded, 1), eol)
}

// Error texts of the failing scenarios.
const (
	usageLimitMessage = UsageLimitText + ". Upgrade to Pro+ for more usage, or switch to Auto. Your limit resets on Dec 1, 2026."
	rateLimitMessage  = "Rate limit exceeded. Please try again in 30 seconds."
	authErrorMessage  = "Authentication required. Please run 'cursor-agent login' first, or set CURSOR_API_KEY."
	errorMessage      = "Something went wrong: the model provider returned an internal error."
)

// print runs one `--print --output-format stream-json` turn.
func (s *sim) print(inv invocation) int {
	prompt, err := io.ReadAll(s.stdin)
	s.record(string(prompt))
	if err != nil {
		fmt.Fprintf(s.stderr, "Error: reading stdin: %v\n", err)
		return 1
	}
	if s.refuses(inv, string(prompt)) {
		return 1
	}
	if s.has(ScenarioHangBeforeOutput) {
		return s.hang()
	}
	t := s.newTurn(inv)
	defer t.stopMCP() // the MCP servers of a turn live as long as it
	t.begin(string(prompt))
	if code, failed := t.fail(); failed {
		return code
	}
	if text, ok := s.reviewText(); ok {
		return t.review(text)
	}
	t.think()
	resultText := TextResult
	if s.has(ScenarioBigLine) {
		resultText = t.bigLine()
	} else {
		t.assistant(TextBeforeTool, "mc_1")
		if s.has(ScenarioDisallowedTool) {
			return t.disallowedTool()
		}
		t.tools()
	}
	if t.w.err != nil {
		return 1 // the reader went away: the real agent dies of EPIPE too
	}
	if err := s.leaveWorker(); err != nil {
		fmt.Fprintf(s.stderr, "cursor-agent-sim: worker: %v\n", err)
		return 3
	}
	return t.end(resultText)
}

// refuses prints why the turn cannot start, before any stream, and
// reports whether it did.
func (s *sim) refuses(inv invocation, prompt string) bool {
	var msg string
	switch {
	case !inv.trust:
		msg = "Error: Workspace Trust Required. Pass --trust to trust this workspace in headless mode."
	case strings.TrimSpace(prompt) == "":
		msg = "Error: No prompt provided. Pass the prompt on stdin."
	case inv.sandbox == "enabled" && s.has(ScenarioSandboxUnavailable):
		msg = SandboxUnavailableText
	case s.has(ScenarioUsageLimitStderr):
		msg = "Error: " + usageLimitMessage
	case s.has(ScenarioNetworkErrorStderr):
		msg = "Error: Connection error: " + s.networkError()
	default:
		return s.blocked()
	}
	fmt.Fprintln(s.stderr, msg)
	return true
}

// newTurn is a turn of the session resumed, else of a new one.
func (s *sim) newTurn(inv invocation) *turn {
	eol := "\n"
	if s.has(ScenarioCRLF) {
		eol = "\r\n"
	}
	t := &turn{s: s, inv: inv, session: inv.resume, cwd: s.workspace(),
		w: &lineWriter{w: bufio.NewWriterSize(s.stdout, 64<<10), eol: eol, delay: s.duration(EnvEventDelay, 0)}}
	if t.session == "" {
		t.session = newSessionID()
	}
	return t
}

// begin writes the init event and the echoed prompt, with their
// scenarios' banner, unknown event and malformed line.
func (t *turn) begin(prompt string) {
	model := t.inv.model
	if model == "" {
		model = DefaultModelID
	}
	if t.s.has(ScenarioBanner) {
		t.w.raw([]byte("Cursor Agent (simulated) — checking for updates…"), true)
	}
	if !t.s.has(ScenarioMissingInit) {
		t.w.event(obj{{"type", "system"}, {"subtype", "init"}, {"apiKeySource", "login"}, {"cwd", t.cwd},
			{"session_id", t.session}, {"model", modelLabel(model)}, {"permissionMode", "default"}})
	}
	if t.s.has(ScenarioUnknownEvent) {
		t.w.event(obj{{"type", "connection"}, {"subtype", "reconnected"}, {"attempt", 1}, {"session_id", t.session}})
	}
	t.w.event(obj{{"type", "user"}, {"message", textContent("user", prompt)}, {"session_id", t.session}})
	if t.s.has(ScenarioMalformedLine) {
		t.w.raw([]byte(assistantPrefix+`cut off`), true)
	}
}

// fail plays the scenarios that end the turn before its answer.
func (t *turn) fail() (int, bool) {
	s := t.s
	var msg string
	switch {
	case s.has(ScenarioCrash):
		fmt.Fprintln(s.stderr, "TypeError: Cannot read properties of undefined (reading 'text')\n    at AgentStream.next (agent-core.js:1:2345)")
		return 2, true
	case s.has(ScenarioHangMidStream):
		t.assistant("Working on it…", "mc_hang")
		return s.hang(), true
	case s.has(ScenarioBigStream):
		return t.bigStream(), true
	case s.has(ScenarioUsageLimit):
		fmt.Fprintln(s.stderr, "Error: "+usageLimitMessage)
		msg = usageLimitMessage
	case s.has(ScenarioRateLimited):
		msg = rateLimitMessage
	case s.has(ScenarioAuthError):
		msg = authErrorMessage
	case s.has(ScenarioNetworkError):
		msg = "Connection error: " + s.networkError()
	case s.has(ScenarioErrorResult):
		msg = errorMessage
	default:
		return 0, false
	}
	t.result(true, msg, true)
	return 1, true
}

func (t *turn) think() {
	t.w.event(obj{{"type", "thinking"}, {"subtype", "delta"}, {"text", "Let me "}, {"session_id", t.session}, {"timestamp_ms", nowMS()}})
	t.w.event(obj{{"type", "thinking"}, {"subtype", "delta"}, {"text", "look at the README."}, {"session_id", t.session}, {"timestamp_ms", nowMS()}})
	t.w.event(obj{{"type", "thinking"}, {"subtype", "completed"}, {"session_id", t.session}, {"timestamp_ms", nowMS()}})
}

// bigLine writes the big-line scenario's assistant event and returns its
// text.
func (t *turn) bigLine() string {
	big := bigText(t.s.size(EnvLineBytes, DefaultLineBytes))
	t.w.raw([]byte(assistantPrefix+big+`"}]},"session_id":"`+t.session+`","model_call_id":"mc_big","timestamp_ms":`+
		strconv.FormatInt(nowMS(), 10)+`}`), true)
	return big
}

// tools plays the normal turn's tool calls and closing text.
func (t *turn) tools() {
	if t.s.has(ScenarioSandboxWriteOutside) {
		t.sandboxWrites(t.cwd)
	}
	if t.s.has(ScenarioMCPTool) {
		t.mcpTool(t.cwd)
	}
	if t.s.has(ScenarioMCPCall) {
		t.mcpCall(t.cwd)
	}
	t.toolCall(CallIDRead, "mc_1", "readToolCall", obj{{"path", "README.md"}},
		obj{{"success", obj{{"content", "# Demo\nhello\n"}, {"isEmpty", false}, {"exceededLimit", false}, {"totalLines", 2}}}})
	t.toolCall("toolu_02", "mc_1", "grepToolCall", obj{{"pattern", "TODO"}, {"path", "."}},
		obj{{"failure", obj{{"message", "ripgrep exited with status 2"}}}})
	t.toolCall("toolu_03", "mc_1", "lsToolCall", obj{{"path", "/etc"}},
		obj{{"rejected", obj{{"reason", "Path is outside the workspace"}}}})
	if t.s.has(ScenarioDuplicateAssistant) {
		t.assistant(TextBeforeTool, "")
		t.assistant(TextAfterTool, "")
	} else {
		t.assistant(TextAfterTool, "mc_2")
	}
}

// leaveWorker starts the stdout-holding worker of the scenarios that
// leave one.
func (s *sim) leaveWorker() error {
	switch {
	case s.has(ScenarioLinger), s.has(ScenarioOrphanStdout):
		return s.startWorker("linger", s.workerLifetime(), spawnPlain)
	case s.has(ScenarioSetsidEscape):
		return s.startWorker("escapee", s.workerLifetime(), spawnEscape)
	case s.has(ScenarioDoubleFork):
		return s.startWorker("double-fork", s.workerLifetime(), spawnDoubleFork)
	}
	return nil
}

// end writes the result and what follows it, then lingers when asked to.
func (t *turn) end(resultText string) int {
	s := t.s
	if s.has(ScenarioNoResult) {
		return 0
	}
	t.result(false, resultText, !s.has(ScenarioNoFinalNewline))
	if s.has(ScenarioEventAfterResult) {
		t.assistant("One more thing.", "mc_3")
	}
	if t.w.err != nil {
		return 1
	}
	if s.has(ScenarioLinger) || s.has(ScenarioSetsidEscape) || s.has(ScenarioDoubleFork) {
		time.Sleep(s.lingerTime())
	}
	return 0
}

// workerLifetime is how long a stdout-holding worker lives: as long as the
// main process lingers, or until killed when it exits at once.
func (s *sim) workerLifetime() time.Duration {
	if s.has(ScenarioOrphanStdout) {
		return s.hangLimit()
	}
	return s.lingerTime()
}

// disallowedTool starts a worker (the "tool" already running) and then asks
// for a tool outside every read-only allowlist, and waits to be stopped.
func (t *turn) disallowedTool() int {
	if err := t.s.startWorker("tool", t.s.hangLimit(), spawnPlain); err != nil {
		fmt.Fprintf(t.s.stderr, "cursor-agent-sim: worker: %v\n", err)
		return 3
	}
	// A write turn (--force, or a sandboxed one without --mode) allows
	// shell: it gets an MCP call instead.
	if (t.inv.force || t.inv.sandbox == "enabled") && t.inv.mode == "" {
		t.toolCall("toolu_mcp", "mc_1", "mcpToolCall", obj{{"name", "github-create_issue"},
			{"args", obj{{"title", "hello"}}}, {"toolName", "create_issue"}, {"providerIdentifier", "github"}}, nil)
	} else {
		t.toolCall("toolu_shell", "mc_1", "shellToolCall", obj{{"command", "rm -rf build"}, {"workingDirectory", ""}}, nil)
	}
	return t.s.hang()
}

// mcpTool calls MCPToolName of an MCP server in the shape Cursor prints
// (docs/contract.md, "Policy"): the started event's args name the server
// as providerIdentifier, and the completed event carries only the
// result. Headless cursor-agent loads the workspace's MCP servers only
// with --approve-mcps, so without it there is no call.
func (t *turn) mcpTool(cwd string) {
	if !t.inv.approveMCPs {
		return
	}
	server := t.s.getenv(EnvMCPServer)
	if server == "" {
		server = firstMCPServer(projectMCPConfig(cwd))
	}
	if server == "" {
		fmt.Fprintln(t.s.stderr, "cursor-agent-sim: mcp-tool: no MCP server to call")
		return
	}
	t.toolEvent("started", CallIDMCP, "mc_1", "mcpToolCall", obj{{"args", obj{{"name", server + "-" + MCPToolName},
		{"args", obj{{"query", "hello"}}}, {"toolCallId", CallIDMCP}, {"providerIdentifier", server}, {"toolName", MCPToolName}}}})
	t.toolEvent("completed", CallIDMCP, "mc_1", "mcpToolCall", obj{{"result", obj{{"success",
		obj{{"content", []obj{{{"type", "text"}, {"text", "1 result"}}}}, {"isError", false}}}}}})
}

// bigAlphabet is the text of the big scenarios: printable ASCII that needs
// no JSON escaping.
const bigAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789 "

// bigText returns n bytes of bigAlphabet.
func bigText(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = bigAlphabet[i%len(bigAlphabet)]
	}
	return string(b)
}

// bigStream writes EnvStreamBytes of assistant events as fast as the
// reader takes them, each text distinct (a sequence number first) so that
// no deduplication may drop one. The result is a short summary, to keep
// the benchmark about the stream.
func (t *turn) bigStream() int {
	total := t.s.size(EnvStreamBytes, DefaultStreamSize)
	chunk := max(t.s.size(EnvChunkBytes, DefaultChunkBytes), 16)
	filler := bigText(chunk)
	suffix := `"}]},"session_id":"` + t.session + `","timestamp_ms":`
	line := make([]byte, 0, len(assistantPrefix)+chunk+len(suffix)+32)
	w := t.w.w
	written, events := 0, 0
	for written < total {
		line = append(line[:0], assistantPrefix...)
		line = strconv.AppendInt(line, int64(events), 10)
		line = append(line, ':')
		line = append(line, filler[:max(chunk-(len(line)-len(assistantPrefix)), 0)]...)
		line = append(line, suffix...)
		line = strconv.AppendInt(line, nowMS(), 10)
		line = append(line, '}')
		line = append(line, t.w.eol...)
		if _, err := w.Write(line); err != nil {
			return 1
		}
		written += len(line)
		events++
	}
	if err := w.Flush(); err != nil {
		return 1
	}
	t.result(false, fmt.Sprintf("streamed %d assistant events, %d bytes", events, written), true)
	if t.w.err != nil {
		return 1
	}
	return 0
}
