package agentsim

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Environment variables the simulator reads.
const (
	// EnvMain=1 makes a test binary that calls testkit.RunIfChild run as
	// the simulator. Workers always get it.
	EnvMain = "CURSORKIT_SIM_MAIN"
	// EnvScenario holds a comma-separated list of Scenario* names.
	EnvScenario = "CURSORKIT_SIM_SCENARIO"
	// EnvVersion replaces the build `--version` prints (DefaultVersion).
	EnvVersion = "CURSORKIT_SIM_VERSION"
	// EnvDelay is how long the slow-* scenarios sleep (Go duration, default 30s).
	EnvDelay = "CURSORKIT_SIM_DELAY"
	// EnvEventDelay pauses between stream events (Go duration, default 0).
	EnvEventDelay = "CURSORKIT_SIM_EVENT_DELAY"
	// EnvLinger bounds how long the lingering scenarios stay alive after
	// `result`, workers included (Go duration; default: until killed).
	EnvLinger = "CURSORKIT_SIM_LINGER"
	// EnvHangLimit caps every "until killed" sleep (Go duration, default 10m).
	EnvHangLimit = "CURSORKIT_SIM_HANG_LIMIT"
	// EnvLineBytes is the big-line scenario's text size (default 10 MiB).
	EnvLineBytes = "CURSORKIT_SIM_LINE_BYTES"
	// EnvStreamBytes is how many bytes of assistant events big-stream
	// emits (default 100 MiB), EnvChunkBytes the text of each (1 KiB).
	EnvStreamBytes = "CURSORKIT_SIM_STREAM_BYTES"
	EnvChunkBytes  = "CURSORKIT_SIM_CHUNK_BYTES"
	// EnvRecord names a file to which each invocation appends one JSON line
	// (a Record: argv, environment, stdin, cwd, pid).
	EnvRecord = "CURSORKIT_SIM_RECORD"
	// EnvPIDDir names an existing directory where every simulator process
	// leaves a file named by its pid, holding its role, so tests can check
	// that none survives.
	EnvPIDDir = "CURSORKIT_SIM_PID_DIR"
	// EnvNetworkError is the Node.js network failure the network-error
	// scenarios print (default DefaultNetworkError).
	EnvNetworkError = "CURSORKIT_SIM_NETWORK_ERROR"
	// EnvMCPServer names the MCP server the mcp-tool scenario calls
	// (default: the first of the workspace's .cursor/mcp.json).
	EnvMCPServer = "CURSORKIT_SIM_MCP_SERVER"
	// EnvMCPTool names the tool the mcp-call scenario calls (default: the
	// first the server lists), EnvMCPArgs its input, a JSON object
	// (default DefaultMCPArgs).
	EnvMCPTool = "CURSORKIT_SIM_MCP_TOOL"
	EnvMCPArgs = "CURSORKIT_SIM_MCP_ARGS"
	// EnvMCPLog names a file to which the mcp-call scenario appends one
	// JSON line (an MCPRun) per server it ran, once it has stopped it.
	EnvMCPLog = "CURSORKIT_SIM_MCP_LOG"
	// EnvMarker is in every worker's environment and argv
	// (`--marker=VALUE`), so tests can find survivors in the process table
	// (default DefaultMarker).
	EnvMarker = "CURSORKIT_SIM_MARKER"
)

// Scenario names for EnvScenario. Without one each command behaves
// normally: a current build, an authenticated user, the default catalog
// and the normal turn.
const (
	// --version
	ScenarioSlowVersion           = "slow-version"            // sleeps EnvDelay (with a worker grandchild), then prints the build
	ScenarioVersionError          = "version-error"           // "Error: ..." on stderr, exit 1
	ScenarioVersionKeychainLocked = "version-keychain-locked" // "Error: Your macOS login keychain is locked." and "Run security unlock-keychain and try again." on stderr, exit 1
	ScenarioVersionIDEMissing     = "version-ide-missing"     // "Error: No Cursor IDE installation found. Use 'cursor agent' or 'agent' to run the agent." on stderr, exit 1
	ScenarioVersionDaemon         = "version-daemon"          // leaves a double-forked worker in its own session, without CURSORKIT_LAUNCH_ID, lingering; then prints the build, exit 0

	// status / whoami (keychain-locked, ide-missing and network-error also
	// affect models and turns)
	ScenarioUnauthenticated        = "unauthenticated"           // isAuthenticated false, exit 0
	ScenarioKeychainLocked         = "keychain-locked"           // "Error: Your macOS login keychain is locked." on stderr, exit 1; models and turns too
	ScenarioIDEMissing             = "ide-missing"               // "Error: No Cursor IDE installation found." on stderr, exit 1; models and turns too
	ScenarioNetworkError           = "network-error"             // "Error: " and EnvNetworkError on stderr, exit 1; models too; a turn ends in an error result "Connection error: …", exit 1
	ScenarioStatusNoise            = "status-noise"              // BOM, ANSI and text lines around the JSON
	ScenarioStatusMalformed        = "status-malformed"          // truncated JSON, exit 0
	ScenarioStatusEmpty            = "status-empty"              // no output, exit 0
	ScenarioStatusMissingField     = "status-missing-field"      // JSON without isAuthenticated, exit 0
	ScenarioStatusError            = "status-error"              // "Error: getaddrinfo ENOTFOUND api2.cursor.sh" (a DNS failure) on stderr, exit 1
	ScenarioStatusLoggedOutOffline = "status-logged-out-offline" // isAuthenticated false on stdout and EnvNetworkError on stderr, exit 0
	ScenarioSlowStatus             = "slow-status"               // sleeps EnvDelay first

	// models
	ScenarioModelsANSI  = "models-ansi"  // ANSI codes, spinner line, CRLF, a duplicate id
	ScenarioModelsEmpty = "models-empty" // "No models available for this account."
	ScenarioModelsError = "models-error" // error on stderr, exit 1
	ScenarioSlowModels  = "slow-models"  // sleeps EnvDelay first

	// --print --output-format stream-json
	ScenarioNormal              = "normal"                // init, user, thinking, assistant, three tool calls, assistant, result
	ScenarioDuplicateAssistant  = "duplicate-assistant"   // first text again without model_call_id at the end of the turn
	ScenarioHangBeforeOutput    = "hang-before-output"    // reads the prompt, then prints nothing until killed
	ScenarioHangMidStream       = "hang-mid-stream"       // init, user, one assistant event, then nothing until killed
	ScenarioLinger              = "linger"                // after result: stays alive with a worker holding stdout
	ScenarioOrphanStdout        = "orphan-stdout"         // after result: exits 0 while a worker holds stdout until killed
	ScenarioSetsidEscape        = "setsid-escape"         // a worker in its own session (Windows: tries job breakaway) holds stdout; lingers
	ScenarioDoubleFork          = "double-fork"           // an intermediate starts a worker and exits; the worker holds stdout; lingers
	ScenarioNoResult            = "no-result"             // ends without a result event, exit 0
	ScenarioMalformedLine       = "malformed-line"        // a truncated JSON line after user; the turn then completes
	ScenarioBanner              = "banner"                // a non-JSON banner line before init
	ScenarioUnknownEvent        = "unknown-event"         // an event of an unknown type after init
	ScenarioBigLine             = "big-line"              // one assistant event of EnvLineBytes (10 MiB) text
	ScenarioCRLF                = "crlf"                  // every line ends in \r\n
	ScenarioNoFinalNewline      = "no-final-newline"      // the result line has no trailing newline
	ScenarioDisallowedTool      = "disallowed-tool"       // starts a worker, then a shellToolCall (mcpToolCall in a write turn: --force, or --sandbox enabled without --mode), then hangs
	ScenarioErrorResult         = "error-result"          // result subtype error, is_error true, exit 1
	ScenarioUsageLimit          = "usage-limit"           // error result "You've hit your usage limit…" and the same on stderr, exit 1
	ScenarioUsageLimitStderr    = "usage-limit-stderr"    // no stream at all: the usage-limit text on stderr, exit 1
	ScenarioRateLimited         = "rate-limited"          // error result about a rate limit, exit 1
	ScenarioAuthError           = "auth-error"            // error result "Authentication required…", exit 1
	ScenarioNetworkErrorStderr  = "network-error-stderr"  // no stream at all: "Error: Connection error: " and EnvNetworkError on stderr, exit 1
	ScenarioBigStream           = "big-stream"            // EnvStreamBytes of distinct assistant events, fast
	ScenarioCrash               = "crash"                 // init, user, then "panic"-like stderr and exit 2 without a result
	ScenarioMissingInit         = "missing-init"          // the turn without its system/init event
	ScenarioNoUsage             = "no-usage"              // the result event has no usage field
	ScenarioEventAfterResult    = "event-after-result"    // an assistant event follows the result
	ScenarioSandboxWriteOutside = "sandbox-write-outside" // two editToolCalls, inside and outside the workspace; with --sandbox enabled $HOME/.cursor/sandbox.json decides each result
	ScenarioSandboxUnavailable  = "sandbox-unavailable"   // with --sandbox enabled: SandboxUnavailableText on stderr, exit 1, no stream; otherwise the normal turn
	ScenarioMCPTool             = "mcp-tool"              // with --approve-mcps: the normal turn with an mcpToolCall (MCPToolName of EnvMCPServer, else of the first server of the workspace's .cursor/mcp.json) before its read; the completed event carries only the result, as Cursor's does. Without --approve-mcps, or with no server, the normal turn
	ScenarioMCPCall             = "mcp-call"              // with --approve-mcps: the normal turn with a real MCP call before its read: the server EnvMCPServer names (else the first) of the workspace's .cursor/mcp.json started with its command, args and env, spoken to over stdio (tools/list, then tools/call of EnvMCPTool, else the first tool, with EnvMCPArgs), its answer in the completed mcpToolCall; the server stopped when the turn ends, the run logged to EnvMCPLog. Without --approve-mcps the normal turn; what prevents the call goes to stderr and the turn goes on

	// review replies (review.go): a read tool call, then the text as one
	// assistant event and as the result
	ScenarioReviewJSON        = "review-json"         // ReviewVerdictJSON alone: request_changes with two findings
	ScenarioReviewProseJSON   = "review-prose-json"   // ReviewProseJSONText: prose, a ```json fenced verdict, prose
	ScenarioReviewInvalidJSON = "review-invalid-json" // ReviewInvalidJSONText: an object that parses but has verdict "maybe"
	ScenarioReviewNoJSON      = "review-no-json"      // ReviewNoJSONText: prose only

	// every command, and workers
	ScenarioIgnoreSIGTERM = "ignore-sigterm" // POSIX: the simulator and its workers ignore SIGTERM
)

// Defaults for the knobs above.
const (
	DefaultVersion    = "2026.10.15-a1b2c3d"
	DefaultMarker     = "cursorkit-sim"
	DefaultEmail      = "dev@example.com"
	DefaultModelID    = "sonnet-4.5"
	DefaultLineBytes  = 10 << 20
	DefaultStreamSize = 100 << 20
	DefaultChunkBytes = 1 << 10
	// DefaultNetworkError is Node.js's DNS failure for Cursor's API host.
	DefaultNetworkError = "getaddrinfo ENOTFOUND api2.cursor.sh"
)

// The Cursor CLI's own messages for its blocked states
// (docs/contract.md, "Agent messages").
const (
	KeychainLockedText = "Error: Your macOS login keychain is locked.\nRun security unlock-keychain and try again."
	IDEMissingText     = "Error: No Cursor IDE installation found. Use 'cursor agent' or 'agent' to run the agent."
	// SandboxUnavailableText is HYPOTHETICAL: Cursor documents no message
	// for a sandbox it cannot create (docs/notes/research.md, "Cursor
	// CLI: the task profile"). It holds what cursor.Diagnose matches,
	// "sandbox unavailable".
	SandboxUnavailableText = "Error: Sandbox unavailable: could not create the terminal sandbox (Linux needs Landlock ABI v3 and unprivileged user namespaces). Refusing to run without it."
)

// Texts of the normal turn, so tests can compare what they decoded.
const (
	TextBeforeTool = "I'll read the README first.\n\n"
	TextAfterTool  = "The README says hello."
	// TextResult is the result event's full text: what the agent said, once.
	TextResult = TextBeforeTool + TextAfterTool
	// CallIDRead is the opaque call_id of the normal turn's read tool call;
	// it contains a newline on purpose.
	CallIDRead = "toolu_01\nread"
	// MCPToolName and CallIDMCP are the mcp-tool scenario's.
	MCPToolName = "search"
	CallIDMCP   = "toolu_mcp_1"
	// UsageLimitText starts the usage-limit scenarios' message.
	UsageLimitText = "You've hit your usage limit"
)

// Scenario returns the environment entry that selects the given scenarios.
func Scenario(names ...string) string {
	return EnvScenario + "=" + strings.Join(names, ",")
}

// Workers are re-executions of the simulator with one of these first
// arguments.
const (
	argWorker = "__sim-worker" // holds the inherited stdout and sleeps
	argSpawn  = "__sim-spawn"  // starts a worker and exits at once (double fork)
)

// sim is one invocation's configuration.
type sim struct {
	args      []string
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	getenv    func(string) string
	scenarios map[string]bool
	inv       invocation // the parsed command line, once parsed
}

// Main runs the simulator with args (without the program name), as the
// real cursor-agent would, and returns the exit code. stdout and stderr
// should be *os.File for the scenarios that start workers, which inherit
// that very stdout; with other writers they run detached from it.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	s := &sim{args: args, stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv,
		scenarios: parseScenarios(getenv(EnvScenario))}
	if s.has(ScenarioIgnoreSIGTERM) {
		ignoreSIGTERM()
	}
	if len(args) > 0 {
		switch args[0] {
		case argWorker:
			return s.worker(args[1:])
		case argSpawn:
			return s.spawnIntermediate(args[1:])
		}
	}
	if s.replays() {
		return s.replay(getenv(EnvReplay))
	}
	s.notePID("main")
	inv, err := parseArgs(args)
	s.inv = inv
	if err != nil || inv.command != cmdPrint {
		s.record("") // a print turn records its stdin
	}
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "error: %v\n", err)
		return 1
	case inv.command == cmdVersion:
		return s.version()
	case inv.command == cmdStatus:
		return s.status(inv)
	case inv.command == cmdModels:
		return s.models()
	}
	return s.print(inv)
}

func parseScenarios(v string) map[string]bool {
	m := map[string]bool{}
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			m[name] = true
		}
	}
	return m
}

func (s *sim) has(name string) bool { return s.scenarios[name] }

func (s *sim) envOr(name, def string) string {
	if v := s.getenv(name); v != "" {
		return v
	}
	return def
}

func (s *sim) duration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s.getenv(name)); err == nil && d >= 0 {
		return d
	}
	return def
}

func (s *sim) size(name string, def int) int {
	if n, err := strconv.Atoi(s.getenv(name)); err == nil && n >= 0 {
		return n
	}
	return def
}

func (s *sim) hangLimit() time.Duration { return s.duration(EnvHangLimit, 10*time.Minute) }

// lingerTime is how long lingering processes stay after result.
func (s *sim) lingerTime() time.Duration { return s.duration(EnvLinger, s.hangLimit()) }

func (s *sim) marker() string { return s.envOr(EnvMarker, DefaultMarker) }

// hang blocks until the process is killed or the hang limit passes.
func (s *sim) hang() int {
	time.Sleep(s.hangLimit())
	fmt.Fprintln(s.stderr, "cursor-agent-sim: hang limit reached, nobody killed me")
	return 99
}

// networkError is the network failure the network-error scenarios print.
func (s *sim) networkError() string { return s.envOr(EnvNetworkError, DefaultNetworkError) }

func (s *sim) version() int {
	var failed string
	switch {
	case s.has(ScenarioVersionError):
		failed = "Error: Cannot find module '../build/agent-core.js'"
	case s.has(ScenarioVersionKeychainLocked):
		failed = KeychainLockedText
	case s.has(ScenarioVersionIDEMissing):
		failed = IDEMissingText
	}
	if failed != "" {
		fmt.Fprintln(s.stderr, failed)
		return 1
	}
	if s.has(ScenarioVersionDaemon) {
		if err := s.startWorker("version-daemon", s.hangLimit(), spawnDaemon); err != nil {
			fmt.Fprintf(s.stderr, "cursor-agent-sim: daemon: %v\n", err)
		}
	}
	if s.has(ScenarioSlowVersion) {
		delay := s.duration(EnvDelay, 30*time.Second)
		if err := s.startWorker("slow-version", delay, spawnPlain); err != nil {
			fmt.Fprintf(s.stderr, "cursor-agent-sim: worker: %v\n", err)
		}
		time.Sleep(delay)
	}
	fmt.Fprintln(s.stdout, s.envOr(EnvVersion, DefaultVersion))
	return 0
}

const (
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
	ansiReset = "\x1b[0m"
	ansiClear = "\x1b[2K\r"
)

func (s *sim) status(inv invocation) int {
	if s.has(ScenarioSlowStatus) {
		time.Sleep(s.duration(EnvDelay, 30*time.Second))
	}
	if s.blocked() {
		return 1
	}
	switch {
	case s.has(ScenarioNetworkError):
		fmt.Fprintln(s.stderr, "Error: "+s.networkError())
		return 1
	case s.has(ScenarioStatusError):
		fmt.Fprintln(s.stderr, "Error: "+DefaultNetworkError)
		return 1
	case s.has(ScenarioStatusEmpty):
		return 0
	case s.has(ScenarioStatusLoggedOutOffline):
		fmt.Fprintln(s.stderr, "Warning: could not refresh the session: "+s.networkError())
	}
	authed := !s.has(ScenarioUnauthenticated) && !s.has(ScenarioStatusLoggedOutOffline)
	if !inv.jsonFormat {
		if authed {
			fmt.Fprintf(s.stdout, "\n ✓ Logged in as %s\n\n", DefaultEmail)
		} else {
			fmt.Fprintln(s.stdout, "\n Not logged in\n\n Run 'cursor-agent login' to authenticate.")
		}
		return 0
	}
	var doc string
	switch {
	case s.has(ScenarioStatusMalformed):
		doc = `{"status":"authenticated","isAuthenticated":tr`
	case s.has(ScenarioStatusMissingField):
		doc = `{"status":"authenticated","hasAccessToken":true}`
	case authed:
		doc = `{"status":"authenticated","isAuthenticated":true,"hasAccessToken":true,"userInfo":{"email":"` + DefaultEmail + `"}}`
	default:
		doc = `{"status":"unauthenticated","isAuthenticated":false,"hasAccessToken":false}`
	}
	if s.has(ScenarioStatusNoise) {
		fmt.Fprint(s.stdout, "\ufeff"+ansiDim+"Checking authentication…"+ansiReset+"\n"+doc+"\n"+ansiDim+"done"+ansiReset+"\n")
		return 0
	}
	fmt.Fprintln(s.stdout, doc)
	return 0
}

// blocked prints the keychain-locked or ide-missing scenario's message,
// as every command of the real CLI does (it then exits 1), and reports
// whether it did.
func (s *sim) blocked() bool {
	switch {
	case s.has(ScenarioKeychainLocked):
		fmt.Fprintln(s.stderr, "Error: Your macOS login keychain is locked.")
	case s.has(ScenarioIDEMissing):
		fmt.Fprintln(s.stderr, "Error: No Cursor IDE installation found.")
	default:
		return false
	}
	return true
}

// Model is one entry of the simulator's catalog.
type Model struct {
	ID, Label        string
	Current, Default bool
}

// Models returns the catalog `models` prints, in order: effort variants,
// a -fast family, a model without variants, the current and default
// markers.
func Models() []Model {
	return []Model{
		{ID: "auto", Label: "Auto"},
		{ID: "composer-1", Label: "Composer 1"},
		{ID: "gpt-5.1-codex-low", Label: "GPT-5.1 Codex Low"},
		{ID: "gpt-5.1-codex", Label: "GPT-5.1 Codex"},
		{ID: "gpt-5.1-codex-high", Label: "GPT-5.1 Codex High"},
		{ID: "gpt-5.1-codex-extra-high", Label: "GPT-5.1 Codex Extra High"},
		{ID: "gpt-5.1-codex-fast", Label: "GPT-5.1 Codex Fast"},
		{ID: "gpt-5.1-codex-high-fast", Label: "GPT-5.1 Codex High Fast"},
		{ID: DefaultModelID, Label: "Claude 4.5 Sonnet", Current: true},
		{ID: "sonnet-4.5-thinking", Label: "Claude 4.5 Sonnet (Thinking)", Default: true},
		{ID: "opus-4.1", Label: "Claude 4.1 Opus"},
		{ID: "grok", Label: "Grok"},
	}
}

func (m Model) line() string {
	line := m.ID + " - " + m.Label
	switch {
	case m.Current && m.Default:
		line += " (current, default)"
	case m.Current:
		line += " (current)"
	case m.Default:
		line += " (default)"
	}
	return line
}

func (s *sim) models() int {
	if s.has(ScenarioSlowModels) {
		time.Sleep(s.duration(EnvDelay, 30*time.Second))
	}
	if s.blocked() {
		return 1
	}
	if s.has(ScenarioNetworkError) {
		fmt.Fprintln(s.stderr, "Error: Failed to fetch models: "+s.networkError())
		return 1
	}
	if s.has(ScenarioModelsError) {
		fmt.Fprintln(s.stderr, "Error: Failed to fetch models: 503 Service Unavailable")
		return 1
	}
	if s.has(ScenarioModelsEmpty) {
		fmt.Fprintln(s.stdout, "No models available for this account.")
		return 0
	}
	var b strings.Builder
	if s.has(ScenarioModelsANSI) {
		b.WriteString("⠋ Loading models…\r\n" + ansiClear)
		b.WriteString(ansiBold + "Available models" + ansiReset + "\r\n\r\n")
		for i, m := range Models() {
			b.WriteString(ansiDim + m.line() + ansiReset + "\r\n")
			if i == 1 { // a duplicate id: the first one wins
				b.WriteString(Models()[0].ID + " - Auto (duplicate)\r\n")
			}
		}
		b.WriteString("\r\n" + ansiDim + "Tip: use --model <id> to switch." + ansiReset + "\r\n")
	} else {
		b.WriteString("Available models\n\n")
		for _, m := range Models() {
			b.WriteString(m.line() + "\n")
		}
		b.WriteString("\nTip: use --model <id> to switch.\n")
	}
	io.WriteString(s.stdout, b.String())
	return 0
}

// modelLabel is the display name the init event reports for id.
func modelLabel(id string) string {
	for _, m := range Models() {
		if m.ID == id {
			return m.Label
		}
	}
	return id
}

// osGetwd is os.Getwd, reported as the init event's cwd.
func osGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}
