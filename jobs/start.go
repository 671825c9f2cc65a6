package jobs

import (
	"context"
	"os"
	"path/filepath"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/shim"
)

// maxPromptBytes bounds the prompt a background job hands its worker.
const maxPromptBytes = 16 << 20

// promptFile is where a background job's prompt waits for its worker,
// which removes it once read.
func (s Store) promptFile(id string) string { return filepath.Join(s.runDir(id), "prompt") }

// workerLog keeps a background job's worker's stdout and stderr.
func (s Store) workerLog(id string) string { return filepath.Join(s.runDir(id), "worker.log") }

// Start hands the prepared background job rec (state starting) to a
// detached worker and returns once the worker has started. The prompt
// goes to a file of the job's run directory (0600), never to argv or the
// environment. The worker is program name ("": this program's own
// executable; else a path or a bare name on PATH, started without a shell
// as package shim plans it) with args, which must name the job: it runs
// it with Worker.Work, in rec.Workspace, its output appended to
// worker.log.
//
// The worker outlives the caller, its SIGKILL included
// (launch.StartDetached): on Windows only when the caller's Job Object
// allows breakaway, else it dies with that job; under an outer launcher
// it is stopped with that launcher's tree.
//
// A record that is not a background job waiting for its worker is
// failure.Input and left as it is. Any later failure (a prompt over
// maxPromptBytes is failure.Input) names what failed, the worker program
// or the prompt file, and is returned and saved as the job's error (the
// record final, with its end time), best effort, so the job does not wait
// out the start grace; the prompt file is removed, as no worker will read
// it.
func Start(ctx context.Context, store Store, rec *Record, prompt, name string, args ...string) error {
	if rec.Delivery != DeliveryBackground || rec.State != StateStarting {
		return failure.New(failure.Input, "job %s is not a background job waiting for its worker (%s, %s)", rec.ID, rec.Delivery, rec.State)
	}
	err := start(ctx, store, rec, prompt, name, args)
	if err != nil {
		_ = os.Remove(store.promptFile(rec.ID))
		rec.fail(err)
		_ = store.Save(rec)
	}
	return err
}

func start(ctx context.Context, store Store, rec *Record, prompt, name string, args []string) error {
	if len(prompt) > maxPromptBytes {
		return failure.New(failure.Input, "the prompt is longer than %d bytes", maxPromptBytes)
	}
	promptFile := store.promptFile(rec.ID)
	if err := safefile.Write(promptFile, []byte(prompt), 0o600); err != nil {
		return failure.Wrap(failure.Setup, err, "writing the worker's prompt file %s", promptFile)
	}
	if name == "" {
		exe, err := os.Executable()
		if err != nil {
			return failure.Wrap(failure.Setup, err, "finding this program's own executable to start as the worker")
		}
		name = exe
	}
	if err := startWorker(ctx, store, rec, name, args); err != nil {
		// The kind stays the cause's: a cancel is still a cancel.
		return failure.Wrap(failure.KindOf(err), err, "starting the worker program %q", name)
	}
	return nil
}

// startWorker starts program name with args, detached, in rec's workspace.
func startWorker(ctx context.Context, store Store, rec *Record, name string, args []string) error {
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
