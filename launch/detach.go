package launch

import (
	"context"
	"os"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/shim"
)

// DetachOptions says how to start a plan detached.
type DetachOptions struct {
	// Dir and Env are as in Options: Env nil means os.Environ(), and
	// cursorkit's own secrets are removed either way (childenv.Clean). No
	// launch token is added: the child belongs to no tree of this program.
	Dir string
	Env []string
	// Stdout and Stderr name files the child's output is appended to,
	// created (0600) when missing; empty means the null device. The same
	// path for both shares one open file. Stdin is always the null device.
	Stdout, Stderr string
}

// Detached is a program started by StartDetached: its identity (so it can be
// checked with Alive and stopped with Kill or Signal long after, from any
// process) and what the start had to give up on.
type Detached struct {
	procid.Identity
	Warnings []failure.Warning `json:"warnings,omitempty"`
}

// StartDetached starts plan fully detached from this process and returns
// at once; nothing of the child is left to this process to wait for or
// close. The child survives this process's exit and death, SIGKILL
// included: it is not owned by the launch guard (Linux) nor by any job this
// package makes (Windows), and nothing kills it but a stop through its
// Identity (docs/architecture.md "Detached starts").
//
// POSIX: a new session (setsid), so no controlling terminal and neither
// this process's group nor its session; stdin from /dev/null, stdout and
// stderr to the named files or /dev/null. This process stays its parent
// until it exits: a goroutine waits for the child so it never lingers as a
// zombie (it ends when the child does). Windows: DETACHED_PROCESS (no
// console), CREATE_NEW_PROCESS_GROUP and, when this process runs in a job
// that allows it, CREATE_BREAKAWAY_FROM_JOB; in a job that forbids
// breakaway the child starts in that job, with WarnNoBreakaway.
//
// ctx bounds only the start. Errors are Start's (failure.Input for a bad
// plan or options, failure.MissingCLI, failure.Setup, failure.Process), and
// failure.Input when an output file cannot be opened.
func StartDetached(ctx context.Context, plan shim.Command, opts DetachOptions) (Detached, error) {
	_, cmd, err := prepare(ctx, plan, Options{Dir: opts.Dir, Env: opts.Env})
	if err != nil {
		return Detached{}, err
	}
	files, err := detachedStdio(opts.Stdout, opts.Stderr)
	if err != nil {
		return Detached{}, err
	}
	defer closeFiles(files...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[1], files[2]
	if err := ctx.Err(); err != nil {
		return Detached{}, failure.Wrap(failure.Cancelled, err, "launch cancelled before start")
	}
	return startDetached(ctx, cmd, plan)
}

// detachedStdio opens the child's stdin (the null device) and its stdout
// and stderr (the named files or the null device). The child gets copies:
// the caller closes these once it started.
func detachedStdio(stdout, stderr string) ([]*os.File, error) {
	in, err := os.Open(os.DevNull)
	if err != nil {
		return nil, failure.Wrap(failure.Resource, err, "cannot open %s", os.DevNull)
	}
	files := []*os.File{in}
	open := func(path string) (*os.File, error) {
		if path == "" {
			return os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		}
		return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	}
	out, err := open(stdout)
	if err != nil {
		closeFiles(files...)
		return nil, failure.Wrap(failure.Input, err, "cannot open the detached child's stdout file")
	}
	files = append(files, out)
	if stderr == stdout {
		return append(files, out), nil
	}
	errf, err := open(stderr)
	if err != nil {
		closeFiles(files...)
		return nil, failure.Wrap(failure.Input, err, "cannot open the detached child's stderr file")
	}
	return append(files, errf), nil
}
