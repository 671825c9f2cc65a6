package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpstage"
	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/supervise"
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
	mcpServer               string
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
	prompt, err := a.readPrompt(ctx, fs.Args())
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	if f.agentName != "cursor" || f.fallback != "" || f.transcript != "" || fs.Changed("fallback-after-retries") {
		return a.runAgentTurn(ctx, fs, f, prompt)
	}
	return a.runTurn(ctx, f, prompt)
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

// planTurn checks the flags, probes the binary (its --version answer may
// come from the version cache) and resolves the model: everything that can
// fail before the agent starts, which --json reports as an error object
// rather than a turn.
func (a *app) planTurn(ctx context.Context, f runFlags, prompt string) (probe.Report, cursor.Turn, error) {
	t := cursor.Turn{Prompt: prompt, Resume: f.resume, PartialOutput: f.partial}
	mode, err := cursor.ParseMode(f.mode)
	if err != nil {
		return probe.Report{}, t, err
	}
	if f.write {
		if f.mode != "" {
			return probe.Report{}, t, failure.New(failure.Input, "--write and --mode %s exclude each other", f.mode)
		}
		mode = cursor.ModeWrite
	}
	t.Mode = mode
	t.Tools = splitTools(f.allowTools)
	if f.effort != "" && f.model == "" {
		return probe.Report{}, t, failure.New(failure.Input, "--effort needs --model")
	}
	// The turn's own checks (mode, tools, ids) before anything runs.
	if _, err := cursor.Args(t); err != nil {
		return probe.Report{}, t, err
	}
	cfg, err := a.probeConfig()
	if err != nil {
		return probe.Report{}, t, err
	}
	// A turn skips the --version spawn (a Node.js start for the real
	// agent) when the binary's file is unchanged since it last answered.
	cfg.ReuseVersion = true
	report, err := probe.Probe(ctx, cfg)
	if err != nil {
		return report, t, err
	}
	if f.model != "" {
		if t.Model, err = a.resolveModel(ctx, cfg, report, f.model, f.effort); err != nil {
			return report, t, err
		}
	}
	_, err = cursor.Args(t)
	return report, t, err
}

// splitTools splits --allow-tools at commas, trimming each name; the names
// themselves are checked by cursor.Args.
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

// resolveModel maps --model and --effort to a catalog id. A bracketed id
// passes through untouched, so it needs no catalog.
func (a *app) resolveModel(ctx context.Context, cfg probe.Config, report probe.Report, model, effort string) (string, error) {
	if strings.Contains(model, "[") && effort == "" {
		return model, nil
	}
	catalog, err := probe.Models(ctx, cfg, report, false)
	if err != nil {
		return "", err
	}
	id, _, err := probe.ResolveModel(catalog.Models, model, effort)
	return id, err
}

// turnWriter renders a turn's events as they arrive: NDJSON on stdout for
// --json; otherwise the assistant's text on stdout and everything else,
// compact, on stderr. Rendering runs on a goroutine of its own, so on a
// busy stream decoding (the reader's goroutine) and encoding overlap: the
// reader collects the events of each burst of lines and hands the batch
// over when it has decoded everything read so far (agent's OnDrained).
type turnWriter struct {
	asJSON bool
	// quiet drops the agent's text from human output (a review prints its
	// verdict instead).
	quiet  bool
	out    *bufio.Writer
	events *event.Writer // --json: event.NewWriter on out
	errOut io.Writer

	mu      sync.Mutex         // guards pending: the reader's, and a heartbeat's warnings
	pending []event.Event      // events of the current burst
	batches chan []event.Event // to the writer goroutine
	done    chan struct{}      // closed when the writer has written every batch

	// stop ends the turn when stdout cannot be written (the reader went
	// away): the writer's, which then drops everything, so the reader is
	// never left waiting.
	stop    context.CancelCauseFunc
	stopped bool

	// The writer's: the bytes of assistant text written, and whether human
	// output ended with a newline.
	text      int64
	textEnded bool
}

// writerBatches bounds the batches in flight: a writer that falls behind
// makes the reader wait, so memory stays bounded.
const writerBatches = 4

func newTurnWriter(asJSON bool, stdout, stderr io.Writer, stop context.CancelCauseFunc) *turnWriter {
	w := &turnWriter{asJSON: asJSON, out: bufio.NewWriterSize(stdout, 64<<10), errOut: stderr,
		batches: make(chan []event.Event, writerBatches), done: make(chan struct{}), stop: stop}
	if asJSON {
		w.events = event.NewWriter(w.out)
	}
	go w.write()
	return w
}

// maxBatch bounds the events of one batch: a fast agent's stream is one
// endless burst, handed over in pieces this size.
const maxBatch = 64

// event is turn.Options.OnEvent: it collects, and hands over a full batch.
func (w *turnWriter) event(e event.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, e)
	if len(w.pending) == maxBatch {
		w.handOver()
	}
}

// warning renders a warning of cursorkit's own, from any goroutine, until
// close.
func (w *turnWriter) warning(warn event.Warning) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, event.Event{Type: event.TypeWarning, Warning: &warn})
	w.handOver()
}

// drained is turn.Options.OnDrained: the burst is over, hand it over.
func (w *turnWriter) drained() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handOver()
}

func (w *turnWriter) handOver() {
	if len(w.pending) > 0 {
		w.batches <- w.pending
		w.pending = make([]event.Event, 0, maxBatch)
	}
}

// close hands over what is left and waits until everything is written;
// the caller then owns out again.
func (w *turnWriter) close() {
	w.drained()
	close(w.batches)
	<-w.done
}

// write is the writer goroutine: every batch rendered, then flushed. A
// write that fails stops the turn; later batches are dropped.
func (w *turnWriter) write() {
	defer close(w.done)
	for batch := range w.batches {
		if w.stopped {
			continue
		}
		for _, e := range batch {
			w.render(e)
		}
		if err := w.out.Flush(); err != nil {
			w.stopped = true
			w.stop(errStdoutClosed)
		}
	}
}

func (w *turnWriter) render(e event.Event) {
	if w.asJSON {
		_ = w.events.Write(e) // a failed write shows at the Flush
		return
	}
	switch e.Type {
	case event.TypeText:
		if w.quiet {
			return
		}
		_, _ = w.out.WriteString(e.Text)
		w.text += int64(len(e.Text))
		w.textEnded = strings.HasSuffix(e.Text, "\n")
	case event.TypeThinking:
		if e.Subtype == "completed" {
			fmt.Fprintln(w.errOut, "· thinking done")
		}
	case event.TypeToolStarted:
		fmt.Fprintf(w.errOut, "· %s\n", e.Tool.Summary())
	case event.TypeToolCompleted:
		status := e.Tool.Status
		if status == "" {
			status = "done"
		}
		fmt.Fprintf(w.errOut, "· tool %s %s\n", e.Tool.Name, status)
	case event.TypeWarning:
		fmt.Fprintf(w.errOut, "· warning %s: %s\n", e.Warning.Code, e.Warning.Message)
	case event.TypeInit:
		fmt.Fprintf(w.errOut, "· session %s, model %s\n", e.Init.SessionID, orDash(e.Init.Model))
	case event.TypeFallbackEngaged:
		f := e.Fallback
		fmt.Fprintf(w.errOut, "· fallback: %s failed (%s); the prompt goes to %s now (transcript: %v)\n",
			f.PrimaryAgent, f.FailureCategory, f.FallbackAgent, f.ContextTransferred)
	}
}

func (a *app) runTurn(ctx context.Context, f runFlags, prompt string) int {
	var entry *mcpstage.Entry
	if f.mcpServer != "" {
		e, err := readMCPServer(f.mcpServer)
		if err != nil {
			return a.fail(f.asJSON, err)
		}
		entry = &e
	}
	report, req, err := a.planTurn(ctx, f, prompt)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	opts := cursor.TurnDefaults()
	opts.FirstLineTimeout, opts.IdleTimeout, opts.TotalTimeout = f.firstLine, f.idle, f.total
	opts.ExitGrace = f.exitGrace
	opts.Dir = f.cwd
	opts.Env = os.Environ()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	w := newTurnWriter(f.asJSON, a.stdout, a.stderr, stop)
	opts.OnEvent, opts.OnDrained = w.event, w.drained

	// A turn can stream hundreds of megabytes through a live heap of about
	// two: at the default GOGC the collector would run every few
	// megabytes. Two and a half times the live heap costs a megabyte of RSS
	// and a tenth of the time (make bench). An explicit GOGC wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(150)
	}
	started := time.Now()
	var o turn.Outcome
	if entry == nil {
		o, err = cursor.Run(ctx, report.Binary, req, opts)
	} else {
		// The MCP server is staged last, when nothing else can refuse the
		// turn before it starts; only then is its key approved
		// (--approve-mcps) and its tools allowed. It is released once the
		// agent's tree is gone, whatever ended the turn (a stop signal
		// included).
		var ran bool
		o, ran, err = a.runStaged(ctx, f.cwd, *entry, req, w, func(ctx context.Context, req cursor.Turn) (turn.Outcome, error) {
			started = time.Now()
			return cursor.Run(ctx, report.Binary, req, opts)
		})
		if !ran {
			w.close()
			return a.fail(f.asJSON, err)
		}
	}
	w.close()
	if f.asJSON {
		a.writeOutcome(w, o)
	} else if !w.textEnded && w.text > 0 {
		_ = w.out.WriteByte('\n')
	}
	_ = w.out.Flush()
	if !f.asJSON {
		printFooter(a.stderr, o, time.Since(started), err)
	}
	return failure.ExitCodeOf(err)
}

func printFooter(w io.Writer, o turn.Outcome, took time.Duration, verdict error) {
	status := o.Status
	if verdict != nil {
		status = fmt.Sprintf("%s (%s): %s", o.Status, failure.KindOf(verdict), verdict.Error())
	}
	fmt.Fprintf(w, "── %s in %s", status, took.Round(time.Millisecond))
	if o.SessionID != "" {
		fmt.Fprintf(w, " · session %s (--resume %s)", o.SessionID, o.SessionID)
	}
	if o.Model != "" {
		fmt.Fprintf(w, " · model %s", o.Model)
	}
	if u := o.Usage; u.Reported {
		fmt.Fprintf(w, " · tokens in %s out %s", tokens(u.InputTokens), tokens(u.OutputTokens))
	}
	fmt.Fprintln(w)
	p := o.Process
	if verdict != nil && p.StderrTail != "" && (p.Ending == supervise.Exited || p.Ending == supervise.SpawnFailed) {
		fmt.Fprintf(w, "agent stderr (last lines):\n%s\n", lastLines(p.StderrTail, 10))
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
