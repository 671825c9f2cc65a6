package supervise

import (
	"errors"
	"io"
	"time"
)

// Graces a caller may want; Options never applies them by itself (a zero
// duration means none, like os/exec's WaitDelay).
const (
	// DefaultStopGrace is a common wait between the polite stop request and
	// the tree kill.
	DefaultStopGrace = 5 * time.Second
	// DefaultExitGrace is a common wait, after the work is done, for the
	// child to exit by itself.
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
// is stopped with a late_close warning and the run still succeeds.
var ErrFinished = errors.New("supervise: the child's work is finished")

// LineMode says how stdout is cut into the lines OnLine receives.
type LineMode int

const (
	// TrimEndings delivers each line without its "\n" and one "\r" before
	// it. A line longer than MaxLineBytes is skipped and reported to
	// OnOversizedLine.
	TrimEndings LineMode = iota
	// KeepEndings delivers each line exactly as read, terminator included.
	// Oversized lines are skipped as with TrimEndings.
	KeepEndings
	// PassThrough is KeepEndings for a byte-for-byte pass-through: an
	// oversized line is delivered in pieces as it is read, the last piece
	// ending with its terminator, so no output is ever lost and no more
	// than a read buffer of it is held. OnOversizedLine is still called at
	// its end.
	PassThrough
)

// Options configures one supervised run. The zero value is usable and
// behaves like os/exec: no deadlines, and a stop kills the whole tree at
// once. Every duration is off when zero.
type Options struct {
	// Dir, Env and Stdin are passed to launch: the working directory, the
	// complete environment of the child (nil: this process's), and what its
	// stdin receives (launch closes the child's stdin once Stdin is
	// exhausted).
	Dir   string
	Env   []string
	Stdin io.Reader

	// FirstLineTimeout bounds the time from start to the first complete
	// stdout line. IdleTimeout bounds stdout silence: every byte read from
	// stdout resets it, so a long line still arriving counts as activity;
	// while a FirstLineTimeout is pending it governs alone, and the
	// inactivity deadline counts from the first line (without one, from
	// start). TotalTimeout bounds the whole run. After the work is
	// finished only ExitGrace applies.
	FirstLineTimeout time.Duration
	IdleTimeout      time.Duration
	TotalTimeout     time.Duration

	// StopGrace is the wait between the polite stop request (SIGTERM and
	// SIGCONT to the group; CTRL_BREAK on Windows) and the tree kill after
	// a deadline or a cancel. Zero kills at once.
	StopGrace time.Duration
	// ExitGrace is how long the child may take to exit by itself after
	// OnLine returned ErrFinished before it is stopped with a late_close
	// warning. Zero stops it at once.
	ExitGrace time.Duration
	// DrainGrace is how long stdout and stderr may stay open after the
	// child exited by itself (held by a leftover process) before the tree
	// is killed and the pipes closed; a couple of seconds suits an agent.
	// Zero (or anything shorter) still lets 100 ms pass, the time a clean
	// exit's pipes take to reach EOF, before leftovers are killed.
	DrainGrace time.Duration

	// MaxLineBytes is the longest stdout line delivered, terminator
	// excluded; 16 MiB when zero.
	MaxLineBytes int
	// StderrTailBytes bounds Outcome.StderrTail; 16 KiB when zero.
	StderrTailBytes int
	// Lines says how stdout is cut; TrimEndings when zero.
	Lines LineMode

	// OnStarted, when set, is called once with the direct child's PID
	// after it started and before any of its output is read (from the
	// starting goroutine: it delays the reading, so it must be quick). A
	// caller records the process there (an identity for a later stop).
	OnStarted func(pid int)
	// OnLine is called sequentially, from one goroutine, for every stdout
	// line, including a final line without a terminator. line is only
	// valid during the call. OnLine must not block for long: stdout is not
	// read while it runs. It returns nil to go on, ErrFinished when the work
	// is done, or any other error to stop the whole tree at once and end
	// the run as Aborted with that error (its failure kind is kept; an
	// error without one counts as failure.Unclassified). After an error other
	// than ErrFinished, OnLine is not called again (stdout is still drained).
	OnLine func(line []byte) error
	// OnDrained, when set, is called (from the same goroutine as OnLine)
	// after a line whenever every stdout byte read so far has been
	// delivered, just before the reader may wait for the child again. A
	// pass-through that buffers its writes flushes there: output leaves
	// promptly, yet a burst of lines costs one write.
	OnDrained func()
	// OnOversizedLine is called (from the same goroutine as OnLine) with
	// the length of each line longer than MaxLineBytes, terminator
	// excluded.
	OnOversizedLine func(size int64)
	// Stderr, when set, receives every stderr byte as it arrives, besides
	// the bounded tail. Write errors are ignored so a broken pass-through
	// never stalls the child.
	Stderr io.Writer
}

// normalized returns o with the size defaults applied.
func (o Options) normalized() Options {
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = defaultMaxLineBytes
	}
	if o.StderrTailBytes <= 0 {
		o.StderrTailBytes = defaultStderrTailBytes
	}
	return o
}

// nonNegative reads a negative duration as zero: none.
func nonNegative(d time.Duration) time.Duration { return max(d, 0) }
