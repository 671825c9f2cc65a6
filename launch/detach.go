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
	// Dir and Env are as in Options, without a launch token: the child
	// belongs to no tree of this program.
	Dir string
	Env []string
	// Stdout and Stderr name files the child's output is appended to,
	// created (0600) when missing; empty means the null device; the same
	// path shares one open file. Stdin is the null device.
	Stdout, Stderr string
}

// Detached is a program started by StartDetached: its identity, to check
// and stop it long after from any process, and what the start gave up on.
type Detached struct {
	procid.Identity
	Warnings []failure.Warning `json:"warnings,omitempty"`
}

// StartDetached starts plan fully detached and returns at once; nothing of
// the child is left to this process to wait for or close. It is owned by
// neither the launch guard nor a job of this package, so it survives this
// process's exit and death, SIGKILL included, until a stop through its
// Identity (docs/architecture.md "Detached starts"). POSIX: a new session
// (setsid); this process stays its parent until it exits, a goroutine
// reaping the child so it never lingers as a zombie. Windows:
// DETACHED_PROCESS, CREATE_NEW_PROCESS_GROUP and, when this process's job
// allows it, CREATE_BREAKAWAY_FROM_JOB; in a job that forbids breakaway the
// child starts in that job, with WarnNoBreakaway. ctx bounds only the
// start. Errors are Start's, and failure.Input for an unopenable output.
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
	if err := cancelledBeforeStart(ctx); err != nil {
		return Detached{}, err
	}
	return startDetached(ctx, cmd, plan)
}

// detachedStdio opens the child's stdin (the null device), stdout and
// stderr, for the caller to close once the child has its copies.
func detachedStdio(stdout, stderr string) ([]*os.File, error) {
	in, err := os.Open(os.DevNull)
	if err != nil {
		return nil, failure.Wrap(failure.Resource, err, "cannot open %s", os.DevNull)
	}
	files := []*os.File{in}
	for _, out := range []struct{ name, path string }{{"stdout", stdout}, {"stderr", stderr}} {
		var f *os.File
		switch {
		case out.name == "stderr" && stderr == stdout:
			f = files[1]
		case out.path == "":
			f, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		default:
			f, err = os.OpenFile(out.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		}
		if err != nil {
			closeFiles(files...)
			return nil, failure.Wrap(failure.Input, err, "cannot open the detached child's %s file", out.name)
		}
		files = append(files, f)
	}
	return files, nil
}
