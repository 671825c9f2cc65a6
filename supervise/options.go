package supervise

import (
	"io"
	"time"
)

// Defaults applied by Start to zero-valued Options fields.
const (
	DefaultStopGrace       = 5 * time.Second
	DefaultExitGrace       = 15 * time.Second
	DefaultDrainGrace      = 2 * time.Second
	DefaultMaxLineBytes    = 16 << 20
	DefaultStderrTailBytes = 16 << 10
)

// Options configures one supervised run. The zero value is usable: no
// deadlines, default graces and limits.
type Options struct {
	// Dir, Env and Stdin are passed to launch: the working directory, the
	// complete environment of the child, and what its stdin receives
	// (launch closes the child's stdin once Stdin is exhausted).
	Dir   string
	Env   []string
	Stdin io.Reader

	// FirstLineTimeout bounds the time from start to the first complete
	// stdout line. IdleTimeout bounds stdout silence: every byte read from
	// stdout resets it, so a long line still arriving counts as activity;
	// while a FirstLineTimeout is pending it governs alone, and the
	// inactivity deadline counts from the first line (without one, from
	// start). TotalTimeout bounds the whole run. Zero turns a deadline off.
	// After Finish only ExitGrace applies.
	FirstLineTimeout time.Duration
	IdleTimeout      time.Duration
	TotalTimeout     time.Duration

	// StopGrace is the wait between the polite stop request and the tree
	// kill: DefaultStopGrace when zero, no grace (kill at once) when
	// negative.
	StopGrace time.Duration
	// ExitGrace is how long the child may take to exit by itself after
	// Finish before it is stopped with a late_close warning:
	// DefaultExitGrace when zero, stop at once when negative.
	ExitGrace time.Duration
	// DrainGrace is how long stdout and stderr may stay open after the
	// child exited by itself (held by a leftover process) before the tree
	// is killed and the pipes closed: DefaultDrainGrace when zero, none
	// when negative.
	DrainGrace time.Duration

	// MaxLineBytes is the longest stdout line delivered, terminator
	// excluded: DefaultMaxLineBytes when zero or negative.
	MaxLineBytes int
	// StderrTailBytes bounds Outcome.StderrTail: DefaultStderrTailBytes
	// when zero, no tail when negative.
	StderrTailBytes int

	// OnLine is called sequentially, from one goroutine, for every stdout
	// line, including a final line without a terminator. The trailing "\n"
	// and one "\r" before it are trimmed unless KeepLineEndings is set.
	// line is only valid during the call. OnLine must not block for long:
	// stdout is not read while it runs.
	OnLine func(line []byte)
	// KeepLineEndings hands OnLine each line exactly as read, terminator
	// included, so a pass-through reproduces stdout byte for byte.
	KeepLineEndings bool
	// OnDrained, when set, is called (from the same goroutine as OnLine)
	// after a line whenever every stdout byte read so far has been
	// delivered, just before the reader may wait for the child again. A
	// pass-through that buffers its OnLine writes flushes there: output
	// leaves promptly, yet a burst of lines costs one write.
	OnDrained func()
	// OnOversizedLine is called (from the same goroutine as OnLine) with
	// the length of each line longer than MaxLineBytes, terminator
	// excluded; such a line is skipped and reading continues.
	OnOversizedLine func(size int64)
	// PassOversized, with KeepLineEndings, hands an oversized line to
	// OnLine in pieces as they are read instead of skipping it, the last
	// piece ending with the terminator, so a byte-for-byte pass-through
	// (cursorkit exec) never loses output and never holds more than a
	// read buffer of it. OnOversizedLine is still called at its end.
	PassOversized bool
	// Stderr, when set, receives every stderr byte as it arrives, besides
	// the bounded tail. Write errors are ignored so a broken pass-through
	// never stalls the child.
	Stderr io.Writer
}

// normalized returns o with defaults applied.
func (o Options) normalized() Options {
	if o.StopGrace == 0 {
		o.StopGrace = DefaultStopGrace
	}
	if o.ExitGrace == 0 {
		o.ExitGrace = DefaultExitGrace
	}
	if o.DrainGrace == 0 {
		o.DrainGrace = DefaultDrainGrace
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	if o.StderrTailBytes == 0 {
		o.StderrTailBytes = DefaultStderrTailBytes
	}
	return o
}

// nonNegative maps "negative means none" durations to zero.
func nonNegative(d time.Duration) time.Duration { return max(d, 0) }
