package claude

import (
	"slices"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

const (
	// Name is the agent's name in cursorkit (run --agent claude).
	Name = "claude"
	// Provider is the model provider's id.
	Provider = "anthropic"
	// Command is the bare name npm installs on PATH.
	Command = "claude"
	// EnvBinary names the binary to use instead of Command on PATH.
	EnvBinary = "CURSORKIT_CLAUDE_BIN"
	// InstallHint says how to install the CLI.
	InstallHint = "Install Claude Code with `npm install -g @anthropic-ai/claude-code` (it puts claude on PATH), then log in with `claude` or set ANTHROPIC_API_KEY."
)

// Turn is one prompt turn of Claude Code. Its Model is passed as --model:
// an alias (sonnet, opus) or a full model name. Resume is the session id
// of an earlier turn (its init or result event's session_id), passed as
// --resume. Tools are by Claude Code's own names: a built-in tool
// ("WebFetch", "Task"), an MCP tool ("mcp__SERVER__TOOL") or every tool
// of one MCP server ("mcp__SERVER"), as Claude Code's permission rules
// name them; a name is 1 to 128 ASCII letters, digits, '_' and '-',
// starting with a letter: rules with a specifier ("Bash(git *)") are
// refused. See Args for the flags of each mode.
type Turn = turn.Request

// mcpPrefix starts the name of every MCP tool, mcpSeparator parts its
// server from its tool: mcp__SERVER__TOOL.
const (
	mcpPrefix    = "mcp__"
	mcpSeparator = "__"
)

// readOnlyTools are the tools every mode allows: reading and searching
// files. LS is gone from 2.1 builds (Glob and Grep are there, hidden from
// the default tool set but available through --tools); it is kept for
// older builds, which --tools ignores harmlessly when it does not exist.
func readOnlyTools() []string { return []string{"Read", "Grep", "Glob", "LS"} }

// planTools are the tools ModePlan adds: ExitPlanMode presents the plan
// (it changes nothing; --tools cannot name it, the CLI adds it in plan
// mode itself).
func planTools() []string { return []string{"ExitPlanMode"} }

// writeTools are the tools ModeWrite adds: editing files, running
// commands and the to-do list.
func writeTools() []string {
	return []string{"Edit", "MultiEdit", "Write", "NotebookEdit", "Bash", "TodoWrite"}
}

// approvedWriteTools are the ModeWrite tools that need an approval
// acceptEdits does not give: the commands. --allowedTools approves them.
func approvedWriteTools() []string { return []string{"Bash"} }

// Args returns the arguments, after the program, that run t with the
// prompt on stdin (claude -p without a positional prompt reads stdin):
//
//	-p --output-format stream-json --verbose
//	  --permission-mode plan        --tools Read,Grep,Glob,LS[,BUILTINS]   (ModePlan, "")
//	  --permission-mode default     --tools Read,Grep,Glob,LS[,BUILTINS]   (ModeAsk)
//	  --permission-mode acceptEdits --tools Read,Grep,Glob,LS,Edit,MultiEdit,Write,NotebookEdit,Bash,TodoWrite[,BUILTINS]
//	                                --allowedTools Bash[,TOOLS]             (ModeWrite)
//	  [--allowedTools TOOLS]        (ModePlan, ModeAsk: Tools not empty)
//	  [--model ID] [--resume SESSION]
//	  [--mcp-config FILE --strict-mcp-config]  (Bridge set)
//
// With a Bridge, its config file is the turn's only MCP configuration and
// each of its tools, as Claude Code names it (mcp__SERVER__TOOL), is
// approved with the TOOLS (bridgeArgs); the bridge must name an absolute
// config file and tools Claude Code can approve (failure.Input).
//
// BUILTINS are the names of Tools that are not MCP tools (--tools lists
// only built-in tools; it drops a name it does not know); TOOLS are all of
// Tools, approved so that a non-interactive turn, which cannot ask, runs
// them instead of having them denied. --verbose is required by
// stream-json in print mode. --dangerously-skip-permissions
// (bypassPermissions) is never used: Claude Code refuses it as root, and
// acceptEdits with Bash approved allows what ModeWrite means.
//
// An unknown mode, a bad tool name, and a model or session id that is
// longer than 256 bytes, starts with '-' or holds whitespace or control
// characters are failure.Input errors.
func Args(t Turn) ([]string, error) {
	mode, err := t.Mode.Resolve()
	if err != nil {
		return nil, err
	}
	for _, name := range t.Tools {
		if err := validToolName(name); err != nil {
			return nil, err
		}
	}
	var bridge, bridgeTools []string
	if t.Bridge != nil {
		if bridge, bridgeTools, err = bridgeArgs(t.Bridge); err != nil {
			return nil, err
		}
	}
	args := []string{"-p", "--output-format", "stream-json", "--verbose"}
	builtin := readOnlyTools()
	var approved []string
	switch mode {
	case turn.ModeWrite:
		args = append(args, "--permission-mode", "acceptEdits")
		builtin = append(builtin, writeTools()...)
		approved = approvedWriteTools()
	case turn.ModeAsk:
		args = append(args, "--permission-mode", "default")
	default:
		args = append(args, "--permission-mode", "plan")
	}
	for _, name := range t.Tools {
		if !strings.HasPrefix(name, mcpPrefix) && !slices.Contains(builtin, name) {
			builtin = append(builtin, name)
		}
		if !slices.Contains(approved, name) {
			approved = append(approved, name)
		}
	}
	for _, name := range bridgeTools {
		if !slices.Contains(approved, name) {
			approved = append(approved, name)
		}
	}
	// One comma-separated value each: both options are variadic, and no
	// positional argument follows that they could swallow.
	args = append(args, "--tools", strings.Join(builtin, ","))
	if len(approved) > 0 {
		args = append(args, "--allowedTools", strings.Join(approved, ","))
	}
	if t.Model != "" {
		if err := turn.CheckValue("model", t.Model); err != nil {
			return nil, err
		}
		args = append(args, "--model", t.Model)
	}
	if t.Resume != "" {
		if err := turn.CheckValue("resume session id", t.Resume); err != nil {
			return nil, err
		}
		args = append(args, "--resume", t.Resume)
	}
	if bridge != nil {
		args = append(args, bridge...)
	}
	return args, nil
}

// validToolName refuses a tool name Claude Code's tool names and
// permission rules do not have: empty, longer than 128 bytes, not
// starting with an ASCII letter, or holding anything but ASCII letters,
// digits, '_' and '-' (so never a comma, a space or a rule's
// parentheses).
func validToolName(name string) error {
	if err := turn.CheckName("tool name", name, 128, "_-"); err != nil {
		return err
	}
	if c := name[0]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return failure.New(failure.Input, "tool name %s starts with %s, not a letter", turn.Quote(name, 64), turn.QuoteByte(c))
	}
	if name == mcpPrefix[:3] || strings.HasPrefix(name, mcpPrefix) && len(name) == len(mcpPrefix) {
		return failure.New(failure.Input, "tool name %s names no MCP server (want mcp__SERVER or mcp__SERVER__TOOL)", turn.Quote(name, 64))
	}
	return nil
}

// Defaults of a Claude Code turn.
const (
	// The init event comes before the first model call (0.2 s here), after
	// the MCP servers started: Cursor's 30 s holds.
	defaultFirstLineTimeout = 30 * time.Second
	// Without --include-partial-messages an assistant message is printed
	// only once complete, and nothing is printed while a tool runs (Bash's
	// default timeout is 2 minutes): one message of Claude Code's default
	// 32000 output tokens takes minutes. 120 s would kill healthy turns.
	defaultIdleTimeout = 300 * time.Second
)

// TurnDefaults returns the supervision of a Claude Code turn: the first
// stdout line within 30 s, no silence over 300 s (the stream is silent
// while a message is generated and while a tool runs; a turn whose
// commands ask for longer timeouts needs more), no total bound, and the
// common stop and exit graces.
func TurnDefaults() turn.Options {
	return turn.Defaults(defaultFirstLineTimeout, defaultIdleTimeout)
}
