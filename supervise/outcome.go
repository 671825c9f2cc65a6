package supervise

import (
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// Ending says how a supervised run ended.
type Ending string

const (
	Exited           Ending = "exited"             // by itself (a late close too, which stays a success)
	FirstLineTimeout Ending = "first_line_timeout" // no complete stdout line within Options.FirstLineTimeout
	IdleTimeout      Ending = "idle_timeout"       // no stdout byte for Options.IdleTimeout
	TotalTimeout     Ending = "total_timeout"      // the run outlived Options.TotalTimeout
	Cancelled        Ending = "cancelled"          // the context given to Start was cancelled
	Aborted          Ending = "aborted"            // Session.Abort, or OnLine's error
	SpawnFailed      Ending = "spawn_failed"       // the child could not be started
)

// StopResult says what stopping the child took.
type StopResult string

const (
	StopNone          StopResult = "none"           // supervise never had to stop the child
	StopGraceful      StopResult = "graceful"       // it exited within the grace after the polite request
	StopForced        StopResult = "forced"         // the whole tree had to be killed
	StopAlreadyExited StopResult = "already_exited" // a stop was decided, but it had exited by itself
)

// Codes of Outcome.Warnings.
const (
	WarnLateClose     = "late_close"     // stopped after ExitGrace ran out; still a success
	WarnPipesHeld     = "pipes_held"     // a leftover held the exited child's pipes past the drain grace
	WarnOversizedLine = "oversized_line" // stdout lines over MaxLineBytes were skipped (or passed in pieces)

	warnStopFailed = "stop_failed" // the polite stop failed; the tree was killed at once
	warnKillFailed = "kill_failed" // the tree kill, the wait after it or the release failed
)

// Outcome is the verdict on one supervised run.
type Outcome struct {
	Ending   Ending     `json:"ending"`
	ExitCode int        `json:"exitCode"`        // -1 when a signal ended the child, or it never ran
	Signal   int        `json:"signal,omitzero"` // the POSIX signal that ended the child
	Stop     StopResult `json:"stop"`
	// StopTook is the time from the stop decision (a deadline, cancel,
	// Abort, the exit grace) to the tree killed and the child reaped.
	StopTook        time.Duration `json:"stopTook,omitzero"`
	TimeToFirstLine time.Duration `json:"timeToFirstLine,omitzero"` // zero without a complete line
	Duration        time.Duration `json:"duration"`
	Lines           int64         `json:"lines"` // delivered stdout lines
	Bytes           int64         `json:"bytes"` // every stdout byte read
	StderrTail      string        `json:"stderrTail,omitempty"`
	// Warnings are what the run gave up on without failing, with stable
	// codes: the Warn constants, stop_failed, kill_failed and launch's own
	// (launch.WarnNoJob, ...).
	Warnings []failure.Warning `json:"warnings,omitempty"`
	Finished bool              `json:"finished"` // OnLine returned ErrFinished
}
