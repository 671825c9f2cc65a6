package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
)

// runner runs one Cursor CLI command on a resolved binary under a bound.
// The production runner plans it with shim and supervises it; tests fake it.
type runner interface {
	run(ctx context.Context, res discovery.Resolution, args []string, timeout time.Duration) runResult
}

// runResult is what one bounded run produced.
type runResult struct {
	stdout    []byte // what the child printed, at most the runner's cap
	truncated bool   // stdout went past the cap
	stderr    string // a bounded tail
	exitCode  int    // -1 when it never ran to an end
	signal    int    // the POSIX signal that ended it, 0 when none
	timedOut  bool   // the bound fired and the tree was killed
	cancelled bool   // ctx ended first
	refused   error  // a plan refusal: nothing was started
	startErr  error  // a start failure: nothing runs
}

// ok reports a run that exited 0 by itself.
func (r runResult) ok() bool {
	return r.refused == nil && r.startErr == nil && !r.timedOut && !r.cancelled && r.exitCode == 0 && r.signal == 0
}

// Output bounds of a probe command.
const (
	maxProbeStdout     = 1 << 20
	maxProbeLine       = 64 << 10
	maxProbeStderrTail = 4 << 10
)

// supervisedRunner plans a command with shim and runs it under supervise:
// a total deadline, no stop grace (a probe is killed with its whole tree at
// once), no drain grace (a leftover holding the pipes after the command
// exited is killed as soon as what they hold is read), stdout kept up to
// maxProbeStdout in lines of at most maxProbeLine bytes, and a bounded
// stderr tail.
type supervisedRunner struct {
	shim shim.Options
	env  []string
}

func (s supervisedRunner) run(ctx context.Context, res discovery.Resolution, args []string, timeout time.Duration) runResult {
	plan, err := shim.Build(res, args, s.shim)
	if err != nil {
		return runResult{refused: err, exitCode: -1}
	}
	var out bytes.Buffer
	truncated := false
	o, runErr := supervise.Run(ctx, plan, supervise.Options{
		Env:             s.env,
		TotalTimeout:    timeout,
		MaxLineBytes:    maxProbeLine,
		StderrTailBytes: maxProbeStderrTail,
		Lines:           supervise.KeepEndings,
		OnLine: func(line []byte) error {
			if out.Len()+len(line) > maxProbeStdout {
				truncated = true
				return nil
			}
			out.Write(line)
			return nil
		},
		OnOversizedLine: func(int64) { truncated = true },
	})
	r := runResult{
		stdout:    out.Bytes(),
		truncated: truncated,
		stderr:    o.StderrTail,
		exitCode:  o.ExitCode,
		signal:    o.Signal,
	}
	switch o.Ending {
	case supervise.SpawnFailed:
		r.startErr = runErr
	case supervise.Cancelled:
		r.cancelled = true
	case supervise.TotalTimeout, supervise.FirstLineTimeout, supervise.IdleTimeout:
		r.timedOut = true
	}
	return r
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
