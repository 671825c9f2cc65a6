package supervise

import (
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// Ending says how a supervised run ended.
type Ending string

const (
	// Exited: the child ended by itself (possibly after Finish and a
	// late close, which stays a success).
	Exited Ending = "exited"
	// FirstLineTimeout: no complete stdout line arrived within
	// Options.FirstLineTimeout.
	FirstLineTimeout Ending = "first_line_timeout"
	// IdleTimeout: stdout stayed silent (no byte) for Options.IdleTimeout.
	IdleTimeout Ending = "idle_timeout"
	// TotalTimeout: the run outlived Options.TotalTimeout.
	TotalTimeout Ending = "total_timeout"
	// Cancelled: the context given to Start was cancelled.
	Cancelled Ending = "cancelled"
	// Aborted: the caller called Session.Abort (a policy stop, for example).
	Aborted Ending = "aborted"
	// SpawnFailed: the child could not be started (Run only).
	SpawnFailed Ending = "spawn_failed"
)

// StopResult says what stopping the child took.
type StopResult string

const (
	// StopNone: supervise never had to stop the child.
	StopNone StopResult = "none"
	// StopGraceful: the child exited within the grace after the polite
	// request (SIGTERM+SIGCONT to the group, CTRL_BREAK on Windows).
	StopGraceful StopResult = "graceful"
	// StopForced: the whole tree had to be killed.
	StopForced StopResult = "forced"
	// StopAlreadyExited: a stop was decided but the child had already
	// exited by itself.
	StopAlreadyExited StopResult = "already_exited"
)

// Codes of Outcome.Warnings.
const (
	// WarnLateClose: the child did not exit within ExitGrace after Finish
	// and was stopped; the outcome stays successful.
	WarnLateClose = "late_close"
	// WarnPipesHeld: the child exited but a leftover process kept its
	// stdout or stderr open past the drain grace; supervise stopped the
	// tree and closed its ends of the pipes.
	WarnPipesHeld = "pipes_held"
	// WarnOversizedLine: at least one stdout line exceeded MaxLineBytes
	// and was skipped (or, with PassThrough, passed on in pieces).
	WarnOversizedLine = "oversized_line"
)

// The other warning codes: stopping the tree did not go as planned.
const (
	warnStopFailed = "stop_failed" // the polite stop request failed; the tree was killed at once
	warnKillFailed = "kill_failed" // the tree kill, the wait after it or releasing the child reported an error
)

// Outcome is the verdict on one supervised run.
type Outcome struct {
	Ending Ending `json:"ending"`
	// Err is nil when the run succeeded (the child exited 0 by itself, or
	// was late-closed after Finish); otherwise it carries a failure kind:
	// timeout for the deadlines, cancelled, process for a non-zero exit,
	// died for a signal supervise did not send, the kind given to Abort,
	// and the launch error's kind (missing_cli, input, setup...) for a
	// spawn failure.
	Err error `json:"-"`
	// ExitCode is the child's exit code, -1 when it died of a signal or
	// never ran.
	ExitCode int `json:"exitCode"`
	// Signal is the POSIX signal that ended the child, 0 when none.
	Signal int        `json:"signal,omitempty"`
	Stop   StopResult `json:"stop"`
	// StopTook is the time from the stop decision (a deadline firing,
	// cancel, Abort, the exit grace) to the tree being killed and the
	// direct child reaped; zero when no stop happened.
	StopTook time.Duration `json:"stopTook,omitempty"`
	// TimeToFirstLine is zero when no complete line arrived.
	TimeToFirstLine time.Duration `json:"timeToFirstLine,omitempty"`
	Duration        time.Duration `json:"duration"`
	// Lines counts delivered stdout lines; Bytes counts every stdout byte
	// read (the oversized_line warning counts lines longer than
	// MaxLineBytes).
	Lines      int64  `json:"lines"`
	Bytes      int64  `json:"bytes"`
	StderrTail string `json:"stderrTail,omitempty"`
	// Warnings are what the run gave up on without failing. The codes are
	// stable:
	// late_close, pipes_held, oversized_line (the Warn constants),
	// stop_failed (the polite stop failed; the tree was killed at once),
	// kill_failed (the tree kill, the wait after it or releasing the child
	// reported an error) and launch's own (launch.WarnNoJob, ...).
	Warnings []failure.Warning `json:"warnings,omitempty"`
	// Finished reports whether OnLine returned ErrFinished before the run
	// ended.
	Finished bool `json:"finished"`
}
