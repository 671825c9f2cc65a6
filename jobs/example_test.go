package jobs_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/jobs"
	"github.com/cursorkit/cursorkit/task"
)

// A program's hidden worker command: it runs the background job it was
// started for (jobs.Start, with the data directory and the job id as its
// arguments) as a task, on the Cursor CLI build the record names, and
// stops it on SIGTERM or Ctrl-C.
func ExampleWorker() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store := jobs.Store{Dir: os.Args[1]}
	w := jobs.Worker{Run: func(ctx context.Context, rec *jobs.Record, prompt string, out *jobs.OutputWriter) error {
		_, _, err := task.Execute(ctx, store, rec, prompt, cursor.Binary{}, task.Options{Turn: task.Defaults(), Output: out})
		return err
	}}
	if err := w.Work(ctx, store, "", os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}

// Cancelling a job from any process: the answer comes once its worker and
// its agent are gone.
func ExampleCancel() {
	ctx := context.Background()
	dir, err := jobs.DataDir(os.Getenv)
	if err != nil {
		fmt.Println(err)
		return
	}
	store := jobs.Store{Dir: dir}
	rec, err := store.Find("", "task-20261201T180512Z-3f9a1c0b")
	if err != nil {
		fmt.Println(err)
		return
	}
	rec, cancelled, err := jobs.Cancel(ctx, store, rec, 0)
	switch {
	case err != nil:
		fmt.Println(err)
	case cancelled:
		fmt.Println(rec.ID, "cancelled")
	default:
		fmt.Println(rec.ID, "had already ended:", rec.State)
	}
}
