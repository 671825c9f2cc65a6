package agentsim

import (
	"cmp"
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMCPArgs is the input the mcp-call scenario gives the tool it
// calls when EnvMCPArgs sets none.
const DefaultMCPArgs = `{"query":"hello"}`

// mcpStopWait is how long a server the mcp-call scenario started may take
// to exit once its stdin is closed, before it is terminated.
const mcpStopWait = 5 * time.Second

// MCPRun is what the mcp-call scenario did with the one MCP server it ran
// in a turn, appended as one JSON line to the file EnvMCPLog names once
// the server has been stopped.
type MCPRun struct {
	// Server is the server's key in the workspace's .cursor/mcp.json;
	// Command and Args what was started, EnvNames the names of its entry's
	// env (never their values: they may be secrets). PID is the server's
	// process, 0 when it did not start.
	Server   string   `json:"server"`
	Command  string   `json:"command"`
	Args     []string `json:"args"`
	EnvNames []string `json:"envNames"`
	PID      int      `json:"pid"`
	// Tools are the tools tools/list returned, in order.
	Tools []string `json:"tools"`
	// Tool is the tool called ("" when none was), Input its arguments;
	// Result is the text of its content, IsError whether the tool said it
	// failed.
	Tool    string         `json:"tool"`
	Input   jsontext.Value `json:"input,omitzero"`
	Result  string         `json:"result"`
	IsError bool           `json:"isError"`
	// Error is what went wrong before or during the call, "" when nothing;
	// StopError what went wrong stopping the server (it exited with an
	// error, or had to be killed), "" when it exited cleanly once its
	// stdin was closed.
	Error     string `json:"error"`
	StopError string `json:"stopError"`
}

// ReadMCPRuns returns the runs appended to path, oldest first.
func ReadMCPRuns(path string) ([]MCPRun, error) {
	return readLines[MCPRun](path)
}

// mcpEntry is a server's entry in an mcp.json.
type mcpEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// mcpServerRun is the mcp-call scenario's server while the turn lasts.
type mcpServerRun struct {
	session *mcp.ClientSession
	run     MCPRun
}

// mcpCall plays what the real CLI does when the model calls a tool of an
// MCP server: it reads the workspace's .cursor/mcp.json (headless
// cursor-agent loads the project's servers only with --approve-mcps),
// starts the server EnvMCPServer names (else the first one) with its
// command, args and env on top of its own environment, speaks MCP to it
// over stdio as a client (the official SDK's), lists its tools, calls
// EnvMCPTool (else the first one listed) with EnvMCPArgs, and prints the
// call in Cursor's shape with the server's real answer. The server runs
// until the turn ends (stopMCP). What prevents the call is said on stderr
// and in the run's log; the turn goes on without it.
func (t *turn) mcpCall(cwd string) {
	if !t.inv.approveMCPs {
		return
	}
	r := &mcpServerRun{}
	t.mcp = r
	if err := t.startMCP(r, cwd); err != nil {
		r.run.Error = err.Error()
		fmt.Fprintf(t.s.stderr, "cursor-agent-sim: mcp-call: %v\n", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), t.s.hangLimit())
	defer cancel()
	input := r.run.Input
	t.toolEvent("started", CallIDMCP, "mc_1", "mcpToolCall", obj{{"args", obj{{"name", r.run.Server + "-" + r.run.Tool},
		{"args", input}, {"toolCallId", CallIDMCP}, {"providerIdentifier", r.run.Server}, {"toolName", r.run.Tool}}}})
	res, err := r.session.CallTool(ctx, &mcp.CallToolParams{Name: r.run.Tool, Arguments: input})
	if err != nil {
		r.run.Error = "tools/call: " + err.Error()
		fmt.Fprintf(t.s.stderr, "cursor-agent-sim: mcp-call: %s\n", r.run.Error)
		t.toolEvent("completed", CallIDMCP, "mc_1", "mcpToolCall", obj{{"result", obj{{"rejected", obj{{"reason", r.run.Error}}}}}})
		return
	}
	var content []obj
	for _, c := range res.Content {
		if text, ok := c.(*mcp.TextContent); ok {
			content = append(content, obj{{"type", "text"}, {"text", text.Text}})
			r.run.Result += text.Text
		}
	}
	r.run.IsError = res.IsError
	t.toolEvent("completed", CallIDMCP, "mc_1", "mcpToolCall", obj{{"result", obj{{"success",
		obj{{"content", content}, {"isError", res.IsError}}}}}})
}

// startMCP finds the server's entry, starts it and lists its tools into
// r; r.session is set once it runs, for stopMCP to stop.
func (t *turn) startMCP(r *mcpServerRun, cwd string) error {
	config := projectMCPConfig(cwd)
	r.run.Server = cmp.Or(t.s.getenv(EnvMCPServer), firstMCPServer(config))
	if r.run.Server == "" {
		return errors.New("no MCP server to call")
	}
	var file struct {
		Servers map[string]mcpEntry `json:"mcpServers"`
	}
	if config == nil {
		return errors.New("no .cursor/mcp.json in the workspace")
	}
	if err := json.Unmarshal([]byte(*config), &file); err != nil {
		return fmt.Errorf(".cursor/mcp.json: %w", err)
	}
	entry, ok := file.Servers[r.run.Server]
	if !ok || entry.Command == "" {
		return fmt.Errorf("no command for the MCP server %q in .cursor/mcp.json", r.run.Server)
	}
	input := jsontext.Value(cmp.Or(t.s.getenv(EnvMCPArgs), DefaultMCPArgs))
	if input.Kind() != '{' || !input.IsValid() {
		return fmt.Errorf("%s is not a JSON object", EnvMCPArgs)
	}
	r.run.Command, r.run.Args, r.run.Input = entry.Command, entry.Args, input
	r.run.EnvNames = slices.Sorted(maps.Keys(entry.Env))
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Dir = cwd
	cmd.Env = os.Environ() // its own environment, the entry's on top (the last of a name wins)
	for _, name := range r.run.EnvNames {
		cmd.Env = append(cmd.Env, name+"="+entry.Env[name])
	}
	// A server's log belongs on the agent's stderr; only an *os.File is
	// handed down, or closing the session would wait on a copy.
	if f, ok := t.s.stderr.(*os.File); ok {
		cmd.Stderr = f
	}
	ctx, cancel := context.WithTimeout(context.Background(), t.s.hangLimit())
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "cursor-agent-sim", Version: t.s.envOr(EnvVersion, DefaultVersion)}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: mcpStopWait}, nil)
	if cmd.Process != nil {
		r.run.PID = cmd.Process.Pid
		t.s.writePID(cmd.Process.Pid, "mcp-server")
	}
	if err != nil {
		if cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		return fmt.Errorf("starting the MCP server %q: %w", r.run.Server, err)
	}
	r.session = session
	for tool, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		r.run.Tools = append(r.run.Tools, tool.Name)
	}
	r.run.Tool = t.s.getenv(EnvMCPTool)
	switch {
	case r.run.Tool == "" && len(r.run.Tools) > 0:
		r.run.Tool = r.run.Tools[0]
	case r.run.Tool == "":
		return fmt.Errorf("the MCP server %q lists no tool", r.run.Server)
	case !slices.Contains(r.run.Tools, r.run.Tool):
		tool := r.run.Tool
		r.run.Tool = ""
		return fmt.Errorf("the MCP server %q does not list the tool %q", r.run.Server, tool)
	}
	return nil
}

// stopMCP stops the mcp-call scenario's server when the turn ends: its
// stdin closed, then, if it lingers, terminated and killed; and logs the
// run.
func (t *turn) stopMCP() {
	r := t.mcp
	if r == nil {
		return
	}
	t.mcp = nil
	if r.session != nil {
		if err := r.session.Close(); err != nil {
			r.run.StopError = err.Error()
		}
	}
	if path := t.s.getenv(EnvMCPLog); path != "" {
		if err := appendLine(path, r.run); err != nil {
			fmt.Fprintf(t.s.stderr, "cursor-agent-sim: mcp log: %v\n", err)
		}
	}
}
