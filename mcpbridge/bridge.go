// Package mcpbridge publishes an embedding program's own tools to an
// agent CLI for one turn, as an MCP server (docs/contract.md, "The MCP
// tool bridge").
//
// Open starts a bridge for a set of Tools: a listener on the loopback (a
// Unix socket in a private directory; loopback TCP on Windows), a fresh
// secret, and an MCP server (the official Go SDK's) holding exactly those
// tools under Prefix. The agent CLI starts the bridge program that
// Bridge.Server describes (this very binary, with an argument and an
// environment variable that RunIfBridge recognises); that program proves
// it holds the secret and then relays the CLI's MCP stdio to the
// embedder byte for byte, so every tools/list and tools/call is answered
// here, by the Tools' handlers. Close ends every connection, which ends
// every bridge program, and removes the secret.
package mcpbridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// ServerName starts the key of a bridge's entry in an agent's MCP
// configuration (Server.Name): ServerName and 8 random lower-case hex
// digits, fresh for each bridge, so that a project's own MCP config
// cannot define a server under that key beforehand and have its tools
// taken for the bridge's. Letters and digits only, so that every agent's
// spelling of a tool (mcp__NAME__fn_x, mcp_NAME_fn_x) splits back
// unambiguously.
const ServerName = "cursorkit"

// Options tune a bridge; the zero value is usable.
type Options struct {
	// Dir is where the bridge's private directory is made ("" is
	// os.TempDir()).
	Dir string
	// OnRefused, when set, is told of each connection the bridge refused
	// (a *RefusedError) and of each call of a tool it does not publish;
	// the error never holds the secret. It may be called from several
	// goroutines at once.
	OnRefused func(error)
}

// Bridge is one turn's published tools. Its methods are safe for
// concurrent use.
type Bridge struct {
	tools    []Tool
	dir      string
	session  string // the session file's path
	config   string // the MCP client config file's path
	id, key  []byte
	name     string // Server.Name
	listener net.Listener
	server   *mcp.Server
	opts     Options

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	agents []procid.Identity // the processes Admit was given
	known  chan struct{}     // closed by the first Admit
}

// sessionFile is what the bridge program reads to reach its embedder.
type sessionFile struct {
	Network string `json:"network"`
	Address string `json:"address"`
	Session string `json:"session"`
	Key     string `json:"key"`
}

// Open checks tools and starts a bridge publishing them: a failure.Input
// error names a tool that cannot be published; a failure.Resource error
// says what could not be set up. Close it however the turn ends.
func Open(ctx context.Context, tools []Tool, opts Options) (*Bridge, error) {
	if err := checkTools(tools); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(opts.Dir, "cursorkit-mcp-")
	if err != nil {
		return nil, failure.Wrap(failure.Resource, err, "cannot make the MCP bridge's private directory")
	}
	b := &Bridge{
		tools:   slices.Clone(tools),
		dir:     dir,
		session: filepath.Join(dir, "session.json"),
		config:  filepath.Join(dir, "mcp.json"),
		id:      make([]byte, idSize),
		key:     make([]byte, keySize),
		opts:    opts,
		conns:   map[net.Conn]struct{}{},
		known:   make(chan struct{}),
	}
	rand.Read(b.id)
	rand.Read(b.key)
	suffix := make([]byte, 4)
	rand.Read(suffix)
	b.name = ServerName + hex.EncodeToString(suffix)
	if err := b.listen(); err != nil {
		safefile.RemoveAll(dir)
		return nil, err
	}
	if err := b.writeFiles(); err != nil {
		b.listener.Close()
		safefile.RemoveAll(dir)
		return nil, err
	}
	b.server = b.newServer()
	b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
	b.wg.Add(1)
	go b.serve()
	return b, nil
}

// listen opens the bridge's listener: a Unix socket in its private
// directory, or loopback TCP where there is none (listen_windows.go).
func (b *Bridge) listen() error {
	network, address := listenAddress(b.dir)
	l, err := net.Listen(network, address)
	if err != nil {
		return failure.Wrap(failure.Resource, err, "cannot listen for the MCP bridge")
	}
	b.listener = l
	return nil
}

// writeFiles writes the session file (the address and the secret, for
// the bridge program only) and the MCP client config naming the bridge
// program, both readable by this user alone.
func (b *Bridge) writeFiles() error {
	sf, err := json.Marshal(sessionFile{
		Network: b.listener.Addr().Network(),
		Address: b.listener.Addr().String(),
		Session: hex.EncodeToString(b.id),
		Key:     hex.EncodeToString(b.key),
	})
	if err != nil {
		return failure.Wrap(failure.Resource, err, "cannot encode the MCP bridge's session file")
	}
	if err := safefile.Write(b.session, sf, 0o600); err != nil {
		return failure.Wrap(failure.Resource, err, "cannot write the MCP bridge's session file")
	}
	s := b.Server()
	config, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		s.Name: map[string]any{"command": s.Command, "args": s.Args, "env": s.Env},
	}}, jsontext.WithIndent("  "))
	if err != nil {
		return failure.Wrap(failure.Resource, err, "cannot encode the MCP bridge's config file")
	}
	if err := safefile.Write(b.config, append(config, '\n'), 0o600); err != nil {
		return failure.Wrap(failure.Resource, err, "cannot write the MCP bridge's config file")
	}
	return nil
}

// Server describes the MCP server an agent CLI must start to reach a
// bridge: what goes into the CLI's configuration for one turn.
type Server struct {
	// Name is the server's key in the CLI's configuration: ServerName and
	// 8 hex digits, this bridge's own.
	Name string
	// Command, Args and Env start the bridge program: this binary, its
	// absolute path, recognised by RunIfBridge. Env holds only the path of
	// the session file, never the secret.
	Command string
	Args    []string
	Env     map[string]string
	// Tools are the names the agent sees, Prefix and the Tool's name, in
	// the order registered.
	Tools []string
	// ConfigFile is a JSON file {"mcpServers": {Name: {command, args,
	// env}}}, the shape most MCP clients read, for a CLI that takes a file.
	ConfigFile string
	// Dir is the bridge's private directory (mode 0700, removed by Close),
	// for anything else a CLI needs on disk for the turn.
	Dir string
	// Admit is Bridge.Admit: whoever starts the agent that is to use the
	// bridge gives it the agent's PID (agents.Agent.Run does).
	Admit func(pid int) `json:"-"`
}

// Server returns what starts the bridge program for this bridge.
func (b *Bridge) Server() Server {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	names := make([]string, len(b.tools))
	for i, t := range b.tools {
		names[i] = Prefix + t.Name
	}
	return Server{
		Name:       b.name,
		Command:    exe,
		Args:       []string{bridgeArg},
		Env:        map[string]string{EnvSession: b.session},
		Tools:      names,
		ConfigFile: b.config,
		Dir:        b.dir,
		Admit:      b.Admit,
	}
}

// Admitting returns onStarted (a turn's turn.Options.OnStarted, which may
// be nil) preceded by s's Admit: what runs a turn with a bridge wraps its
// start hook with it, so that the bridge admits the agent it starts. A nil
// s, or one without Admit, returns onStarted as it is.
func (s *Server) Admitting(onStarted func(pid int)) func(pid int) {
	if s == nil || s.Admit == nil {
		return onStarted
	}
	return func(pid int) {
		s.Admit(pid)
		if onStarted != nil {
			onStarted(pid)
		}
	}
}

// Admit lets the process pid, an agent CLI started for the turn, and its
// descendants use the bridge: a bridge program is admitted only when the
// process that started it is one of them. Until the first Admit, a
// connecting bridge waits (up to 5 s, then it is refused), so that a
// bridge program started at once by a CLI whose PID is not known yet gets
// in. Without it, a CLI of another turn that shares a configuration file
// (Cursor's .cursor/mcp.json holds every staged server of a worktree)
// could start this bridge and see this turn's tools.
func (b *Bridge) Admit(pid int) {
	// The process, not only its PID: a PID is reused once its process is
	// gone (soon, on Windows), and a bridge may outlive its agent a little.
	id, err := procid.Of(context.Background(), pid)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		b.agents = append(b.agents, id)
	} // else it is gone already, and so is every bridge program it could start
	select {
	case <-b.known:
	default:
		close(b.known)
	}
}

// maxAncestors bounds the walk from a bridge program's parent up to an
// admitted agent: a CLI starts its MCP servers itself or through a few
// wrappers (npm's shim, node, a shell).
const maxAncestors = 16

// admit decides on a bridge program whose parent is parent.
func (b *Bridge) admit(parent int) error {
	select {
	case <-b.known:
	case <-time.After(handshakeTimeout):
		return &RefusedError{Reason: "came before any agent was admitted (Bridge.Admit)"}
	case <-b.ctx.Done():
		return &RefusedError{Reason: "came after the bridge was closed"}
	}
	b.mu.Lock()
	agents := slices.Clone(b.agents)
	b.mu.Unlock()
	pid := parent
	for range maxAncestors {
		id, err := procid.Of(b.ctx, pid)
		if err != nil {
			break // no process (0 or gone): nothing above it to find
		}
		if slices.ContainsFunc(agents, id.Matches) {
			return nil
		}
		next, err := procid.Parent(b.ctx, pid)
		if err != nil || next == pid {
			break
		}
		pid = next
	}
	return &RefusedError{Reason: "came from a process the turn's agent did not start"}
}

// newServer builds the MCP server of b's tools, each under Prefix.
func (b *Bridge) newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: b.name, Title: "cursorkit tool bridge", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	for _, t := range b.tools {
		s.AddTool(&mcp.Tool{Name: Prefix + t.Name, Description: t.Description, InputSchema: t.InputSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				input := jsontext.Value(req.Params.Arguments)
				if len(input) == 0 {
					input = jsontext.Value("{}")
				}
				text, failed := t.call(ctx, input)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: failed}, nil
			})
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && !b.publishes(call.Params.Name) {
				b.refused(failure.New(failure.Policy, "the agent called tool %q, which this bridge does not publish", cut(call.Params.Name)))
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// publishes reports whether name is one of b's tools as the agent sees it.
func (b *Bridge) publishes(name string) bool {
	return slices.ContainsFunc(b.tools, func(t Tool) bool { return Prefix+t.Name == name })
}

func (b *Bridge) refused(err error) {
	if b.opts.OnRefused != nil {
		b.opts.OnRefused(err)
	}
}

// serve accepts connections until Close, each served on its own.
func (b *Bridge) serve() {
	defer b.wg.Done()
	for {
		conn, err := b.listener.Accept()
		if err != nil {
			return // closed; a listener that fails otherwise has nothing left to serve
		}
		if !b.track(conn) {
			conn.Close()
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer b.untrack(conn)
			b.serveConn(conn)
		}()
	}
}

// serveConn authenticates conn and serves MCP on it until either end
// closes it.
func (b *Bridge) serveConn(conn net.Conn) {
	if err := accept(conn, b.id, b.key, b.admit); err != nil {
		b.refused(err)
		return
	}
	ss, err := b.server.Connect(b.ctx, &mcp.IOTransport{Reader: conn, Writer: conn}, nil)
	if err != nil {
		return
	}
	stop := context.AfterFunc(b.ctx, func() { ss.Close() })
	defer stop()
	ss.Wait()
}

func (b *Bridge) track(conn net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.conns[conn] = struct{}{}
	return true
}

func (b *Bridge) untrack(conn net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.conns, conn)
	conn.Close()
}

// Close stops the bridge: no more connections, every open one closed (so
// every bridge program exits), the private directory and its secret
// removed. It waits for the connections' goroutines, not for handlers
// that ignore their context. Calling it again does nothing.
func (b *Bridge) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.cancel()
	b.listener.Close()
	b.wg.Wait()
	if err := safefile.RemoveAll(b.dir); err != nil {
		return failure.Wrap(failure.Resource, err, "cannot remove the MCP bridge's private directory")
	}
	return nil
}
