package codex

import (
	"slices"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/cliversion"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/turn"
)

const (
	// Name is the agent's name in cursorkit (run --agent codex).
	Name = "codex"
	// Provider is the model provider's id.
	Provider = "openai"
	// Command is the bare name npm installs on PATH.
	Command = "codex"
	// EnvBinary names the Codex binary to use instead of the one on PATH.
	EnvBinary = "CURSORKIT_CODEX_BIN"
	// InstallHint says how to install the Codex CLI.
	InstallHint = "install the OpenAI Codex CLI with `npm install -g @openai/codex` (it puts codex on PATH)"
)

// Tool names, as Turn.Tools and the events name them (see the package
// documentation, "Policy").
const (
	ToolShell      = "shell"       // a command_execution item
	ToolFileChange = "file_change" // a file_change item (apply_patch)
	ToolWebSearch  = "web_search"  // a web_search item
	ToolMCP        = "mcp"         // an mcp_tool_call item; "mcp" in Tools allows every server
	ToolCollab     = "collab"      // a collab_tool_call item (sub-agents)

	// mcpPrefix followed by a server name allows that server's MCP tools.
	mcpPrefix = "mcp:"
)

// Turn is one prompt turn of Codex. Its Model is checked with
// turn.CheckValue; Resume is a thread id an earlier turn reported; Tools
// are among shell, file_change, web_search, collab, mcp and mcp:SERVER.
type Turn = turn.Request

// Args returns the argv after the program that runs t, with the prompt
// read from stdin (the final "-"):
//
//	exec --json --color never --sandbox MODE [--model M] -
//	exec --json --color never --sandbox MODE [--model M] resume THREAD_ID -
//
// With a Bridge, its -c options (bridgeArgs) come before the final "-" or
// the resume subcommand: the MCP server of the turn, its tools approved.
//
// plan and ask run under --sandbox read-only, write under --sandbox
// workspace-write. Exec never asks for approval (it sets the approval
// policy "never" itself), so no approval flag is passed. The options come
// before the resume subcommand: --sandbox and --color belong to exec
// only. --skip-git-repo-check is never passed: outside a git repository
// Codex refuses to run, which is a failure.Setup. An unknown mode, a model
// or thread id turn.CheckValue refuses and an unknown tool name are
// failure.Input errors.
func Args(t Turn) ([]string, error) {
	mode, err := t.Mode.Resolve()
	if err != nil {
		return nil, err
	}
	if _, err := newAllowlist(mode, t.Tools); err != nil {
		return nil, err
	}
	args := []string{"exec", "--json", "--color", "never", "--sandbox", sandboxOf(mode)}
	if t.Model != "" {
		if err := turn.CheckValue("model", t.Model); err != nil {
			return nil, err
		}
		args = append(args, "--model", t.Model)
	}
	if t.Bridge != nil {
		bridge, err := bridgeArgs(t.Bridge)
		if err != nil {
			return nil, err
		}
		args = append(args, bridge...)
	}
	if t.Resume != "" {
		if err := turn.CheckValue("session id", t.Resume); err != nil {
			return nil, err
		}
		args = append(args, "resume", t.Resume)
	}
	return append(args, "-"), nil
}

// sandboxOf is the --sandbox value of a resolved mode.
func sandboxOf(m turn.Mode) string {
	if m == turn.ModeWrite {
		return "workspace-write"
	}
	return "read-only"
}

// modeTools returns the tools a resolved mode allows. Codex has no tool
// that only reads files: it reads with shell commands, so shell is allowed
// in every mode and the read-only sandbox Args passes for plan and ask is
// what keeps those commands from writing.
func modeTools(m turn.Mode) []string {
	if m == turn.ModeWrite {
		return []string{ToolShell, ToolWebSearch, ToolFileChange}
	}
	return []string{ToolShell, ToolWebSearch}
}

// allowlist is the tools one turn allows.
type allowlist struct {
	mode       turn.Mode
	tools      []string
	allMCP     bool
	mcpServers []string
}

// newAllowlist returns the tools of mode plus extra, or a failure.Input
// error naming a tool that Codex does not have.
func newAllowlist(mode turn.Mode, extra []string) (allowlist, error) {
	a := allowlist{mode: mode, tools: modeTools(mode)}
	for _, name := range extra {
		switch {
		case name == ToolMCP:
			a.allMCP = true
		case strings.HasPrefix(name, mcpPrefix):
			server := name[len(mcpPrefix):]
			if err := turn.CheckValue("MCP server name", server); err != nil {
				return allowlist{}, err
			}
			a.mcpServers = append(a.mcpServers, server)
		case name == ToolShell || name == ToolFileChange || name == ToolWebSearch || name == ToolCollab:
			if !slices.Contains(a.tools, name) {
				a.tools = append(a.tools, name)
			}
		default:
			return allowlist{}, failure.New(failure.Input, "unknown Codex tool %s (want shell, file_change, web_search, collab, mcp or mcp:SERVER)", turn.Quote(name, 40))
		}
	}
	return a, nil
}

// check returns nil when the tool name (and, for mcp, server) may run,
// else a failure.Policy error.
func (a allowlist) check(name, server string) *failure.Error {
	if name == ToolMCP {
		if a.allMCP || slices.Contains(a.mcpServers, server) {
			return nil
		}
		return failure.New(failure.Policy, "the agent called a tool of the MCP server %s, which the turn does not allow (allow it with the tool mcp:SERVER, or every server with mcp)", turn.Quote(server, 64))
	}
	if slices.Contains(a.tools, name) {
		return nil
	}
	return failure.New(failure.Policy, "the agent called the tool %s, which the %s mode does not allow (allowed: %s)", turn.Quote(name, 40), a.mode, strings.Join(a.tools, ", "))
}

// Defaults of a Codex turn: cursor's. Codex prints thread.started before
// its first model call, so the first line comes as quickly as Cursor's.
const (
	defaultFirstLineTimeout = 30 * time.Second
	defaultIdleTimeout      = 120 * time.Second
)

// TurnDefaults returns the supervision of a Codex turn: the first stdout
// line within 30 s, no silence over 120 s, no total bound, the supervisor's
// default stop and exit graces.
func TurnDefaults() turn.Options {
	return turn.Defaults(defaultFirstLineTimeout, defaultIdleTimeout)
}

// ParseVersion reads the output of `codex --version` ("codex-cli 0.171.0",
// maybe after warning lines such as the PATH-alias WARNING Codex prints)
// and returns the version ("0.171.0"), or a failure.Protocol error with a
// bounded excerpt of the output.
func ParseVersion(output string) (string, error) {
	for line := range strings.Lines(output) {
		// clap's "NAME VERSION": "codex-cli 0.171.0", or "codex 0.1.0"
		// from the CLI's first builds.
		if f := strings.Fields(line); len(f) == 2 && (f[0] == "codex-cli" || f[0] == "codex") {
			if v := cliversion.Trim(f[1]); cliversion.Valid(v) {
				return v, nil
			}
		}
	}
	return "", failure.New(failure.Protocol, "codex --version printed no version: %s", turn.Quote(detail.Bound(output), 120))
}
