package probe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// runner runs one Cursor CLI command on a resolved binary under a bound.
// The production runner plans it with shim and supervises it; tests fake it.
type runner interface {
	run(ctx context.Context, res discovery.Resolution, args []string, timeout time.Duration) runResult
}

// runResult is what one bounded run produced.
type runResult struct {
	// stdout is what the child printed, at most the runner's cap.
	stdout []byte
	// truncated reports that stdout went past the cap.
	truncated bool
	// stderr is a bounded tail.
	stderr string
	// exitCode is the child's exit code, -1 when it never ran to an end.
	exitCode int
	// signal is the POSIX signal that ended it, 0 when none.
	signal int
	// timedOut reports that the bound fired and the tree was killed.
	timedOut bool
	// cancelled reports that ctx ended first.
	cancelled bool
	// refused is a plan refusal: nothing was started.
	refused error
	// startErr is a start failure: nothing runs.
	startErr error
	took     time.Duration
}

// ok reports a run that exited 0 by itself.
func (r runResult) ok() bool {
	return r.refused == nil && r.startErr == nil && !r.timedOut && !r.cancelled && r.exitCode == 0 && r.signal == 0
}

// classify turns a failed run into a candidate outcome and a bounded
// detail naming the cause: ENOENT, EACCES, timeout or the exit code, with
// the agent's own words (its stderr tail, else stdout) when it said any.
func classify(r runResult, what string, timeout time.Duration) (outcome, why string) {
	said := agentMessage(r.stdout, []byte(r.stderr))
	switch {
	case r.cancelled:
		return outcomeError, "cancelled"
	case r.refused != nil:
		return outcomeRefused, detail.Bound("refused: " + r.refused.Error())
	case r.startErr != nil:
		return classifyStartErr(r.startErr)
	case r.timedOut:
		return outcomeTimeout, detail.Bound(fmt.Sprintf("timeout: %s did not finish within %s; its process tree was killed", what, timeout))
	case r.signal != 0:
		return outcomeExit, detail.Bound(fmt.Sprintf("killed by signal %d", r.signal) + detailSuffix(said))
	case r.exitCode == 9009 || strings.Contains(strings.ToLower(said), "as an internal or external command"):
		// cmd.exe ran the shim, but the program the shim names is gone
		// (9009 is cmd's exit code for "not recognized").
		return outcomeNotFound, detail.Bound(fmt.Sprintf("ENOENT: exit %d: the shim's target is missing", r.exitCode) + detailSuffix(said))
	case r.exitCode == 127:
		// A shell's "command not found" (a wrapper script whose target is gone).
		return outcomeNotFound, detail.Bound("ENOENT: exit 127" + detailSuffix(said))
	case r.exitCode == 126:
		// A shell's "found but cannot execute".
		return outcomePermission, detail.Bound("EACCES: exit 126" + detailSuffix(said))
	}
	return outcomeExit, detail.Bound(fmt.Sprintf("exit %d", r.exitCode) + detailSuffix(said))
}

// classifyStartErr names why a child could not be started.
func classifyStartErr(err error) (outcome, why string) {
	switch {
	case errors.Is(err, fs.ErrNotExist) || failure.KindOf(err) == failure.MissingCLI:
		return outcomeNotFound, detail.Bound("ENOENT: " + err.Error())
	case errors.Is(err, fs.ErrPermission):
		return outcomePermission, detail.Bound("EACCES: " + err.Error())
	}
	return outcomeError, detail.Bound("start failed: " + err.Error())
}

// classifyResolveErr names why discovery found no launchable file.
func classifyResolveErr(err error) (outcome, why string) {
	msg := err.Error()
	switch {
	case failure.KindOf(err) == failure.Input:
		return outcomeRefused, detail.Bound("refused: " + msg)
	case strings.Contains(msg, "not executable"):
		return outcomePermission, detail.Bound("EACCES: " + msg)
	}
	return outcomeNotFound, detail.Bound("ENOENT: " + msg)
}
