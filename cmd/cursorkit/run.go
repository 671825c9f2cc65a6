package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/stream"
	"github.com/cursorkit/cursorkit/supervise"
)

const runUsage = "run [flags] [--] [PROMPT]"

// Defaults of a prompt turn (SPEC.md "Defaults").
const (
	defaultFirstLineTimeout = 30 * time.Second
	defaultIdleTimeout      = 120 * time.Second
)

// maxPromptBytes bounds a prompt read from stdin, so a runaway pipe fails
// as input instead of exhausting memory.
const maxPromptBytes = 16 << 20

// runFlags are the flags of `cursorkit run`.
type runFlags struct {
	asJSON                  bool
	model, effort, mode     string
	write, partial          bool
	resume, cwd, allowTools string
	firstLine, idle, total  time.Duration
	exitGrace               time.Duration
}

func runRun(ctx context.Context, a *app, args []string) int {
	var f runFlags
	fs := newFlags("run")
	fs.BoolVar(&f.asJSON, "json", false, "print NDJSON events on stdout, ending with an outcome line")
	fs.StringVar(&f.model, "model", "", "model `ID` or name, resolved through the catalog (auto and default are refused)")
	fs.StringVar(&f.effort, "effort", "", "reasoning `EFFORT` for --model (low, medium, high, xhigh...)")
	fs.StringVar(&f.mode, "mode", "", "read-only mode: ask or plan (the default is plan)")
	fs.BoolVar(&f.write, "write", false, "coding mode: the agent may edit files and run commands (--force)")
	fs.StringVar(&f.resume, "resume", "", "continue the session `ID` a previous run reported")
	fs.StringVar(&f.cwd, "cwd", "", "run the agent in `DIR`")
	fs.StringVar(&f.allowTools, "allow-tools", "", "comma-separated tool `NAMES` allowed besides the mode's (e.g. mcp,getMcpTools)")
	fs.BoolVar(&f.partial, "partial", false, "ask the agent for partial output (--stream-partial-output)")
	fs.DurationVar(&f.firstLine, "first-line-timeout", defaultFirstLineTimeout, "fail when the agent prints no line within `D` (0: off)")
	fs.DurationVar(&f.idle, "idle-timeout", defaultIdleTimeout, "fail when the agent stays silent for `D` (0: off)")
	fs.DurationVar(&f.total, "timeout", 0, "fail when the turn takes longer than `D` (0: off)")
	fs.DurationVar(&f.exitGrace, "exit-grace", supervise.DefaultExitGrace, "after the result, wait `D` for the agent to exit before stopping it")
	if code, ok := a.parseFlags(fs, runUsage, args); !ok {
		return code
	}
	if err := checkSupervisionFlags(fs, f.cwd, "first-line-timeout", "idle-timeout", "timeout", "exit-grace"); err != nil {
		return a.fail(f.asJSON, err)
	}
	prompt, err := a.readPrompt(fs.Args())
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	return a.runTurn(ctx, f, prompt)
}

// readPrompt takes the prompt from the one positional argument or, when it
// is absent or "-", from stdin. The prompt is never echoed in errors.
func (a *app) readPrompt(args []string) (string, error) {
	if len(args) > 1 {
		return "", failure.New(failure.Input, "run takes one PROMPT argument (quote it), got %d", len(args))
	}
	var prompt string
	if len(args) == 1 && args[0] != "-" {
		prompt = args[0]
	} else {
		data, err := io.ReadAll(io.LimitReader(a.stdin, maxPromptBytes+1))
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

// turnPlan is what runTurn starts: the binary the probe chose, the agent's
// argv, and the tool policy of the mode.
type turnPlan struct {
	report probe.Report
	cfg    probe.Config
	args   []string
	policy stream.Policy
	model  string
}

// planTurn checks the flags, probes the binary and resolves the model.
func (a *app) planTurn(ctx context.Context, f runFlags) (turnPlan, error) {
	var tp turnPlan
	mode, err := stream.ParseMode(f.mode)
	if err != nil {
		return tp, err
	}
	if f.write {
		if f.mode != "" {
			return tp, failure.New(failure.Input, "--write and --mode %s exclude each other", f.mode)
		}
		mode = stream.ModeWrite
	}
	extra, err := stream.ParseToolList(f.allowTools)
	if err != nil {
		return tp, err
	}
	if tp.policy, err = stream.NewPolicy(mode, extra...); err != nil {
		return tp, err
	}
	if f.effort != "" && f.model == "" {
		return tp, failure.New(failure.Input, "--effort needs --model")
	}

	if tp.cfg, err = a.probeConfig(); err != nil {
		return tp, err
	}
	// A turn skips the --version spawn (a Node.js start for the real
	// agent) when the binary's file is unchanged since it last answered;
	// no cache directory just means probing every time.
	tp.cfg.ReuseVersion = true
	if tp.report, err = probe.Probe(ctx, tp.cfg); err != nil {
		return tp, err
	}
	if f.model != "" {
		if tp.model, err = a.resolveModel(ctx, tp, f.model, f.effort); err != nil {
			return tp, err
		}
	}
	tp.args, err = stream.Args(stream.ArgsOptions{Mode: mode, Model: tp.model, Resume: f.resume, PartialOutput: f.partial})
	return tp, err
}

// resolveModel maps --model and --effort to a catalog id. A bracketed id
// passes through untouched, so it needs no catalog.
func (a *app) resolveModel(ctx context.Context, tp turnPlan, model, effort string) (string, error) {
	if strings.Contains(model, "[") && effort == "" {
		return model, nil
	}
	catalog, err := probe.Models(ctx, tp.cfg, tp.report, false)
	if err != nil {
		return "", err
	}
	id, _, err := probe.ResolveModel(catalog.Models, model, effort)
	return id, err
}

// turnWriter renders a turn's outputs as they arrive: NDJSON on stdout for
// --json; otherwise the assistant's text on stdout and everything else,
// compact, on stderr. It is used from the reader goroutine only, then from
// runTurn after the session ended.
type turnWriter struct {
	asJSON bool
	out    *bufio.Writer
	errOut io.Writer
	buf    []byte
	// textEnded tracks whether human text output ended with a newline.
	textEnded bool
}

// jsonLineSlack is room enough for the members of an output line around
// its text, when the text needs little escaping.
const jsonLineSlack = 512

func (w *turnWriter) write(o stream.Output) {
	if w.asJSON {
		// Encode straight into the writer's free space when the line
		// surely fits (most of the stream: text pieces of a few KiB),
		// saving a copy per line; otherwise through w.buf.
		if w.out.Available() >= len(o.Text)+jsonLineSlack {
			b := append(o.AppendJSON(w.out.AvailableBuffer()), '\n')
			_, _ = w.out.Write(b)
			return
		}
		w.buf = o.AppendJSON(w.buf[:0])
		w.buf = append(w.buf, '\n')
		_, _ = w.out.Write(w.buf)
		return
	}
	switch o.Type {
	case stream.OutputText:
		_, _ = w.out.WriteString(o.Text)
		w.textEnded = strings.HasSuffix(o.Text, "\n")
	case stream.OutputThinking:
		if o.Thinking != nil && o.Thinking.Subtype == "completed" {
			fmt.Fprintln(w.errOut, "· thinking done")
		}
	case stream.OutputToolStarted:
		fmt.Fprintf(w.errOut, "· %s\n", o.Tool.Summary())
	case stream.OutputToolCompleted:
		status := "done"
		if o.Tool.Result != nil && o.Tool.Result.Status != "" {
			status = o.Tool.Result.Status
		}
		fmt.Fprintf(w.errOut, "· tool %s %s\n", o.Tool.Name, status)
	case stream.OutputWarning:
		fmt.Fprintf(w.errOut, "· warning %s: %s\n", o.Warning.Code, o.Warning.Message)
	case stream.OutputInit:
		if o.Init != nil {
			fmt.Fprintf(w.errOut, "· session %s, model %s\n", o.Init.SessionID, orDash(o.Init.Model))
		}
	}
}

func (a *app) runTurn(ctx context.Context, f runFlags, prompt string) int {
	tp, err := a.planTurn(ctx, f)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	plan, err := shim.Build(tp.report.Binary.Resolution, tp.args, shim.OptionsFromOS())
	if err != nil {
		return a.fail(f.asJSON, err)
	}

	// The CLI owns reaping: with the subreaper on (Linux), a double-forked
	// or setsid helper of the agent comes back to us and is killed on stop.
	_ = launch.EnableSubreaper()

	w := &turnWriter{asJSON: f.asJSON, out: bufio.NewWriterSize(a.stdout, 64<<10), errOut: a.stderr}
	started := time.Now()
	turn, o, fellBack := a.superviseTurn(ctx, f, tp, plan, prompt, w)
	if o.Ending == supervise.SpawnFailed && fellBack != nil {
		// SPEC: without an override, a cursor-agent whose file vanished
		// between the probe and the start is retried once as cursor.
		turn, o, _ = a.superviseTurn(ctx, f, tp, *fellBack, prompt, w)
	}

	verdict := turnVerdict(turn, o)
	outcome := turn.Outcome(verdict)
	for _, warn := range o.Warnings {
		code, msg, _ := strings.Cut(warn, ": ")
		ow := stream.Warning{Code: code, Message: msg}
		if msg == "" {
			ow.Message = warn
		}
		outcome.Warnings = append(outcome.Warnings, ow)
		w.write(stream.Output{Type: stream.OutputWarning, Warning: ow})
	}
	if f.asJSON {
		line, _ := outcome.MarshalJSON()
		_, _ = w.out.Write(append(line, '\n'))
	} else if !w.textEnded && turn.TextLen() > 0 {
		_ = w.out.WriteByte('\n')
	}
	_ = w.out.Flush()
	if !f.asJSON {
		printFooter(a.stderr, outcome, o, time.Since(started), verdict)
	}
	return failure.ExitCodeOf(verdict)
}

// superviseTurn runs one supervised turn of plan. When the start fails
// because cursor-agent's file is absent and nothing is configured, it also
// returns the plan of the `cursor` candidate to retry with.
func (a *app) superviseTurn(ctx context.Context, f runFlags, tp turnPlan, plan shim.Plan, prompt string, w *turnWriter) (*stream.Turn, supervise.Outcome, *shim.Plan) {
	turn := stream.NewTurn(tp.policy)
	// Every output is written before the next line is fed.
	turn.ReuseText()
	opts := supervise.Options{
		Dir:              f.cwd,
		Env:              os.Environ(),
		Stdin:            strings.NewReader(prompt),
		FirstLineTimeout: f.firstLine,
		IdleTimeout:      f.idle,
		TotalTimeout:     f.total,
		StopGrace:        supervise.DefaultStopGrace,
		ExitGrace:        f.exitGrace,
		DrainGrace:       2 * time.Second,
		OnLine: func(line []byte) error {
			outs, err := turn.Feed(line)
			for _, o := range outs {
				w.write(o)
			}
			if err != nil {
				return err
			}
			if turn.Done() {
				return supervise.ErrFinished
			}
			return nil
		},
		OnDrained: func() { _ = w.out.Flush() },
		OnOversizedLine: func(size int64) {
			w.write(stream.Output{Type: stream.OutputWarning, Warning: stream.Warning{
				Code: supervise.WarnOversizedLine, Message: fmt.Sprintf("skipped a stdout line of %d bytes", size)}})
		},
	}
	s, err := supervise.Start(ctx, plan, opts)
	if err != nil {
		o := supervise.Outcome{Ending: supervise.SpawnFailed, Err: err, ExitCode: -1}
		return turn, o, a.cursorFallback(ctx, tp, err)
	}
	return turn, s.Wait(), nil
}

// cursorFallback returns the plan for the `cursor` PATH candidate when the
// failed start was of cursor-agent from PATH, its file absent, with no
// override configured; nil otherwise.
func (a *app) cursorFallback(ctx context.Context, tp turnPlan, startErr error) *shim.Plan {
	res := tp.report.Binary.Resolution
	if tp.cfg.Override != "" || res.Source != discovery.SourcePath || res.Candidate != "cursor-agent" ||
		!errors.Is(startErr, fs.ErrNotExist) {
		return nil
	}
	env := discovery.EnvFromOS()
	next, err := discovery.Resolve(ctx, discovery.Candidate{Value: "cursor", Source: discovery.SourcePath}, env, discovery.OSFS())
	if err != nil {
		return nil
	}
	plan, err := shim.Build(next, tp.args, shim.OptionsFromOS())
	if err != nil {
		return nil
	}
	return &plan
}

// turnVerdict decides a turn: a protocol or policy failure seen in the
// stream wins; then a supervisor verdict that is not the child exiting by
// itself (deadline, cancel, spawn failure); then the stream's own verdict
// on how the agent ended.
func turnVerdict(turn *stream.Turn, o supervise.Outcome) error {
	if o.Ending == supervise.Aborted || o.Ending == supervise.SpawnFailed {
		return o.Err
	}
	if o.Ending != supervise.Exited {
		return o.Err
	}
	if o.Finished && o.Err == nil {
		// Exited after the result, possibly late-closed: the stream decides.
		return turn.EndWithStderr(0, true, o.StderrTail)
	}
	if o.Signal != 0 {
		return o.Err
	}
	return turn.EndWithStderr(o.ExitCode, true, o.StderrTail)
}

func printFooter(w io.Writer, outcome stream.Outcome, o supervise.Outcome, took time.Duration, verdict error) {
	status := outcome.Status
	if verdict != nil {
		status = fmt.Sprintf("%s (%s): %s", outcome.Status, failure.KindOf(verdict), verdict.Error())
	}
	fmt.Fprintf(w, "── %s in %s", status, took.Round(time.Millisecond))
	if outcome.SessionID != "" {
		fmt.Fprintf(w, " · session %s (--resume %s)", outcome.SessionID, outcome.SessionID)
	}
	if outcome.Model != "" {
		fmt.Fprintf(w, " · model %s", outcome.Model)
	}
	if u := outcome.Usage; u.Reported {
		fmt.Fprintf(w, " · tokens in %s out %s", tokens(u.InputTokens), tokens(u.OutputTokens))
	}
	fmt.Fprintln(w)
	if verdict != nil && o.StderrTail != "" && (o.Ending == supervise.Exited || o.Ending == supervise.SpawnFailed) {
		fmt.Fprintf(w, "agent stderr (last lines):\n%s\n", lastLines(o.StderrTail, 10))
	}
}

func tokens(n *int64) string {
	if n == nil {
		return "?"
	}
	return fmt.Sprint(*n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
