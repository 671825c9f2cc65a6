package main

import (
	"context"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/mcpstage"
	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/turn"
)

const runUsage = "run [flags] [--] [PROMPT]"

// maxPromptBytes bounds a prompt read from stdin, so a runaway pipe fails
// as input instead of exhausting memory.
const maxPromptBytes = 16 << 20

// runFlags are the flags of `cursorkit run`.
type runFlags struct {
	asJSON                  bool
	model, effort, mode     string
	write, partial          bool
	resume, cwd, allowTools string
	mcpServer, tools        string
	agentName, fallback     string
	transcript              string
	fallbackAfterRetries    int
	firstLine, idle, total  time.Duration
	exitGrace               time.Duration
}

func runRun(ctx context.Context, a *app, args []string) int {
	var f runFlags
	fs := newFlags("run")
	fs.BoolVar(&f.asJSON, "json", a.json, "print NDJSON events on stdout, ending with an outcome line")
	fs.StringVar(&f.model, "model", "", "model `ID` or name, resolved through the catalog (auto and default are refused)")
	fs.StringVar(&f.effort, "effort", "", "reasoning `EFFORT` for --model (low, medium, high, xhigh...)")
	fs.StringVar(&f.mode, "mode", "", "read-only mode: ask or plan (the default is plan)")
	fs.BoolVar(&f.write, "write", false, "coding mode: the agent may edit files and run commands (--force)")
	fs.StringVar(&f.resume, "resume", "", "continue the session `ID` a previous run reported")
	fs.StringVar(&f.cwd, "cwd", "", "run the agent in `DIR`")
	fs.StringVar(&f.allowTools, "allow-tools", "", "comma-separated tool `NAMES` allowed besides the mode's (e.g. mcp,getMcpTools)")
	fs.BoolVar(&f.partial, "partial", false, "ask the agent for partial output (--stream-partial-output)")
	fs.StringVar(&f.agentName, "agent", "cursor", "the agent CLI to run: cursor, claude, codex or gemini (cursorkit agents lists them; --mcp-server, --partial and --effort are cursor's only)")
	fs.StringVar(&f.fallback, "fallback", "", "on a retryable model-selection failure, hand the prompt to `cursor[:MODEL]` (docs/contract.md)")
	fs.StringVar(&f.transcript, "transcript", "", "with --fallback: the conversation so far, a JSON array of {role, content} messages in `FILE`")
	fs.IntVar(&f.fallbackAfterRetries, "fallback-after-retries", 0, "with --fallback: hand off at the primary's `N`th retry of a rate limit, quota or auth failure, stopping it (0: only once it fails)")
	fs.StringVar(&f.mcpServer, "mcp-server", "", "stage the MCP server `FILE` describes ({command, args, env}) for the turn and allow its tools")
	fs.StringVar(&f.tools, "tools", "", "publish the tools `FILE` describes ({\"tools\": [{name, description, inputSchema, command, timeout}]}) to the agent for the turn, as fn_NAME; a call runs its command, no shell, with the input JSON on stdin and stdout as the result")
	fs.DurationVar(&f.firstLine, "first-line-timeout", cursor.TurnDefaults().FirstLineTimeout, "fail when the agent prints no line within `D` (0: off)")
	fs.DurationVar(&f.idle, "idle-timeout", cursor.TurnDefaults().IdleTimeout, "fail when the agent stays silent for `D` (0: off)")
	fs.DurationVar(&f.total, "timeout", 0, "fail when the turn takes longer than `D` (0: off)")
	fs.DurationVar(&f.exitGrace, "exit-grace", cursor.TurnDefaults().ExitGrace, "after the result, wait `D` for the agent to exit before stopping it")
	if code, ok := a.parseFlags(fs, runUsage, args); !ok {
		return code
	}
	if err := checkSupervisionFlags(fs, f.cwd, "first-line-timeout", "idle-timeout", "timeout", "exit-grace"); err != nil {
		return a.fail(f.asJSON, err)
	}
	launch.PrepareGuard(ctx) // while the prompt is read and the agent found
	prompt, err := a.readPrompt(ctx, fs.Args())
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	p, err := a.planRun(ctx, fs, f, prompt)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	return a.runTurn(ctx, fs, f, p)
}

// readPrompt takes the prompt from the one positional argument or, when it
// is absent or "-", from stdin. The prompt is never echoed in errors.
// Reading stdin stops at once when ctx is cancelled (Ctrl-C while a slow
// pipe has not ended).
func (a *app) readPrompt(ctx context.Context, args []string) (string, error) {
	if len(args) > 1 {
		return "", failure.New(failure.Input, "give one PROMPT argument (quote it), got %d", len(args))
	}
	var prompt string
	if len(args) == 1 && args[0] != "-" {
		prompt = args[0]
	} else {
		data, err := readAllOrCancel(ctx, io.LimitReader(a.stdin, maxPromptBytes+1))
		if failure.Is(err, failure.Cancelled) {
			return "", err
		}
		if err != nil {
			return "", failure.Wrap(failure.Input, err, "reading the prompt from stdin")
		}
		if len(data) > maxPromptBytes {
			return "", failure.New(failure.Input, "the prompt on stdin is longer than %d bytes", maxPromptBytes)
		}
		prompt = string(data)
	}
	if strings.TrimSpace(prompt) == "" {
		return "", failure.New(failure.Input, "the prompt is empty: give it as an argument or on stdin")
	}
	return prompt, nil
}

// readAllOrCancel is io.ReadAll of r unless ctx ends first. A Read that
// never returns cannot be interrupted: its goroutine is left to the end of
// the process, which follows at once in the CLI.
func readAllOrCancel(ctx context.Context, r io.Reader) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := io.ReadAll(r)
		done <- result{data, err}
	}()
	select {
	case res := <-done:
		return res.data, res.err
	case <-ctx.Done():
		return nil, failure.Wrap(failure.Cancelled, context.Cause(ctx), "cancelled while reading the prompt from stdin")
	}
}

// runPlan is a turn `run` is ready to start: everything that can fail
// before the agent starts has been checked, which --json reports as an
// error object rather than a turn.
type runPlan struct {
	agent      agents.Agent
	res        discovery.Resolution
	configured bool
	turn       agents.Turn
	// mcp is the --mcp-server entry, staged around the turn.
	mcp *mcpstage.Entry
	// tools are --tools', published by a bridge around the turn; nil
	// without the flag. The caller closes them.
	tools *mcpbridge.CommandSet
	// fallback is --fallback's, nil without one.
	fallback *agents.Fallback
}

// cursorOnlyFlags are the run flags that ask for an option only the
// Cursor CLI has: each option is named by its flag.
func cursorOnlyFlags() []agents.Option {
	return []agents.Option{agents.OptionMCPServer, agents.OptionPartialOutput, agents.OptionEffort}
}

// checkRunFlags refuses the flags that mean nothing together, before any
// file is read.
func checkRunFlags(fs *pflag.FlagSet, f runFlags, ag agents.Agent) error {
	for _, o := range cursorOnlyFlags() {
		if fs.Changed(strings.TrimPrefix(string(o), "--")) {
			if err := ag.Offers(o); err != nil {
				return err
			}
		}
	}
	withFallback := f.fallback != "" || f.transcript != "" || fs.Changed("fallback-after-retries")
	if f.fallback != "" {
		if err := agents.CheckFallbackPrimary(ag); err != nil {
			return err
		}
	}
	switch {
	case fs.Changed("mcp-server") && withFallback:
		return failure.New(failure.Input, "--mcp-server cannot be combined with --agent or --fallback")
	case fs.Changed("tools") && withFallback:
		return failure.New(failure.Input, "--tools cannot be combined with --fallback: the fallback's turn would not have the tools")
	case f.transcript != "" && f.fallback == "":
		return failure.New(failure.Input, "--transcript needs --fallback: it is what the fallback is told of the conversation")
	case fs.Changed("fallback-after-retries") && f.fallback == "":
		return failure.New(failure.Input, "--fallback-after-retries needs --fallback: it says when to hand off")
	}
	return nil
}

// planRun checks the flags, reads the files they name, finds the agent
// (Cursor through its probe; the others by discovery alone: their
// --version is `cursorkit agents`', and a turn reports a broken binary
// itself), resolves the model and prepares the fallback. Every file is
// read before anything is started (the Cursor probe included). On error,
// the --tools it read are closed.
func (a *app) planRun(ctx context.Context, fs *pflag.FlagSet, f runFlags, prompt string) (p runPlan, err error) {
	defer func() {
		if err != nil && p.tools != nil {
			_ = p.tools.Close()
			p.tools = nil
		}
	}()
	if p.agent, err = agents.Lookup(f.agentName); err != nil {
		return p, err
	}
	if err := checkRunFlags(fs, f, p.agent); err != nil {
		return p, err
	}
	fbModel, err := parseFallback(f.fallback)
	if err != nil {
		return p, err
	}
	var history []fallback.Message
	if f.transcript != "" {
		if history, err = readTranscript(f.transcript); err != nil {
			return p, err
		}
	}
	if f.mcpServer != "" {
		e, err := readMCPServer(f.mcpServer)
		if err != nil {
			return p, err
		}
		p.mcp = &e
	}
	if f.tools != "" {
		if p.tools, err = readTools(ctx, f.tools, f.cwd); err != nil {
			return p, err
		}
	}
	if p.turn, err = turnOf(f, prompt); err != nil {
		return p, err
	}
	if err := a.findAgent(ctx, f, &p); err != nil {
		return p, err
	}
	if f.fallback != "" {
		fb := a.planFallback(ctx, fbModel)
		fb.Transcript, fb.AfterRetries, fb.Purpose = history, f.fallbackAfterRetries, "run"
		p.fallback = &fb
	}
	return p, nil
}

// turnOf is the turn the flags ask for, the model aside.
func turnOf(f runFlags, prompt string) (agents.Turn, error) {
	t := agents.Turn{Prompt: prompt, Resume: f.resume, Tools: splitTools(f.allowTools), PartialOutput: f.partial}
	mode, err := turn.ParseMode(f.mode)
	if err != nil {
		return t, err
	}
	if f.write {
		if f.mode != "" {
			return t, failure.New(failure.Input, "--write and --mode %s exclude each other", f.mode)
		}
		mode = turn.ModeWrite
	}
	t.Mode = mode
	return t, nil
}

// findAgent finds p's agent and sets the turn's model, checking the turn
// (mode, tools, ids) before anything runs.
func (a *app) findAgent(ctx context.Context, f runFlags, p *runPlan) error {
	if p.agent.Name != cursor.Name {
		p.turn.Model = f.model
		if _, err := p.agent.Args(p.turn); err != nil {
			return err
		}
		res, err := p.agent.Find(ctx, "", a.getenv, discovery.EnvFromOS(), discovery.OSFS())
		p.res, p.configured = res, res.Source != discovery.SourcePath
		return err
	}
	if f.effort != "" && f.model == "" {
		return failure.New(failure.Input, "--effort needs --model")
	}
	if _, err := p.agent.Args(p.turn); err != nil {
		return err
	}
	cfg, report, err := a.probeCursor(ctx)
	if err != nil {
		return err
	}
	p.res, p.configured = report.Binary.Resolution, report.Binary.Configured
	if f.model != "" {
		if p.turn.Model, _, err = probe.ResolveTurnModel(ctx, cfg, report, f.model, f.effort); err != nil {
			return err
		}
	}
	_, err = p.agent.Args(p.turn)
	return err
}

// probeCursor probes the Cursor CLI for a turn: the binary's --version
// answer is reused while its file is unchanged, sparing a Node.js start
// for the real agent.
func (a *app) probeCursor(ctx context.Context) (probe.Config, probe.Report, error) {
	cfg, err := a.probeConfig()
	if err != nil {
		return cfg, probe.Report{}, err
	}
	cfg.ReuseVersion = true
	report, err := probe.Probe(ctx, cfg)
	return cfg, report, err
}

// splitTools splits --allow-tools at commas, trimming each name; the names
// themselves are checked by the agent's Args.
func splitTools(list string) []string {
	if strings.TrimSpace(list) == "" {
		return nil
	}
	names := strings.Split(list, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	return names
}

// supervision is the turn options of an agent whose defaults are defaults:
// the duration flags given override them, the total bound is always the
// flag's.
func (f runFlags) supervision(fs *pflag.FlagSet, defaults turn.Options, w *turnWriter) turn.Options {
	opts := defaults
	if fs.Changed("first-line-timeout") {
		opts.FirstLineTimeout = f.firstLine
	}
	if fs.Changed("idle-timeout") {
		opts.IdleTimeout = f.idle
	}
	if fs.Changed("exit-grace") {
		opts.ExitGrace = f.exitGrace
	}
	opts.TotalTimeout = f.total
	opts.Dir = f.cwd
	opts.Env = os.Environ()
	opts.OnEvent, opts.OnDrained = w.event, w.drained
	return opts
}

// runTurn runs the planned turn and prints it: through agents.Agent.Run,
// around the staged MCP server when there is one, or in a conversation
// with the fallback.
func (a *app) runTurn(ctx context.Context, fs *pflag.FlagSet, f runFlags, p runPlan) int {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	w := newTurnWriter(f.asJSON, a.stdout, a.stderr, stop)
	opts := f.supervision(fs, p.agent.TurnDefaults(), w)

	// A turn can stream hundreds of megabytes through a live heap of about
	// two: at the default GOGC the collector would run every few
	// megabytes. Two and a half times the live heap costs a megabyte of RSS
	// and a tenth of the time (make bench). An explicit GOGC wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(150)
	}
	var refusals bridgeRefusals
	if p.tools != nil {
		// Closed after the bridge (deferred first): the bridge's sessions
		// end, then every call still running has its tree killed.
		defer p.tools.Close()
		b, err := mcpbridge.Open(ctx, p.tools.Tools(), mcpbridge.Options{OnRefused: refusals.add(w)})
		if err != nil {
			w.close()
			return a.fail(f.asJSON, err)
		}
		defer b.Close()
		s := b.Server()
		p.turn.Bridge = &s
	}
	started := time.Now()
	var o turn.Outcome
	var err error
	switch staged := p.stagedServers(); {
	case len(staged) > 0:
		// The MCP servers are staged last, when nothing else can refuse
		// the turn before it starts; only then are their keys approved
		// (--approve-mcps) and their tools allowed. They are released once
		// the agent's tree is gone, whatever ended the turn (a stop signal
		// included).
		var ran bool
		o, ran, err = a.runStaged(ctx, f.cwd, p, staged, w, func(ctx context.Context, t agents.Turn) (turn.Outcome, error) {
			started = time.Now()
			return p.agent.Run(ctx, p.res, p.configured, t, opts)
		})
		if !ran {
			w.close()
			return a.fail(f.asJSON, err)
		}
	case p.fallback != nil:
		fb := *p.fallback
		fb.Options, fb.OnEvent = f.supervision(fs, cursor.TurnDefaults(), w), w.event
		conv, cerr := agents.WithFallback(ctx, agents.NewSession(p.agent, p.res, p.configured, p.turn, opts), fb)
		if cerr != nil {
			w.close()
			return a.fail(f.asJSON, cerr)
		}
		o, err = conv.Prompt(ctx, p.turn.Prompt)
		_ = conv.Close()
	default:
		o, err = p.agent.Run(ctx, p.res, p.configured, p.turn, opts)
	}
	o.Warnings = append(o.Warnings, refusals.warnings()...)
	w.close()
	return a.finishTurn(w, o, time.Since(started), err)
}
