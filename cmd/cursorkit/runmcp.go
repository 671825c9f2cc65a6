package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
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

// runStaged runs p's turn with its MCP server staged into the worktree of
// dir (docs/contract.md, "run --mcp-server"): play runs the agent once the
// lease's key is the turn's one MCP server. The lease's warnings are
// events on w from then on, and all of them are in the outcome. started is
// false when the agent never started (a refused stage): err is then the
// run's failure, the error object alone, so no warning is rendered.
func (a *app) runStaged(ctx context.Context, dir string, p runPlan, w *turnWriter,
	play func(context.Context, agents.Turn) (turn.Outcome, error)) (o turn.Outcome, started bool, err error) {
	every, err := a.mcpHeartbeatEvery()
	if err != nil {
		return o, false, err
	}
	var playing atomic.Bool // the OnWarning of the heartbeat's goroutine reads it
	opts := mcpstage.RunOptions{
		HeartbeatEvery: every,
		OnWarning: func(warn mcpstage.Warning) {
			if playing.Load() {
				w.warning(eventWarning(warn))
			}
		},
	}
	warns, err := mcpstage.Run(ctx, dir, *p.mcp, opts, func(ctx context.Context, lease mcpstage.Lease) error {
		req := p.turn
		req.MCPServers = []string{lease.Key}
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
