package jobs

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/procid"
)

// DefaultStartGrace is how long a background job may stay without a worker
// on record before Judge finds it died (docs/contract.md, "Jobs").
const DefaultStartGrace = 30 * time.Second

// WarnRecordNotSaved is the warning of a record returned with a verdict
// its file does not hold: the save failed, and the file still reads as it
// did.
const WarnRecordNotSaved = "record_not_saved"

// How long the judgement and Cancel wait for an agent to go by itself
// before they kill it, and then for the kill.
const (
	agentGoes = 2 * time.Second
	agentKill = 5 * time.Second
)

// Judge returns rec with an unfinished state checked against the process
// that runs it (Record.Worker): one that is gone, or whose PID now names
// another process, makes the job died; so does a background job still
// without a worker grace (<= 0: DefaultStartGrace) after its creation.
// The dead worker's tree goes with it (launch guard, Job Object), so the
// agent gets 2 s to go and is then killed through its identity before the
// job is died. The verdict is saved only over a record still unfinished
// with the same worker. A verdict that cannot be saved still stands: the
// record returned is died and carries a WarnRecordNotSaved warning saying
// why, while its file still reads as it did. A process that cannot be
// inspected leaves rec as it was. rec itself is never changed.
func Judge(ctx context.Context, store Store, rec *Record, grace time.Duration) *Record {
	if grace <= 0 {
		grace = DefaultStartGrace
	}
	if rec.State.Terminal() {
		return rec
	}
	var why string
	switch {
	case rec.Worker != nil:
		alive, err := identity(rec.Worker).Alive(ctx)
		if err == nil && !alive {
			why = fmt.Sprintf("the cursorkit process running it (pid %d) is gone", rec.Worker.PID)
		}
	case rec.Delivery == DeliveryBackground && time.Since(rec.CreatedAt) > grace:
		why = fmt.Sprintf("no worker recorded itself within %s", grace)
	}
	if why == "" {
		return rec
	}
	stopAgent(ctx, rec, agentGoes)
	message := "the job died: " + why
	judged, err := store.update(rec.Workspace, rec.ID, func(r *Record) bool {
		if r.State.Terminal() || (r.Worker != nil && !sameProcess(r.Worker, rec.Worker)) {
			return false
		}
		r.end(StateDied, failure.Died, message)
		return true
	})
	if err == nil {
		return judged
	}
	// A caller shown the stale state would wait on a job that is gone.
	unsaved := *rec
	unsaved.end(StateDied, failure.Died, message)
	unsaved.Warnings = append(slices.Clip(rec.Warnings), event.Warning{Code: WarnRecordNotSaved,
		Message: fmt.Sprintf("the died verdict could not be saved; the record file still reads %s: %v", rec.State, err)})
	return &unsaved
}

// stopAgent waits up to within for job rec's agent, if it has one, to go,
// then kills it through its identity and waits for that.
func stopAgent(ctx context.Context, rec *Record, within time.Duration) {
	if rec.Agent == nil {
		return
	}
	agent := identity(rec.Agent)
	if !waitGone(ctx, agent, within) {
		_ = agent.Kill(ctx)
		waitGone(ctx, agent, agentKill)
	}
}

// waitGone polls id until its process is gone (true) or within passed:
// a process this one did not start cannot be waited for portably.
func waitGone(ctx context.Context, id procid.Identity, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		if alive, err := id.Alive(ctx); err == nil && !alive {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func identity(p *ProcessRef) procid.Identity {
	return procid.Identity{PID: p.PID, Created: p.Created}
}

func sameProcess(a, b *ProcessRef) bool {
	return a != nil && b != nil && a.PID == b.PID && a.Created.Equal(b.Created)
}
