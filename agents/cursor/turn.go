package cursor

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"slices"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// Turn is what one prompt turn asks of the Cursor CLI: the fields of
// turn.Request, as Cursor reads them, then the options only Cursor has
// (which makes it agents.Turn, the turn of any agent). The fields are
// repeated rather than turn.Request embedded so that a turn stays one
// flat literal; agents' TestTurnCarriesTheRequest keeps them in step. The
// prompt travels on the agent's stdin only, never in its argv.
type Turn struct {
	// Prompt is what the agent is asked. Neither Args nor the decoder
	// reads it; it is never quoted in an error.
	Prompt string
	// Mode decides both the agent's flags and the tools the decoder lets
	// it use: plan is `--mode plan`, ask `--mode ask`, write `--force`
	// with the tools that change files and run commands allowed. The
	// zero Mode is plan.
	Mode turn.Mode
	// Model is a resolved catalog id; "" keeps the agent's configured model.
	Model string
	// Resume is the session id of an earlier turn to continue; "" starts
	// a new session.
	Resume string
	// Tools are tools allowed besides the mode's, by the name Cursor gives
	// them ("mcp", "getMcpTools", ...): ASCII letters, digits, '_' and
	// '-', 1 to 64 of them.
	Tools []string
	// Bridge, when set, is the MCP tool bridge the turn publishes to the
	// agent (turn.Request.Bridge); nil publishes none. This package stages
	// nothing: the caller must have staged the bridge program, Bridge's
	// Command, Args and Env, into the worktree's .cursor/mcp.json
	// (mcpstage.Run with that Entry) before the turn and keep it there
	// until the turn is over, and must set Bridge.Name to the key it was
	// staged under (the lease's Key): that key is the server Cursor names
	// in each call. Args then passes --approve-mcps, and the decoder allows
	// exactly Bridge.Tools from that server, nothing else of it, and
	// reports each such call under the tool's own name (Bridge.Tools
	// without mcpbridge.Prefix). The key need not be in MCPServers.
	Bridge *mcpbridge.Server
	// MCPServers are the keys of MCP servers (in the workspace's
	// .cursor/mcp.json or the user's ~/.cursor/mcp.json) whose tools the
	// turn may call: Args passes --approve-mcps when it is not empty, and
	// the decoder allows an mcp tool call only when the server its event
	// names (args.providerIdentifier) is one of them. Keys are ASCII
	// letters, digits, '-' and '_', 1 to 128 of them. Naming "mcp" in
	// Tools instead allows every server's tools.
	MCPServers []string
	// PartialOutput asks for --stream-partial-output: text arrives as
	// deltas, and the decoder drops the recaps that come with them.
	PartialOutput bool
	// Sandboxed selects the task profile (docs/contract.md, "The task
	// profile"): Cursor's sandbox, no project configuration, one turn, no
	// auto-update and an explicit allowlist (SandboxedTools), sent to
	// Cursor and enforced by the decoder. Only turn.ModeAsk (consult, review)
	// and turn.ModeWrite (write) may be sandboxed, and Tools must be empty.
	Sandboxed bool
}

// Args returns the arguments, after the program, that run t:
//
//	--print --output-format stream-json [--stream-partial-output]
//	  --force --trust               (turn.ModeWrite)
//	  --mode plan --trust           (turn.ModePlan, ""; never --force)
//	  --mode ask --trust            (turn.ModeAsk)
//	  [--approve-mcps]              (MCPServers not empty, or a Bridge)
//	  [--model ID] [--resume SESSION]
//
// and, for a Sandboxed turn, never --force but the task profile's flags
// and --allowed-tools with SandboxedTools(t.Mode) (docs/contract.md, "The
// task profile"). A turn NewDecoder refuses (an unknown mode, a bad tool
// name, MCP server key or Bridge, a Sandboxed turn in another mode than
// turn.ModeAsk or turn.ModeWrite or with Tools, MCPServers or a Bridge), a
// model or session id turn.CheckValue refuses, and a model of "auto" or
// "default" (which route to a model no event reports) are failure.Input
// errors.
func Args(t Turn) ([]string, error) {
	mode, err := checkTurn(t)
	if err != nil {
		return nil, err
	}
	args := []string{"--print", "--output-format", "stream-json"}
	if t.PartialOutput {
		args = append(args, "--stream-partial-output")
	}
	switch {
	case t.Sandboxed:
		args = append(args, "--sandbox", "enabled", "--disable-project-configs", "--single-turn",
			"--disable-auto-update", "--allowed-tools", strings.Join(SandboxedTools(mode), ","))
		if mode == turn.ModeAsk {
			args = append(args, "--mode", "ask")
		}
		args = append(args, "--trust")
	case mode == turn.ModeWrite:
		args = append(args, "--force", "--trust")
	case mode == turn.ModeAsk:
		args = append(args, "--mode", "ask", "--trust")
	default:
		args = append(args, "--mode", "plan", "--trust")
	}
	// The bridge is one more staged server: approved the same way.
	if len(t.MCPServers) > 0 || t.Bridge != nil {
		args = append(args, "--approve-mcps")
	}
	if t.Model != "" {
		if err := turn.CheckValue("model", t.Model); err != nil {
			return nil, err
		}
		if m := strings.ToLower(t.Model); m == "auto" || m == "default" {
			return nil, failure.New(failure.Input, "model %s is refused: it routes to a model no event reports; name a catalog model", turn.Quote(t.Model, 64))
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

// checkTurn returns t's mode, "" resolved to turn.ModePlan, or the
// failure.Input error of a turn Args and NewDecoder refuse: an unknown
// mode, a Sandboxed turn the task profile cannot run (another mode than
// ask or write, extra tools, MCP servers or a bridge: its allowlist is
// fixed and it never passes --approve-mcps), a bad tool name or MCP server
// key, a bridge without a valid key or tools.
func checkTurn(t Turn) (turn.Mode, error) {
	mode, err := t.Mode.Resolve()
	if err != nil {
		return "", err
	}
	if t.Sandboxed {
		switch {
		case mode != turn.ModeAsk && mode != turn.ModeWrite:
			return "", failure.New(failure.Input, "the %s mode cannot run sandboxed (only ask and write can)", mode)
		case len(t.Tools) > 0:
			return "", failure.New(failure.Input, "a sandboxed turn takes no extra tools: its allowlist is fixed (%d given)", len(t.Tools))
		case len(t.MCPServers) > 0:
			return "", failure.New(failure.Input, "a sandboxed turn approves no MCP server (%d given)", len(t.MCPServers))
		case t.Bridge != nil:
			return "", failure.New(failure.Input, "a sandboxed turn approves no MCP server, the tool bridge's included")
		}
	}
	// What Cursor's tool keys and MCP server keys are made of.
	for _, name := range t.Tools {
		if err := turn.CheckName("tool name", name, 64, "_-"); err != nil {
			return "", err
		}
	}
	for _, key := range t.MCPServers {
		if err := turn.CheckName("MCP server key", key, 128, "_-"); err != nil {
			return "", err
		}
	}
	if t.Bridge != nil {
		if err := checkBridge(t.Bridge); err != nil {
			return "", err
		}
	}
	return mode, nil
}

// checkBridge returns the failure.Input error of a bridge the turn cannot
// publish: a key that is not an MCP server key, no tools, or a tool that
// is not mcpbridge.Prefix and a name.
func checkBridge(b *mcpbridge.Server) error {
	if err := turn.CheckName("tool bridge's MCP server key", b.Name, 128, "_-"); err != nil {
		return err
	}
	if len(b.Tools) == 0 {
		return failure.New(failure.Input, "the tool bridge %s publishes no tool", b.Name)
	}
	for _, name := range b.Tools {
		if err := turn.CheckName("tool bridge's tool name", name, 64, "_"); err != nil {
			return err
		}
		if !strings.HasPrefix(name, mcpbridge.Prefix) || name == mcpbridge.Prefix {
			return failure.New(failure.Input, "the tool bridge's tool name %s does not start with %s and a name",
				turn.Quote(name, 64), mcpbridge.Prefix)
		}
	}
	return nil
}

// allowlist is the set of tools a turn may use.
type allowlist struct {
	mode  string   // the mode as messages name it: "ask", "sandboxed write"
	tools []string // sorted, distinct
	// mcpServers are the MCP servers whose tools an mcp call may use when
	// tools does not name "mcp" (Turn.MCPServers and the bridge's key);
	// sorted, distinct.
	mcpServers []string
	// bridge is the turn's tool bridge, nil when none: of its server (the
	// key bridge.Name), an mcp call may use the tools it publishes and no
	// other, whatever else the turn allows.
	bridge *mcpbridge.Server
}

// newAllowlist returns the tools t may use: those of its mode (modeTools;
// turn.ModeWrite's include write, except in the task profile), plus t.Tools,
// and the MCP servers t names; or the error of checkTurn.
func newAllowlist(t Turn) (allowlist, error) {
	mode, err := checkTurn(t)
	if err != nil {
		return allowlist{}, err
	}
	a := allowlist{mode: string(mode)}
	if t.Sandboxed {
		a.mode = "sandboxed " + a.mode
	}
	tools := slices.Clone(t.Tools)
	for _, e := range modeTools() {
		if !e.write || mode == turn.ModeWrite {
			tools = append(tools, e.name)
		}
	}
	slices.Sort(tools)
	a.tools = slices.Compact(tools)
	servers := slices.Clone(t.MCPServers)
	if t.Bridge != nil {
		servers = append(servers, t.Bridge.Name)
		a.bridge = t.Bridge
	}
	slices.Sort(servers)
	a.mcpServers = slices.Compact(servers)
	return a, nil
}

func (a allowlist) allows(name string) bool {
	_, found := slices.BinarySearch(a.tools, name)
	return found
}

// check returns nil when the tool may run, else a failure.Policy error
// naming the tool and the mode. Names compare exactly ("read",
// "updateTodos"); an empty name (a tool that cannot be identified) is
// never allowed. An mcp call that the tools do not allow is allowed when
// args, its args object, names one of the MCP servers as its
// providerIdentifier; one whose server cannot be found there is refused.
// An mcp call of the bridge's server is allowed only for a tool the
// bridge publishes (checkBridged), even when the tools name "mcp".
func (a allowlist) check(name string, args jsontext.Value) *failure.Error {
	if call, ok := a.bridgeCall(name, args); ok {
		return a.checkBridged(call)
	}
	switch {
	case name == "":
		return failure.New(failure.Policy, "the agent called a tool that cannot be identified; the %s mode allows only: %s",
			a.mode, strings.Join(a.tools, ", "))
	case name == mcpToolName && !a.allows(name) && len(a.mcpServers) > 0:
		call, ok := mcpCallOf(args)
		server := call.server
		if !ok {
			return failure.New(failure.Policy, "the agent called an MCP tool whose server cannot be identified (no providerIdentifier string in its args); allowed MCP servers: %s",
				strings.Join(a.mcpServers, ", "))
		}
		if _, found := slices.BinarySearch(a.mcpServers, server); !found {
			return failure.New(failure.Policy, "the agent called a tool of the MCP server %s, which the turn does not allow (allowed MCP servers: %s)",
				turn.Quote(server, 128), strings.Join(a.mcpServers, ", "))
		}
		return nil
	case !a.allows(name):
		return failure.New(failure.Policy, "the agent called the tool %s, which the %s mode does not allow (allowed: %s)",
			turn.Quote(name, 64), a.mode, strings.Join(a.tools, ", "))
	}
	return nil
}

// mcpToolName is the name of an MCP tool call ("mcpToolCall").
const mcpToolName = "mcp"

// mcpCall is what an mcp tool call's args say of the call.
type mcpCall struct {
	server string // providerIdentifier: the MCP server's key
	// tool is toolName, the server's own name of the tool; name is name,
	// the server's key, '-' and the tool; "" when absent or not a string.
	tool, name string
	input      jsontext.Value // args: the tool's input, as sent; nil when absent or null
}

// mcpCallOf reads an mcp tool call's args: each member the last one when
// given twice, as everywhere in the stream. ok is false when args is not
// an object or has no non-empty providerIdentifier string.
func mcpCallOf(args jsontext.Value) (call mcpCall, ok bool) {
	var w struct {
		Server jsontext.Value `json:"providerIdentifier"`
		Tool   jsontext.Value `json:"toolName"`
		Name   jsontext.Value `json:"name"`
		Input  jsontext.Value `json:"args"`
	}
	if json.Unmarshal(args, &w, turn.UnmarshalOptions()) != nil {
		return mcpCall{}, false
	}
	call = mcpCall{server: stringOf(w.Server), tool: stringOf(w.Tool), name: stringOf(w.Name)}
	if w.Input.Kind() != 'n' && len(w.Input) > 0 {
		call.input = w.Input
	}
	return call, call.server != ""
}

// stringOf is v when it is a JSON string, else "".
func stringOf(v jsontext.Value) string {
	var s string
	if v.Kind() != '"' || json.Unmarshal(v, &s, turn.UnmarshalOptions()) != nil {
		return ""
	}
	return s
}

// bridgeCall returns the call of the tool named name with args when it
// is an mcp call of the bridge's server.
func (a allowlist) bridgeCall(name string, args jsontext.Value) (mcpCall, bool) {
	if name != mcpToolName || a.bridge == nil {
		return mcpCall{}, false
	}
	call, ok := mcpCallOf(args)
	return call, ok && call.server == a.bridge.Name
}

// checkBridged returns nil when call, a call of the bridge's server, is
// of a tool the bridge publishes, else a failure.Policy error. Its
// toolName names the tool; its name, when sent, must say the same (the
// server's key, '-' and the tool), so that the two cannot disagree on
// which tool runs.
func (a allowlist) checkBridged(call mcpCall) *failure.Error {
	key := a.bridge.Name
	published := detail.Cut(strings.Join(a.bridge.Tools, ", "), 300)
	switch {
	case call.tool == "":
		return failure.New(failure.Policy, "the agent called a tool of the MCP tool bridge %s that cannot be identified (no toolName string in its args); it publishes: %s",
			key, published)
	case call.name != "" && call.name != key+"-"+call.tool:
		return failure.New(failure.Policy, "the agent called a tool of the MCP tool bridge %s whose name %s and toolName %s disagree; it publishes: %s",
			key, turn.Quote(call.name, 200), turn.Quote(call.tool, 64), published)
	}
	if _, ok := a.bridge.Own(call.tool); !ok {
		return failure.New(failure.Policy, "the agent called the tool %s of the MCP tool bridge %s, which it does not publish (it publishes: %s)",
			turn.Quote(call.tool, 64), key, published)
	}
	return nil
}
