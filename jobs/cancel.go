package jobs

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
)

// workerStops is how long Cancel waits for a worker to stop its job after
// the polite stop: the worker's own stop grace for its agent (a task's is
// 5 s, task.DefaultStopGrace) and a margin for recording the end. Past it
// the worker is killed.
const workerStops = 10 * time.Second

// Cancel stops job rec (docs/contract.md, "Jobs") and returns its record
// once the process running it and its agent are gone, and whether this
// call stopped it (false: it had already ended, or it died, which Judge,
// applied first with grace, saves). A background job still without a
// worker is recorded cancelled at once. Otherwise the worker gets SIGTERM
// (Windows has no polite stop for another process: it is killed), is
// killed past 10 s, its tree going with it; then the agent gets 5 s and
// is killed, and the job is recorded cancelled unless the worker recorded
// its end. Every process is acted on through its recorded identity. A
// foreground job with no owner on record is failure.Process.
func Cancel(ctx context.Context, store Store, rec *Record, grace time.Duration) (*Record, bool, error) {
	rec = Judge(ctx, store, rec, grace)
	if rec.State.Terminal() {
		return rec, false, nil
	}
	if rec.Worker == nil {
		if rec.Delivery != DeliveryBackground {
			return rec, false, failure.New(failure.Process, "job %s runs in a program that recorded no process to stop it through: stop it there", rec.ID)
		}
		r, cancelled, err := recordCancelled(store, rec, func(r *Record) bool { return r.Worker != nil })
		if err != nil || r.Worker == nil {
			return r, cancelled, err
		}
		rec = r // its worker came meanwhile: stop it
	}
	w := identity(rec.Worker)
	if err := w.Signal(ctx, stopSignal()); err != nil && !errors.Is(err, procid.ErrGone) {
		if errors.Is(err, procid.ErrMismatch) {
			return Judge(ctx, store, rec, grace), false, nil // not the job's process any more: it died
		}
		if kerr := w.Kill(ctx); kerr != nil && !errors.Is(kerr, procid.ErrGone) {
			return rec, false, kerr
		}
	}
	if !waitGone(ctx, w, workerStops) {
		_ = w.Kill(ctx)
		waitGone(ctx, w, agentKill)
	}
	if fresh, err := store.Find(rec.Workspace, rec.ID); err == nil {
		rec = fresh
	}
	stopAgent(ctx, rec, agentKill)
	return recordCancelled(store, rec, func(*Record) bool { return false })
}

// recordCancelled records job rec cancelled unless its record is final or
// keeps it (a worker came); it returns the record as it then is and
// whether it is cancelled, or rec and the error.
func recordCancelled(store Store, rec *Record, keeps func(*Record) bool) (*Record, bool, error) {
	r, err := store.update(rec.Workspace, rec.ID, func(r *Record) bool {
		if r.State.Terminal() || keeps(r) {
			return false
		}
		markCancelled(r)
		return true
	})
	if err != nil {
		return rec, false, err
	}
	return r, r.State == StateCancelled, nil
}

func markCancelled(r *Record) { r.end(StateCancelled, failure.Cancelled, "cancelled by jobs cancel") }

// A Cancellation is what Cleanup did to one job: its record as Cancel left
// it (as it was, on Err), whether this cleanup stopped it, and why it could
// not be stopped.
type Cancellation struct {
	Record    *Record
	Cancelled bool
	Err       error
}

// Cleanup cancels every unfinished job, of every workspace, of launcher
// session session (Record.LauncherSession, from EnvSession), all at once,
// and returns when all of them are gone, newest first: an orchestrator's
// session-end hook. Jobs of other sessions and jobs without a session are
// never touched; an empty session is failure.Input. It reads every record,
// so it is for a session's end, not for a loop. grace is Judge's.
func Cleanup(ctx context.Context, store Store, session string, grace time.Duration) ([]Cancellation, error) {
	if strings.TrimSpace(session) == "" {
		return nil, failure.New(failure.Input, "cleanup needs the launcher session whose jobs to stop")
	}
	var out []Cancellation
	for _, f := range store.jobFiles("", 0) {
		if r, err := store.readRecord(f.path); err == nil && !r.State.Terminal() && r.LauncherSession == session {
			out = append(out, Cancellation{Record: r})
		}
	}
	var wg sync.WaitGroup
	for i := range out {
		c := &out[i]
		wg.Go(func() { c.Record, c.Cancelled, c.Err = Cancel(ctx, store, c.Record, grace) })
	}
	wg.Wait()
	return out, nil
}
