package jobs

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
	"github.com/cursorkit/cursorkit/internal/safefile"
)

// sweepAfter is how old what a killed writer left must be before a worker
// sweeps it (Store.Sweep): old enough that no writer is still at it.
const sweepAfter = time.Hour

// A Worker runs a background job in the program Start detached for it.
type Worker struct {
	// Run runs the job and is required: rec is its record (starting, with
	// Worker and Output set), out the job's output file, which Work
	// closes. Run saves the record running, then final (task.Execute does
	// both); a failure it returns while the record is unfinished is saved
	// as the job's error. The worker's program cancels ctx on SIGTERM and
	// SIGINT: Run then stops the agent's tree and records the job
	// cancelled. (On Windows Cancel kills the worker instead, and its
	// kill-on-close Job Object takes the agent's tree.)
	Run func(ctx context.Context, rec *Record, prompt string, out *OutputWriter) error
	// Log, when set, gets what the worker notes besides its error: a job
	// that had ended before its worker came, a prune that failed.
	Log *log.Logger
}

// Work runs job id of workspace ("": any workspace) in this process, the
// body of a background job's worker. It first records this process as the
// job's Worker, so that Cancel can reach it; a job already final then
// runs nothing (its prompt file is removed) and Work returns nil.
// Otherwise it reads and removes the prompt file, creates the output file
// and calls Run; then it prunes the workspace's old jobs and sweeps what
// killed writers left an hour ago or more.
//
// The error is Run's, or why the job could not be run, which is saved as
// the job's error too unless it is about the record itself (an unknown
// job is failure.Input).
func (w Worker) Work(ctx context.Context, store Store, workspace, id string) error {
	rec, err := store.Find(workspace, id)
	if err != nil {
		return err
	}
	if w.Run == nil {
		return failure.New(failure.Input, "the worker of job %s has nothing to run the job with", id)
	}
	fail := func(err error) error {
		recordFailure(store, rec, err)
		return err
	}
	self, err := procid.Self()
	if err != nil {
		return fail(err)
	}
	rec, err = store.update(rec.Workspace, id, func(r *Record) bool {
		if r.State.Terminal() {
			return false
		}
		r.Worker = &ProcessRef{PID: self.PID, Created: self.Created}
		return true
	})
	if err != nil {
		return err
	}
	if rec.State.Terminal() {
		_ = os.Remove(store.promptFile(id))
		w.logf("job %s ended (%s) before its worker started: nothing to run", id, rec.State)
		return nil
	}
	prompt, err := safefile.Read(store.promptFile(id), maxPromptBytes)
	if err != nil {
		return fail(failure.Wrap(failure.Setup, err, "reading the job's prompt"))
	}
	_ = os.Remove(store.promptFile(id))
	out, err := store.createOutput(id)
	if err != nil {
		return fail(err)
	}
	defer out.Close()
	rec.Output = out.Path()
	if err = w.Run(ctx, rec, string(prompt), out); err != nil {
		recordFailure(store, rec, err)
	}
	if _, perr := store.prune(rec.Workspace, defaultRetention); perr != nil {
		w.logf("pruning: %v", perr)
	}
	store.Sweep(sweepAfter)
	return err
}

// recordFailure saves err as the failure of job rec, best effort, unless
// its record is final already (Run saved its end, or another process
// ended the job first).
func recordFailure(store Store, rec *Record, err error) {
	_, _ = store.update(rec.Workspace, rec.ID, func(r *Record) bool {
		if r.State.Terminal() {
			return false
		}
		r.fail(err)
		if r.Output == "" {
			r.Output = rec.Output
		}
		return true
	})
}

func (w Worker) logf(format string, args ...any) {
	if w.Log != nil {
		w.Log.Printf(format, args...)
	}
}
