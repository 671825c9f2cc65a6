package main

import (
	"bufio"
	"context"
	"encoding/json/v2"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

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

	mu      sync.Mutex         // guards pending and closed: the reader's, and a heartbeat's or the bridge's warnings
	pending []event.Event      // events of the current burst
	closed  bool               // close was called: what comes later is not rendered
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
	guard     lineGuard // the agent's lines never read as cursorkit's own
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
// close; one that comes later (a heartbeat or a bridge refusal racing the
// end of the turn) is dropped.
func (w *turnWriter) warning(warn event.Warning) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
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
	w.mu.Lock()
	w.handOver()
	w.closed = true
	close(w.batches)
	w.mu.Unlock()
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
		w.flush()
	}
	if !w.stopped {
		w.guard.Flush(w.out)
		w.flush()
	}
}

// flush writes out what is buffered; a write that fails stops the turn.
func (w *turnWriter) flush() {
	if err := w.out.Flush(); err != nil {
		w.stopped = true
		w.stop(errStdoutClosed)
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
		w.guard.Write(w.out, forTerminal(e.Text))
		w.text += int64(len(e.Text))
		w.textEnded = strings.HasSuffix(e.Text, "\n")
	case event.TypeThinking:
		if e.Subtype == "completed" {
			fmt.Fprintln(w.errOut, "· thinking done")
		}
	case event.TypeToolStarted:
		fmt.Fprintf(w.errOut, "· %s\n", forTerminal(e.Tool.Summary()))
	case event.TypeToolCompleted:
		status := e.Tool.Status
		if status == "" {
			status = "done"
		}
		fmt.Fprintf(w.errOut, "· tool %s %s\n", forTerminal(e.Tool.Name), forTerminal(status))
	case event.TypeWarning:
		fmt.Fprintf(w.errOut, "· warning %s: %s\n", e.Warning.Code, oneLine(e.Warning.Message))
	case event.TypeInit:
		fmt.Fprintf(w.errOut, "· session %s, model %s\n", oneLine(e.Init.SessionID), oneLine(orDash(e.Init.Model)))
	case event.TypeFallbackEngaged:
		f := e.Fallback
		fmt.Fprintf(w.errOut, "· fallback: %s failed (%s); the prompt goes to %s now (transcript: %v)\n",
			f.PrimaryAgent, f.FailureCategory, f.FallbackAgent, f.ContextTransferred)
	}
}

func printFooter(w io.Writer, o turn.Outcome, took time.Duration, verdict error) {
	status := o.Status
	if verdict != nil {
		status = fmt.Sprintf("%s (%s): %s", o.Status, failure.KindOf(verdict), oneLine(verdict.Error()))
	}
	fmt.Fprintf(w, "── %s in %s", status, took.Round(time.Millisecond))
	if o.SessionID != "" {
		fmt.Fprintf(w, " · session %s (--resume %s)", oneLine(o.SessionID), oneLine(o.SessionID))
	}
	if o.Model != "" {
		fmt.Fprintf(w, " · model %s", oneLine(o.Model))
	}
	if u := o.Usage; u.Reported {
		fmt.Fprintf(w, " · tokens in %s out %s", tokens(u.InputTokens), tokens(u.OutputTokens))
	}
	fmt.Fprintln(w)
	p := o.Process
	if verdict != nil && p.StderrTail != "" && (p.Ending == supervise.Exited || p.Ending == supervise.SpawnFailed) {
		fmt.Fprintf(w, "agent stderr (last lines):\n%s\n", forTerminal(lastLines(p.StderrTail, 10)))
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

// finishTurn prints the end of a turn `run` started: the outcome line with
// --json, else the text's last newline and the footer. It returns the
// exit code of err.
func (a *app) finishTurn(w *turnWriter, o turn.Outcome, took time.Duration, err error) int {
	if w.asJSON {
		if merr := json.MarshalEncode(w.events.Encoder(), o); merr != nil {
			fmt.Fprintf(a.stderr, "cursorkit: writing the outcome: %v\n", merr)
		}
	} else if !w.textEnded && w.text > 0 {
		_ = w.out.WriteByte('\n')
	}
	_ = w.out.Flush()
	if !w.asJSON {
		printFooter(a.stderr, o, took, err)
	}
	return failure.ExitCodeOf(err)
}
