package gemini

import (
	"slices"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// The Gemini CLI as cursorkit knows it.
const (
	// Name is the agent's name in cursorkit (run --agent gemini).
	Name = "gemini"
	// Provider is the model provider's id.
	Provider = "google"
	// Command is the bare name npm installs on PATH (bundle/gemini.js, run
	// by node; on Windows through npm's gemini.cmd shim).
	Command = "gemini"
	// EnvBinary names the gemini binary to use instead of the one on PATH.
	EnvBinary = "CURSORKIT_GEMINI_BIN"
	// InstallHint says how to install the CLI.
	InstallHint = "install the Gemini CLI with `npm install -g @google/gemini-cli` (Node.js 20 or newer)"
)

// Turn is one prompt turn of the Gemini CLI. Its Model is a model id (-m),
// checked with turn.CheckValue ("" keeps the CLI's configured one, whose
// default is "auto", its router); Resume is the session id (a UUID) an
// earlier turn's init event reported; Tools are by gemini's own names
// ("run_shell_command", "mcp_github_create_issue"), or "mcp" for every MCP
// tool. See Args for the flags of each mode.
type Turn = turn.Request

// Args returns the argv after the program that runs t, the prompt on
// stdin:
//
//	--output-format stream-json --skip-trust
//	  --approval-mode plan          (ModePlan, "")
//	  --approval-mode default       (ModeAsk)
//	  --approval-mode yolo          (ModeWrite)
//	  [--model ID] [--resume SESSION]
//	  -p ""
//
// -p "" selects gemini's headless mode explicitly (without it gemini decides
// by whether stdin and stdout are terminals) and adds nothing to the
// prompt: gemini reads stdin to its end and prepends it to -p's text, which
// is empty, so stdin alone is the prompt (packages/cli/src/gemini.tsx).
// --skip-trust is the analogue of cursor-agent's --trust: it trusts the
// working directory for this run only; without it a headless run in a
// folder the user's folder-trust setting does not trust exits 55.
//
// Why these approval modes (packages/cli/src/config/policy and the
// bundle's policies/*.toml): in plan mode gemini denies every tool but its
// read-only ones (and the writing of plan files under ~/.gemini/tmp); in
// default mode a headless run denies what would need a confirmation
// (replace, write_file, run_shell_command, web_fetch, activate_skill), so
// ask is read-only; auto_edit would still deny run_shell_command headless,
// so write is yolo, which approves every tool, and the decoder's allowlist
// is what stops the tools the mode does not allow.
//
// A Bridge adds nothing to argv: Gemini CLI reads MCP servers only from
// settings files, so the turn runs with a private home that holds the
// bridge (BridgeHome, which agents.Agent.Run calls). A plan turn with a
// Bridge is refused (checkBridge).
//
// An unknown mode, a bad tool name, and a model or session id that is
// longer than 256 bytes, starts with '-' or holds whitespace or control
// characters are failure.Input errors; so is a Resume that is not a
// session id: gemini's --resume also takes "latest" and a list index, which
// would resume some other session, so those are refused.
func Args(t Turn) ([]string, error) {
	mode, err := t.Mode.Resolve()
	if err != nil {
		return nil, err
	}
	for _, name := range t.Tools {
		// What gemini's tool names, MCP ones included, are made of.
		if err := turn.CheckName("tool name", name, 64, "_-.:"); err != nil {
			return nil, err
		}
	}
	if err := checkBridge(t); err != nil {
		return nil, err
	}
	args := []string{"--output-format", "stream-json", "--skip-trust", "--approval-mode", approvalMode(mode)}
	if t.Model != "" {
		if err := turn.CheckValue("model", t.Model); err != nil {
			return nil, err
		}
		args = append(args, "--model", t.Model)
	}
	if t.Resume != "" {
		if err := checkSessionID(t.Resume); err != nil {
			return nil, err
		}
		args = append(args, "--resume", t.Resume)
	}
	return append(args, "-p", ""), nil
}

// approvalMode is gemini's --approval-mode for a resolved mode.
func approvalMode(m turn.Mode) string {
	switch m {
	case turn.ModeAsk:
		return "default"
	case turn.ModeWrite:
		return "yolo"
	}
	return "plan"
}

// checkSessionID accepts what gemini's --resume resolves as a session id
// and nothing else. Gemini's SessionSelector.findSession matches the id
// first, then a positive decimal index into the project's sessions, and
// "latest" is the newest session: a value that is all digits or "latest"
// could resume a session nobody named, so both are refused. Session ids
// are UUIDs, and --session-id accepts ASCII letters, digits, '-' and '_'
// only: the same set is required here.
func checkSessionID(id string) error {
	if err := turn.CheckValue("resume session id", id); err != nil {
		return err
	}
	if id == "latest" {
		return failure.New(failure.Input, `resume session id "latest" is refused: gemini would resume its newest session, not a named one; pass the session id an earlier turn reported`)
	}
	digits := true
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return failure.New(failure.Input, "resume session id %s holds %s at byte %d; gemini session ids hold only letters, digits, '-' and '_'",
				turn.Quote(id, 64), turn.QuoteByte(c), i)
		}
		digits = digits && '0' <= c && c <= '9'
	}
	if digits {
		return failure.New(failure.Input, "resume session id %s is refused: gemini reads a number as an index into its session list, not as a session id; pass the session id an earlier turn reported",
			turn.Quote(id, 64))
	}
	return nil
}

// readOnlyTools are the tools plan and ask allow, by gemini 0.61.0's
// names (packages/core/src/tools/tool-names.ts): reading files and
// directories, searching them (grep_search, and search_file_content, its
// legacy alias, which a model may still call), and searching and fetching
// the web. The plan-mode tools are not among them: exit_plan_mode in a
// headless run switches the session to yolo.
func readOnlyTools() []string {
	return []string{"read_file", "read_many_files", "list_directory", "glob", "grep_search", "search_file_content",
		"google_web_search", "web_fetch"}
}

// writeTools are those write adds: editing and writing files, the shell,
// memory, the todo list, and the plan-mode switches (harmless in yolo).
func writeTools() []string {
	return []string{"write_file", "replace", "run_shell_command", "save_memory", "write_todos",
		"enter_plan_mode", "exit_plan_mode"}
}

// mcpAll in Turn.Tools allows every MCP tool.
const mcpAll = "mcp"

// mcpPrefix starts the name of every MCP tool: gemini names one
// "mcp_SERVER_TOOL" (generateValidName in packages/core/src/tools/mcp-tool.ts).
const mcpPrefix = "mcp_"

// allowlist is the set of tools a turn may use.
type allowlist struct {
	mode   string            // the mode as messages name it
	tools  []string          // sorted, distinct
	allMCP bool              // "mcp" was named: every mcp_ tool is allowed
	bridge *mcpbridge.Server // the turn's MCP tool bridge, nil when none
}

// newAllowlist returns the tools of mode plus extra, or a failure.Input
// error for an unknown mode or a bad tool name.
func newAllowlist(mode turn.Mode, extra []string) (allowlist, error) {
	mode, err := mode.Resolve()
	if err != nil {
		return allowlist{}, err
	}
	tools := readOnlyTools()
	if mode == turn.ModeWrite {
		tools = append(tools, writeTools()...)
	}
	a := allowlist{mode: string(mode)}
	for _, name := range extra {
		if err := turn.CheckName("tool name", name, 64, "_-.:"); err != nil {
			return allowlist{}, err
		}
		if name == mcpAll {
			a.allMCP = true
		}
		tools = append(tools, name)
	}
	slices.Sort(tools)
	a.tools = slices.Compact(tools)
	return a, nil
}

// check returns nil when the tool may run, else a failure.Policy error
// naming it. Names compare exactly; an MCP tool (mcp_...) is allowed when
// named exactly or when "mcp" was named; an empty name is never allowed.
// A tool of the bridge's server is the bridge's alone: allowed exactly
// when the bridge publishes it.
func (a allowlist) check(name string) *failure.Error {
	if name == "" {
		return failure.New(failure.Policy, "the agent called a tool that cannot be identified; the %s mode allows only: %s",
			a.mode, strings.Join(a.tools, ", "))
	}
	if _, onServer, published := bridged(a.bridge, name); onServer {
		if published {
			return nil
		}
		return failure.New(failure.Policy, "the agent called the tool %s, which the MCP bridge does not publish (it publishes: %s)",
			turn.Quote(name, 64), strings.Join(a.bridge.Tools, ", "))
	}
	if _, found := slices.BinarySearch(a.tools, name); found {
		return nil
	}
	if a.allMCP && strings.HasPrefix(name, mcpPrefix) {
		return nil
	}
	return failure.New(failure.Policy, "the agent called the tool %s, which the %s mode does not allow (allowed: %s)",
		turn.Quote(name, 64), a.mode, strings.Join(a.tools, ", "))
}

// Supervision defaults (TurnDefaults).
const (
	// defaultFirstLineTimeout: gemini prints its init event only after its
	// configuration is initialised, which connects to every configured MCP
	// server (each with its own timeout) and refreshes its credentials;
	// node's start and gemini's relaunch of itself take seconds more.
	defaultFirstLineTimeout = 60 * time.Second
	// defaultIdleTimeout: gemini retries a failed model call up to 10
	// times with a backoff from 5 s to 30 s (DEFAULT_RETRY_OPTIONS), about
	// four minutes, saying so only on stderr, and streams no thinking
	// events: stdout can be silent that long in a turn that still ends
	// with a verdict of its own (a quota or an auth error).
	defaultIdleTimeout = 300 * time.Second
)

// TurnDefaults returns the supervision defaults of a gemini turn: first
// line 60 s, inactivity 300 s (see the constants for why they are longer
// than cursor-agent's 30 s and 120 s), and the supervisor's default stop
// and exit graces.
func TurnDefaults() turn.Options {
	return turn.Defaults(defaultFirstLineTimeout, defaultIdleTimeout)
}
