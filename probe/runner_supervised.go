package probe

import (
	"bytes"
	"context"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
)

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
	o := supervise.Run(ctx, plan, supervise.Options{
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
		took:      o.Duration,
	}
	switch o.Ending {
	case supervise.SpawnFailed:
		r.startErr = o.Err
	case supervise.Cancelled:
		r.cancelled = true
	case supervise.TotalTimeout, supervise.FirstLineTimeout, supervise.IdleTimeout:
		r.timedOut = true
	}
	return r
}
