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

// Cancel stops job rec and returns its record once the process running it
// and its agent are gone, and whether this call stopped it (false: it had
// already ended, or it died, which Judge saves). Every process is acted on
// through its recorded identity, so a reused PID is never signalled:
//
//   - a background job still without a worker is recorded cancelled at
//     once, and its worker, when it comes, runs nothing (Worker.Work);
//   - otherwise the process running it (Record.Worker) gets the polite
//     stop, SIGTERM, and stops the agent's tree and records cancelled
//     itself; past 10 s it is killed, and the launch guard (Linux) or its
//     kill-on-close Job Object (Windows) takes the tree. Windows has no
//     polite stop for another process: there the worker is killed at once.
//     Then the agent gets 5 s to go and is killed through its identity, and
//     the job is recorded cancelled unless the worker recorded its end.
//
// grace is Judge's, which Cancel applies first. A foreground job with no
// owner on record (a program that runs jobs without one) is
// failure.Process: nothing here may stop it.
func Cancel(ctx context.Context, store Store, rec *Record, grace time.Duration) (*Record, bool, error) {
	rec = Judge(ctx, store, rec, grace)
	if rec.State.Terminal() {
		return rec, false, nil
	}
	if rec.Worker == nil {
		if rec.Delivery != DeliveryBackground {
			return rec, false, failure.New(failure.Process, "job %s runs in a program that recorded no process to stop it through: stop it there", rec.ID)
		}
		r, err := store.Update(rec.Workspace, rec.ID, func(r *Record) bool {
			if r.State.Terminal() || r.Worker != nil {
				return false
			}
			markCancelled(r)
			return true
		})
		if err != nil {
			return rec, false, err
		}
		if r.Worker == nil {
			return r, r.State == StateCancelled, nil
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
	r, err := store.Update(rec.Workspace, rec.ID, func(r *Record) bool {
		if r.State.Terminal() {
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

// markCancelled makes r cancelled by Cancel.
func markCancelled(r *Record) {
	now := time.Now()
	r.State, r.UpdatedAt, r.EndedAt = StateCancelled, now, &now
	r.Failure = &Failure{Kind: failure.Cancelled, Message: "cancelled by jobs cancel"}
}

// A Cancellation is what Cleanup did to one job.
type Cancellation struct {
	// Record is the job's record as Cancel left it (as it was, on Err).
	Record *Record
	// Cancelled: this cleanup stopped the job; false when it had already
	// ended (or on Err).
	Cancelled bool
	// Err is why the job could not be stopped.
	Err error
}

// Cleanup cancels every unfinished job, of every workspace, started with
// launcher session session (Record.LauncherSession, from EnvSession), all at
// once, and returns when all of them are gone, newest first: an
// orchestrator's session-end hook. Jobs of other sessions and jobs without
// a session are never touched; an empty session is failure.Input. It reads
// every record (Store.Unfinished), so it is for a session's end, not for a
// loop. grace is Judge's.
func Cleanup(ctx context.Context, store Store, session string, grace time.Duration) ([]Cancellation, error) {
	if strings.TrimSpace(session) == "" {
		return nil, failure.New(failure.Input, "cleanup needs the launcher session whose jobs to stop")
	}
	recs, err := store.Unfinished()
	if err != nil {
		return nil, err
	}
	var out []Cancellation
	for _, r := range recs {
		if r.LauncherSession == session {
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
