package supervise

import (
	"errors"
	"io"
	"time"
)

// Graces a caller may want (Options.StopGrace, Options.ExitGrace); Options
// never applies them by itself, like os/exec's WaitDelay.
const (
	DefaultStopGrace = 5 * time.Second
	DefaultExitGrace = 15 * time.Second
)

// Sizes applied when the Options field is zero.
const (
	defaultMaxLineBytes    = 16 << 20
	defaultStderrTailBytes = 16 << 10
)

// ErrFinished is what OnLine returns when the line ended the child's work
// (for an agent, its final result event). It is not an error of the run:
// from then on only ExitGrace applies, after which a child still running
// is stopped with a late_close warning and the run still succeeds; so does
// a cancel in that window.
var ErrFinished = errors.New("supervise: the child's work is finished")

// LineMode says how stdout is cut into the lines OnLine receives.
type LineMode int

// A line longer than MaxLineBytes is skipped and reported to
// OnOversizedLine, except with PassThrough.
const (
	TrimEndings LineMode = iota // each line without its "\n" and one "\r" before it
	KeepEndings                 // each line exactly as read, terminator included
	// PassThrough is KeepEndings byte for byte: an oversized line is
	// delivered in pieces as it is read, and still reported at its end.
	PassThrough
)

// Options configures one supervised run. The zero value is usable and
// behaves like os/exec: no deadlines, and a stop kills the whole tree at
// once. Every duration is off when zero.
type Options struct {
	// Dir, Env and Stdin are launch.Options'.
	Dir   string
	Env   []string
	Stdin io.Reader

	// FirstLineTimeout bounds the time to the first complete stdout line.
	// IdleTimeout bounds stdout silence, reset by every byte; while a
	// FirstLineTimeout is pending it governs alone, so inactivity counts
	// from the first line (without one, from start). TotalTimeout bounds
	// the whole run. After the work is finished only ExitGrace applies.
	FirstLineTimeout time.Duration
	IdleTimeout      time.Duration
	TotalTimeout     time.Duration

	// StopGrace is the wait between the polite stop request (SIGTERM and
	// SIGCONT to the group; CTRL_BREAK on Windows) and the tree kill after
	// a deadline or a cancel; zero kills at once.
	StopGrace time.Duration
	// ExitGrace is how long the child may take to exit after ErrFinished
	// before it is stopped (late_close); zero stops it at once.
	ExitGrace time.Duration
	// DrainGrace is how long the pipes may stay open after the child
	// exited by itself (held by a leftover) before the tree is killed and
	// they are closed. It is at least 100 ms, the time a clean exit's pipes
	// take to reach EOF.
	DrainGrace time.Duration

	// MaxLineBytes bounds a stdout line, terminator excluded; 16 MiB when zero.
	MaxLineBytes int
	// StderrTailBytes bounds Outcome.StderrTail; 16 KiB when zero.
	StderrTailBytes int
	// Lines says how stdout is cut; TrimEndings when zero.
	Lines LineMode

	// OnStarted, when set, is called once with the direct child's PID
	// before any of its output is read (so it must be quick): where a
	// caller records the process for a later stop.
	OnStarted func(pid int)
	// OnLine is called from one goroutine for every stdout line, a final
	// unterminated one included; line is valid only during the call, and
	// stdout is not read while it runs. It returns nil to go on,
	// ErrFinished, or another error to stop the whole tree at once and end
	// the run as Aborted with it (see Session.Abort); then it is not
	// called again (stdout is still drained).
	OnLine func(line []byte) error
	// OnDrained, when set, is called (like OnLine) after a line whenever
	// every stdout byte read so far was delivered, before the reader may
	// wait again: a buffering pass-through flushes there, so a burst of
	// lines costs one write.
	OnDrained func()
	// OnOversizedLine is called (like OnLine) with each oversized line's length.
	OnOversizedLine func(size int64)
	// Stderr, when set, receives every stderr byte as it arrives, besides
	// the tail; its write errors are ignored, never stalling the child.
	Stderr io.Writer
}

func (o Options) normalized() Options {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = defaultMaxLineBytes
	}
	if o.StderrTailBytes <= 0 {
		o.StderrTailBytes = defaultStderrTailBytes
	}
	return o
}
