package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpstage"
)

const mcpUsage = "mcp stage [--env K=V]... [--owner-pid PID] -- COMMAND [ARG...] | heartbeat LEASE | release LEASE | reconcile | status  [--cwd DIR] [--json]"

// mcpCall is one `cursorkit mcp` command line, parsed.
type mcpCall struct {
	asJSON   bool
	sub      string
	operands []string // after the subcommand, before --
	command  []string // stage: the server's command, after --
	env      []string // stage: --env K=V
}

// runMCP is `cursorkit mcp SUBCOMMAND`: staging MCP servers into a
// worktree's .cursor/mcp.json (docs/contract.md, "MCP staging").
func runMCP(ctx context.Context, a *app, args []string) int {
	c, s, code, ok := a.parseMCP(ctx, args)
	if !ok {
		return code
	}
	switch c.sub {
	case "stage":
		return a.mcpStage(ctx, s, c)
	case "heartbeat", "release":
		return a.mcpLeaseStep(ctx, s, c)
	case "reconcile":
		return a.mcpReconcile(ctx, s, c)
	case "status":
		return a.mcpStatus(ctx, s, c)
	}
	return a.usageError(c.asJSON, mcpUsage, fmt.Errorf("unknown mcp subcommand %q", c.sub))
}

// parseMCP parses the command line and makes the worktree's Stager. When
// ok is false, the failure is printed and code is the exit code.
func (a *app) parseMCP(ctx context.Context, args []string) (c mcpCall, s *mcpstage.Stager, code int, ok bool) {
	var cwd string
	var ownerPID int
	fs := newFlags("mcp")
	fs.BoolVar(&c.asJSON, "json", a.json, "print JSON on stdout")
	fs.StringVar(&cwd, "cwd", "", "the worktree `DIR` (default: the current directory)")
	fs.StringArrayVar(&c.env, "env", nil, "stage: an environment entry `K=V` of the server (repeatable)")
	fs.IntVar(&ownerPID, "owner-pid", 0, "stage: the `PID` whose life the lease follows (default: the caller's job, the outermost of cursorkit's ancestors in its process group, so a script staging through $(…), a pipeline or xargs owns the lease, not the subshell or helper; the parent when that is in another group, and on Windows; a script started without job control passes $$)")
	if code, ok := a.parseFlags(fs, mcpUsage, args); !ok {
		return c, nil, code, false
	}
	rest := fs.Args()
	dash := fs.ArgsLenAtDash()
	if len(rest) == 0 || dash == 0 {
		return c, nil, a.usageError(c.asJSON, mcpUsage, errors.New("mcp needs a subcommand: stage, heartbeat, release, reconcile or status")), false
	}
	c.sub = rest[0]
	if dash > 0 {
		c.operands, c.command = rest[1:dash], rest[dash:]
	} else {
		c.operands = rest[1:]
	}
	if c.sub != "stage" && (len(c.env) > 0 || fs.Changed("owner-pid") || dash > 0) {
		return c, nil, a.usageError(c.asJSON, mcpUsage, fmt.Errorf("--env, --owner-pid and a command after -- are stage's; mcp %s takes none", c.sub)), false
	}
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return c, nil, a.fail(c.asJSON, failure.Wrap(failure.Input, err, "the current directory is unusable")), false
		}
		cwd = wd
	}
	opts := mcpstage.Options{OwnerPID: ownerPID}
	if c.sub == "stage" && ownerPID == 0 {
		// A command-line stage outlives this process: the lease follows
		// the caller (an orchestrator, a shell script) instead.
		opts.OwnerPID = mcpstage.CallerOwner(ctx)
	}
	s, err := mcpstage.New(ctx, cwd, opts)
	if err != nil {
		return c, nil, a.fail(c.asJSON, err), false
	}
	return c, s, 0, true
}

// mcpStage is `mcp stage -- COMMAND [ARG...]`.
func (a *app) mcpStage(ctx context.Context, s *mcpstage.Stager, c mcpCall) int {
	if len(c.operands) > 0 {
		return a.usageError(c.asJSON, mcpUsage, errors.New("mcp stage takes the server's command after --"))
	}
	if len(c.command) == 0 {
		return a.usageError(c.asJSON, mcpUsage, errors.New("mcp stage needs the server's command after --"))
	}
	entry := mcpstage.Entry{Command: c.command[0], Args: append([]string{}, c.command[1:]...)}
	for _, kv := range c.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return a.usageError(c.asJSON, mcpUsage, fmt.Errorf("--env wants K=V, got an entry without a name or '='"))
		}
		if entry.Env == nil {
			entry.Env = map[string]string{}
		}
		entry.Env[k] = v
	}
	lease, err := s.Stage(ctx, entry)
	if err != nil {
		return a.fail(c.asJSON, err)
	}
	if c.asJSON {
		a.writeJSON(lease)
	} else {
		fmt.Fprintf(a.stdout, "lease: %s\nserver-key: %s\n", lease.ID, lease.Key)
		fmt.Fprintf(a.stderr, "next: cursorkit mcp heartbeat %s (every %s), cursorkit mcp release %s\n", lease.ID, mcpstage.HeartbeatEvery, lease.ID)
	}
	return failure.ExitOK
}

// mcpLeaseStep is `mcp heartbeat LEASE` and `mcp release LEASE`.
func (a *app) mcpLeaseStep(ctx context.Context, s *mcpstage.Stager, c mcpCall) int {
	if len(c.operands) != 1 || strings.TrimSpace(c.operands[0]) == "" {
		return a.usageError(c.asJSON, mcpUsage, fmt.Errorf("mcp %s takes one lease id", c.sub))
	}
	id := c.operands[0]
	var err error
	if c.sub == "heartbeat" {
		err = s.Heartbeat(ctx, id)
	} else {
		err = s.Release(ctx, id)
	}
	if err != nil {
		return a.fail(c.asJSON, err)
	}
	if c.asJSON {
		a.writeJSON(map[string]string{"lease": id, "done": c.sub})
	}
	return failure.ExitOK
}

// mcpReconcile is `mcp reconcile`.
func (a *app) mcpReconcile(ctx context.Context, s *mcpstage.Stager, c mcpCall) int {
	if len(c.operands) > 0 {
		return a.usageError(c.asJSON, mcpUsage, errors.New("mcp reconcile takes no operand"))
	}
	r, err := s.Reconcile(ctx)
	if err != nil {
		return a.fail(c.asJSON, err)
	}
	if c.asJSON {
		a.writeJSON(r)
		return failure.ExitOK
	}
	for _, id := range r.Dropped {
		fmt.Fprintf(a.stdout, "dropped dead lease %s\n", id)
	}
	switch {
	case r.Quarantined:
		st, _ := s.Status(ctx)
		if st.Quarantine != nil {
			fmt.Fprintf(a.stdout, "quarantined: %s\nto recover: %s\n", st.Quarantine.Reason, st.Quarantine.Recovery)
		}
	case r.Cleaned || r.Unexcluded:
		fmt.Fprintln(a.stdout, "clean: nothing staged")
	default:
		fmt.Fprintln(a.stdout, "consistent")
	}
	return failure.ExitOK
}

// mcpStatus is `mcp status`.
func (a *app) mcpStatus(ctx context.Context, s *mcpstage.Stager, c mcpCall) int {
	if len(c.operands) > 0 {
		return a.usageError(c.asJSON, mcpUsage, errors.New("mcp status takes no operand"))
	}
	st, err := s.Status(ctx)
	if err != nil {
		return a.fail(c.asJSON, err)
	}
	if c.asJSON {
		a.writeJSON(st)
		return failure.ExitOK
	}
	printMCPStatus(a, st)
	return failure.ExitOK
}

func printMCPStatus(a *app, st mcpstage.Status) {
	w := a.stdout
	fmt.Fprintf(w, "worktree: %s (%s)\n", st.Root, st.Git)
	fmt.Fprintf(w, "staged: %t\nexcluded: %t\nmade .cursor/: %t\n", st.Staged, st.Excluded, st.MadeDir)
	if st.Baseline != nil {
		if st.Baseline.Present {
			fmt.Fprintf(w, "baseline: %d bytes\n", st.Baseline.Bytes)
		} else {
			fmt.Fprintln(w, "baseline: no config")
		}
	}
	fmt.Fprintf(w, "config: present %t, cursorkit keys %d\n", st.ConfigPresent, len(st.ConfigKeys))
	if st.ConfigError != "" {
		fmt.Fprintf(w, "config error: %s\n", st.ConfigError)
	}
	if st.OperatorEdit {
		fmt.Fprintln(w, "operator edit: yes (the baseline is not restored over it)")
	}
	if st.PendingWrite != "" {
		fmt.Fprintf(w, "pending write: %s (settled by the next stage, release or reconcile)\n", st.PendingWrite)
	}
	if st.Lock != nil {
		if st.Lock.Foreign {
			fmt.Fprintln(w, "lock: held, no owner file")
		} else {
			fmt.Fprintf(w, "lock: pid %d on %s since %s\n", st.Lock.PID, st.Lock.Hostname, st.Lock.AcquiredAt.UTC().Format("2006-01-02T15:04:05Z"))
		}
	}
	if q := st.Quarantine; q != nil {
		fmt.Fprintf(w, "quarantine: since %s: %s\nto recover: %s\n", q.Since.UTC().Format("2006-01-02T15:04:05Z"), q.Reason, q.Recovery)
	}
	for _, l := range st.Leases {
		alive := "?"
		if l.OwnerAlive != nil {
			alive = fmt.Sprint(*l.OwnerAlive)
		}
		fmt.Fprintf(w, "lease %s  %s  %s  owner pid %d (alive %s)  heartbeat %s\n", l.ID, l.Key, l.Command, l.Owner.PID, alive, l.HeartbeatAt.UTC().Format("2006-01-02T15:04:05Z"))
	}
}
