package cursor

import (
	"bytes"
	"encoding/json/jsontext"
	"slices"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// Mode is how much the agent may do in a turn (turn.Mode). It decides
// both the agent's flags (Args) and the tools the Decoder lets it use:
// ModePlan is `--mode plan`, ModeAsk `--mode ask`, ModeWrite `--force` with
// the tools that change files and run commands allowed. The zero Mode is
// ModePlan.
type Mode = turn.Mode

// The modes (agent's).
const (
	ModePlan  = turn.ModePlan
	ModeAsk   = turn.ModeAsk
	ModeWrite = turn.ModeWrite
)

// ParseMode returns the Mode named s (turn.ParseMode).
func ParseMode(s string) (Mode, error) { return turn.ParseMode(s) }

// Turn is what one prompt turn asks of the agent. The prompt travels on
// the agent's stdin only, never in its argv.
type Turn struct {
	// Prompt is what the agent is asked. Neither Args nor the Decoder
	// reads it; it is never quoted in an error.
	Prompt string
	Mode   Mode
	// Model is a resolved catalog id; "" keeps the agent's configured model.
	Model string
	// Resume is the session id of an earlier turn to continue; "" starts
	// a new session.
	Resume string
	// Tools are tools allowed besides the mode's, by the name Cursor gives
	// them ("mcp", "getMcpTools", ...): ASCII letters, digits, '_' and
	// '-', 1 to 64 of them.
	Tools []string
	// MCPServers are the keys of MCP servers (in the workspace's
	// .cursor/mcp.json or the user's ~/.cursor/mcp.json) whose tools the
	// turn may call: Args passes --approve-mcps when it is not empty, and
	// the Decoder allows an mcp tool call only when the server its event
	// names (args.providerIdentifier) is one of them. Keys are ASCII
	// letters, digits, '-' and '_', 1 to 128 of them. Naming "mcp" in
	// Tools instead allows every server's tools, as before.
	MCPServers []string
	// PartialOutput asks for --stream-partial-output: text arrives as
	// deltas, and the Decoder drops the recaps that come with them.
	PartialOutput bool
	// Sandboxed selects the task profile (docs/contract.md, "The task
	// profile"): Cursor's sandbox, no project configuration, one turn, no
	// auto-update and an explicit allowlist (SandboxedTools), sent to
	// Cursor and enforced by the Decoder. Only ModeAsk (consult, review)
	// and ModeWrite (write) may be sandboxed, and Tools must be empty.
	Sandboxed bool
}

// Args returns the arguments, after the program, that run t:
//
//	--print --output-format stream-json [--stream-partial-output]
//	  --force --trust               (ModeWrite)
//	  --mode plan --trust           (ModePlan, ""; never --force)
//	  --mode ask --trust            (ModeAsk)
//	  [--approve-mcps]              (MCPServers not empty)
//	  [--model ID] [--resume SESSION]
//
// and, for a Sandboxed turn, never --force:
//
//	--print --output-format stream-json [--stream-partial-output]
//	  --sandbox enabled --disable-project-configs --single-turn
//	  --disable-auto-update --allowed-tools LIST
//	  [--mode ask] --trust          (--mode ask for ModeAsk)
//	  [--model ID] [--resume SESSION]
//
// LIST is SandboxedTools(t.Mode) joined with commas. A Sandboxed turn in
// another mode than ModeAsk or ModeWrite, or with Tools or MCPServers, is
// a failure.Input error: the task profile never approves MCP servers.
//
// An unknown mode, a tool name NewDecoder would refuse, a model or session
// id that is longer than 256 bytes, starts with '-' or holds whitespace or
// control characters, and a model of "auto" or "default" (which route to a
// model no event reports) are failure.Input errors.
func Args(t Turn) ([]string, error) {
	mode, err := t.Mode.Resolve()
	if err != nil {
		return nil, err
	}
	if t.Sandboxed {
		if err := checkSandboxed(mode, t.Tools); err != nil {
			return nil, err
		}
		if err := checkSandboxedMCP(t.MCPServers); err != nil {
			return nil, err
		}
	}
	for _, name := range t.Tools {
		if err := validToolName(name); err != nil {
			return nil, err
		}
	}
	for _, key := range t.MCPServers {
		if err := ValidMCPServerKey(key); err != nil {
			return nil, err
		}
	}
	args := []string{"--print", "--output-format", "stream-json"}
	if t.PartialOutput {
		args = append(args, "--stream-partial-output")
	}
	switch {
	case t.Sandboxed:
		args = append(args, "--sandbox", "enabled", "--disable-project-configs", "--single-turn",
			"--disable-auto-update", "--allowed-tools", strings.Join(SandboxedTools(mode), ","))
		if mode == ModeAsk {
			args = append(args, "--mode", "ask")
		}
		args = append(args, "--trust")
	case mode == ModeWrite:
		args = append(args, "--force", "--trust")
	case mode == ModeAsk:
		args = append(args, "--mode", "ask", "--trust")
	default:
		args = append(args, "--mode", "plan", "--trust")
	}
	if len(t.MCPServers) > 0 {
		args = append(args, "--approve-mcps")
	}
	if t.Model != "" {
		if err := turn.CheckValue("model", t.Model); err != nil {
			return nil, err
		}
		if m := strings.ToLower(t.Model); m == "auto" || m == "default" {
			return nil, failure.New(failure.Input, "model %s is refused: it routes to a model no event reports; name a catalog model", boundedQuote(t.Model, 64))
		}
		args = append(args, "--model", t.Model)
	}
	if t.Resume != "" {
		if err := turn.CheckValue("resume session id", t.Resume); err != nil {
			return nil, err
		}
		args = append(args, "--resume", t.Resume)
	}
	return args, nil
}

// readOnlyTools are the tools every mode allows; writeTools are those
// ModeWrite adds. MCP tools (mcp, getMcpTools, ...) and every other tool
// are allowed only when the caller names them in Turn.Tools.
func readOnlyTools() []string { return []string{"read", "grep", "glob", "ls"} }
func writeTools() []string {
	return []string{"write", "edit", "delete", "shell", "updateTodos", "readTodos"}
}

// allowlist is the set of tools a turn may use.
type allowlist struct {
	mode  string   // the mode as messages name it: "ask", "sandboxed write"
	tools []string // sorted, distinct
	// mcpServers are the MCP servers whose tools an mcp call may use when
	// tools does not name "mcp" (Turn.MCPServers); sorted, distinct.
	mcpServers []string
}

// newAllowlist returns the tools of mode plus extra, or a failure.Input
// error for an unknown mode or a bad tool name.
func newAllowlist(mode Mode, extra []string) (allowlist, error) {
	mode, err := mode.Resolve()
	if err != nil {
		return allowlist{}, err
	}
	tools := readOnlyTools()
	if mode == ModeWrite {
		tools = append(tools, writeTools()...)
	}
	return makeAllowlist(string(mode), tools, extra)
}

// newSandboxedAllowlist returns the tools of mode's task profile
// (sandboxedTable), or a failure.Input error for a mode that cannot be
// sandboxed or any extra tool.
func newSandboxedAllowlist(mode Mode, extra []string) (allowlist, error) {
	mode, err := mode.Resolve()
	if err != nil {
		return allowlist{}, err
	}
	if err := checkSandboxed(mode, extra); err != nil {
		return allowlist{}, err
	}
	var tools []string
	for _, e := range sandboxedTable() {
		if !e.write || mode == ModeWrite {
			tools = append(tools, e.name)
		}
	}
	return makeAllowlist("sandboxed "+string(mode), tools, nil)
}

// makeAllowlist returns tools plus extra, sorted and distinct, or a
// failure.Input error for a bad extra name.
func makeAllowlist(label string, tools, extra []string) (allowlist, error) {
	for _, name := range extra {
		if err := validToolName(name); err != nil {
			return allowlist{}, err
		}
		tools = append(tools, name)
	}
	slices.Sort(tools)
	return allowlist{mode: label, tools: slices.Compact(tools)}, nil
}

func (a allowlist) allows(name string) bool {
	_, found := slices.BinarySearch(a.tools, name)
	return found
}

// withMCPServers returns a with the MCP servers keys added, or a
// failure.Input error for a bad key.
func (a allowlist) withMCPServers(keys []string) (allowlist, error) {
	for _, key := range keys {
		if err := ValidMCPServerKey(key); err != nil {
			return allowlist{}, err
		}
	}
	servers := slices.Clone(keys)
	slices.Sort(servers)
	a.mcpServers = slices.Compact(servers)
	return a, nil
}

// check returns nil when the tool may run, else a failure.Policy error
// naming the tool and the mode. Names compare exactly ("read",
// "updateTodos"); an empty name (a tool that cannot be identified) is
// never allowed. An mcp call that the tools do not allow is allowed when
// args, its args object, names one of the MCP servers as its
// providerIdentifier; one whose server cannot be found there is refused.
func (a allowlist) check(name string, args jsontext.Value) *failure.Error {
	switch {
	case name == "":
		return failure.New(failure.Policy, "the agent called a tool that cannot be identified; the %s mode allows only: %s",
			a.mode, strings.Join(a.tools, ", "))
	case name == mcpToolName && !a.allows(name) && len(a.mcpServers) > 0:
		server, ok := mcpServerOf(args)
		if !ok {
			return failure.New(failure.Policy, "the agent called an MCP tool whose server cannot be identified (no providerIdentifier string in its args); allowed MCP servers: %s",
				strings.Join(a.mcpServers, ", "))
		}
		if _, found := slices.BinarySearch(a.mcpServers, server); !found {
			return failure.New(failure.Policy, "the agent called a tool of the MCP server %s, which the turn does not allow (allowed MCP servers: %s)",
				boundedQuote(server, 128), strings.Join(a.mcpServers, ", "))
		}
		return nil
	case !a.allows(name):
		return failure.New(failure.Policy, "the agent called the tool %s, which the %s mode does not allow (allowed: %s)",
			boundedQuote(name, 64), a.mode, strings.Join(a.tools, ", "))
	}
	return nil
}

// validToolName accepts what Cursor's tool keys are made of: ASCII letters,
// digits, '_' and '-', at most 64 of them.
func validToolName(name string) error {
	if name == "" || len(name) > 64 {
		return failure.New(failure.Input, "tool name %s must be 1 to 64 characters", boundedQuote(name, 64))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return failure.New(failure.Input, "tool name %s holds %s at byte %d; only letters, digits, '_' and '-' are allowed",
				boundedQuote(name, 64), quoteChar(c), i)
		}
	}
	return nil
}

// mcpToolName is the name of an MCP tool call ("mcpToolCall").
const mcpToolName = "mcp"

// ValidMCPServerKey accepts an MCP server key Turn.MCPServers may name:
// ASCII letters, digits, '-' and '_', 1 to 128 of them. Anything else is
// a failure.Input error.
func ValidMCPServerKey(key string) error {
	if key == "" || len(key) > 128 {
		return failure.New(failure.Input, "MCP server key %s must be 1 to 128 characters", boundedQuote(key, 128))
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return failure.New(failure.Input, "MCP server key %s holds %s at byte %d; only letters, digits, '_' and '-' are allowed",
				boundedQuote(key, 128), quoteChar(c), i)
		}
	}
	return nil
}

// mcpServerOf returns the server an mcp tool call's args name: the string
// member providerIdentifier (the last one when given twice, as everywhere
// in the stream). ok is false when args is not an object or has no such
// non-empty string.
func mcpServerOf(args jsontext.Value) (server string, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(args), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		if tok.String() != "providerIdentifier" {
			if err := dec.SkipValue(); err != nil {
				return "", false
			}
			continue
		}
		if dec.PeekKind() != '"' {
			server, ok = "", false
			if err := dec.SkipValue(); err != nil {
				return "", false
			}
			continue
		}
		val, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		server, ok = val.String(), true
	}
	return server, ok && server != ""
}

// boundedQuote quotes s for a message, cut to at most max bytes of s.
func boundedQuote(s string, max int) string { return turn.Quote(s, max) }

// quoteChar quotes one byte for a message (turn.QuoteByte).
func quoteChar(c byte) string { return turn.QuoteByte(c) }
