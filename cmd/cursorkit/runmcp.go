package main

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/mcpstage"
	"github.com/cursorkit/cursorkit/turn"
)

// mcpHeartbeatEvery is the renewal period this command uses.
func (a *app) mcpHeartbeatEvery() (time.Duration, error) {
	d, err := a.envDuration(envMCPHeartbeat, mcpstage.HeartbeatEvery)
	if err == nil && d >= mcpstage.LeaseTTL {
		err = failure.New(failure.Input, "%s must be below the lease's %s, or the lease would lapse between heartbeats", envMCPHeartbeat, mcpstage.LeaseTTL)
	}
	return d, err
}

// readMCPServer reads the --mcp-server file (mcpstage.ReadEntryFile).
func readMCPServer(path string) (mcpstage.Entry, error) {
	e, err := mcpstage.ReadEntryFile(path)
	return e, failure.Wrap(failure.Input, err, "--mcp-server")
}

// readTools reads the --tools file (mcpbridge.ReadToolsFile): its tools
// run in dir, the turn's directory ("" is this process's), and their
// programs are found from the file's own directory.
func readTools(ctx context.Context, path, dir string) (*mcpbridge.CommandSet, error) {
	set, err := mcpbridge.ReadToolsFile(ctx, path, mcpbridge.CommandOptions{Dir: dir})
	if failure.Is(err, failure.Input) {
		return nil, failure.Wrap(failure.Input, err, "--tools")
	}
	return set, err
}

// stagedServer is an MCP server staged into the worktree around a turn.
type stagedServer struct {
	entry mcpstage.Entry
	// bridge says the entry is the turn's tool bridge: its key becomes the
	// name of Turn.Bridge, not one of Turn.MCPServers.
	bridge bool
}

// stagedServers are the servers p's turn needs staged: --mcp-server's, and
// for Cursor, which reads its servers from the worktree only, the tool
// bridge's.
func (p runPlan) stagedServers() []stagedServer {
	var out []stagedServer
	if p.mcp != nil {
		out = append(out, stagedServer{entry: *p.mcp})
	}
	if b := p.turn.Bridge; b != nil && p.agent.Name == cursor.Name {
		out = append(out, stagedServer{entry: mcpstage.Entry{Command: b.Command, Args: b.Args, Env: b.Env}, bridge: true})
	}
	return out
}

// runStaged runs p's turn with servers staged into the worktree of dir
// (docs/contract.md, "run --mcp-server"), each under a lease of its own
// (mcpstage.Run): play runs the agent with every lease's key in the turn,
// an --mcp-server's as one of its MCP servers, the bridge's as its
// Bridge's name (the server Cursor names in each call). The leases'
// warnings are events on w from then on, and all of them are in the
// outcome. started is false when the agent never started (a refused
// stage): err is then the run's failure, the error object alone, so no
// warning is rendered.
func (a *app) runStaged(ctx context.Context, dir string, p runPlan, servers []stagedServer, w *turnWriter,
	play func(context.Context, agents.Turn) (turn.Outcome, error)) (o turn.Outcome, started bool, err error) {
	every, err := a.mcpHeartbeatEvery()
	if err != nil {
		return o, false, err
	}
	var playing atomic.Bool // the OnWarning of the heartbeats' goroutines reads it
	opts := mcpstage.RunOptions{
		HeartbeatEvery: every,
		OnWarning: func(warn mcpstage.Warning) {
			if playing.Load() {
				w.warning(eventWarning(warn))
			}
		},
	}
	entries := make([]mcpstage.Entry, len(servers))
	for i, s := range servers {
		entries[i] = s.entry
	}
	warns, err := mcpstage.Run(ctx, dir, entries, opts, func(ctx context.Context, leases []mcpstage.Lease) error {
		req := p.turn
		for i, lease := range leases {
			if servers[i].bridge {
				b := *req.Bridge
				b.Name = lease.Key
				req.Bridge = &b
			} else {
				req.MCPServers = append(slices.Clone(req.MCPServers), lease.Key)
			}
		}
		if _, err := p.agent.Args(req); err != nil {
			return err
		}
		playing.Store(true)
		var err error
		o, err = play(ctx, req)
		return err
	})
	if !playing.Load() {
		return o, false, err
	}
	for _, warn := range warns {
		o.Warnings = append(o.Warnings, eventWarning(warn))
	}
	return o, true, err
}

func eventWarning(w mcpstage.Warning) event.Warning {
	return event.Warning{Code: w.Code, Message: w.Message}
}

// warnBridgeRefused is the code of the warning of a connection or a call
// the turn's MCP tool bridge refused.
const warnBridgeRefused = "mcp_bridge_refused"

// bridgeRefusals are the refusals of a run's bridge, one warning per
// distinct reason: the agents of other turns on one worktree may each be
// refused once per run, and one line says so.
type bridgeRefusals struct {
	mu   sync.Mutex
	seen []event.Warning
}

// add returns the bridge's Options.OnRefused: each new reason is a
// warning on w at once and in the outcome after.
func (r *bridgeRefusals) add(w *turnWriter) func(error) {
	return func(err error) {
		warn := event.Warning{Code: warnBridgeRefused, Message: "the MCP tool bridge refused a call: " + err.Error()}
		if re, ok := errors.AsType[*mcpbridge.RefusedError](err); ok {
			warn.Message = "the MCP tool bridge refused a connection that " + re.Reason
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if slices.Contains(r.seen, warn) {
			return
		}
		r.seen = append(r.seen, warn)
		w.warning(warn)
	}
}

func (r *bridgeRefusals) warnings() []event.Warning {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}
