package jobs

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/shim"
)

// MaxPromptBytes bounds the prompt a background job hands its worker.
const MaxPromptBytes = 16 << 20

// promptFile is where a background job's prompt waits for its worker,
// readable by the user only; the worker removes it once read. The prompt
// never travels in argv or the environment.
func (s Store) promptFile(id string) string { return filepath.Join(s.runDir(id), "prompt") }

// workerLog is where a background job's worker writes its stdout and
// stderr.
func (s Store) workerLog(id string) string { return filepath.Join(s.runDir(id), "worker.log") }

// Start hands the prepared background job rec (task.Prepare with
// Spec.Background: state starting) to a detached worker and returns once
// the worker has started, long before the job ends. The prompt goes to a
// file of the job's run directory (0600; the worker reads and removes it),
// never to argv or the environment. The worker is the program name with
// args: a path or a bare name found on PATH, started without a shell (a
// .cmd or .ps1 through its interpreter, as package shim plans it); "" is
// this program's own executable. Start adds nothing to args, so they must
// name the job for the program, which runs it with Worker.Work. The worker
// runs in rec.Workspace, its stdout and stderr appended to worker.log in
// the run directory.
//
// The worker outlives the caller, its SIGKILL included (launch.StartDetached):
// on POSIX in a session of its own; on Windows outside the caller's Job
// Object when that job allows breakaway, else inside it, dying with it.
// Under an outer launcher (a cursorkit that runs under another's guard or
// job) it is stopped with that launcher's tree.
//
// A record that is not a background job waiting for its worker is
// failure.Input, and left as it is. Past that check every failure (a
// prompt over MaxPromptBytes is failure.Input) saves the job as error,
// best effort, so a job that never got a worker does not wait out the
// start grace, and is returned.
func Start(ctx context.Context, store Store, rec *Record, prompt, name string, args ...string) error {
	if rec.Delivery != DeliveryBackground || rec.State != StateStarting {
		return failure.New(failure.Input, "job %s is not a background job waiting for its worker (%s, %s)", rec.ID, rec.Delivery, rec.State)
	}
	err := start(ctx, store, rec, prompt, name, args)
	if err != nil {
		now := time.Now()
		rec.State, rec.UpdatedAt, rec.EndedAt = StateError, now, &now
		rec.Failure = &Failure{Kind: failure.KindOf(err), Message: err.Error()}
		_ = store.Save(rec)
	}
	return err
}

func start(ctx context.Context, store Store, rec *Record, prompt, name string, args []string) error {
	if len(prompt) > MaxPromptBytes {
		return failure.New(failure.Input, "the prompt is longer than %d bytes", MaxPromptBytes)
	}
	if err := safefile.Write(store.promptFile(rec.ID), []byte(prompt), 0o600); err != nil {
		return failure.Wrap(failure.Setup, err, "writing the prompt for the worker")
	}
	if name == "" {
		exe, err := os.Executable()
		if err != nil {
			return failure.Wrap(failure.Setup, err, "finding this program's own executable")
		}
		name = exe
	}
	res, err := discovery.Resolve(ctx, discovery.Candidate{Value: name, Source: discovery.SourceOverride, Origin: "the worker"},
		discovery.EnvFromOS(), discovery.OSFS())
	if err != nil {
		return err
	}
	plan, err := shim.Build(res, args, shim.OptionsFromOS())
	if err != nil {
		return err
	}
	log := store.workerLog(rec.ID)
	_, err = launch.StartDetached(ctx, plan, launch.DetachOptions{Dir: rec.Workspace, Stdout: log, Stderr: log})
	return err
}
