package mcpstage

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// ReleaseTimeout is how long Run's release after the turn may take unless
// RunOptions say otherwise.
const ReleaseTimeout = 10 * time.Second

// Warning codes of Run: what went wrong around the turn without failing it.
const (
	// WarnHeartbeat: renewing the lease failed; the turn goes on (the
	// lease lives LeaseTTL after its last renewal, and is dropped earlier
	// only when its owner is gone).
	WarnHeartbeat = "mcp_heartbeat"
	// WarnRelease: the staged entry could not be removed after the turn,
	// or its lease was already gone; a reconcile of the worktree
	// (`cursorkit mcp reconcile`) removes it once its owner is gone.
	WarnRelease = "mcp_release"
)

// Warning is something that went wrong around a turn without failing it.
type Warning struct {
	// Code is WarnHeartbeat or WarnRelease.
	Code string `json:"code"`
	// Message says what failed, for people. It names the lease, its server
	// key and the worktree, never the entry's args or env.
	Message string `json:"message"`
	// Err is the failure behind the warning, a *failure.Error:
	// failure.KindOf reads its kind.
	Err error `json:"-"`
}

// RunOptions configure Run. The zero value is cursorkit's own.
type RunOptions struct {
	// Options configure the Stager Run makes. With OwnerPID 0 the lease
	// follows this process, which is what a turn run in it wants.
	Options
	// HeartbeatEvery is how often the lease is renewed while the turn runs
	// (0: HeartbeatEvery). It must be below LeaseTTL: a peer may drop a
	// lease whose renewal is older.
	HeartbeatEvery time.Duration
	// ReleaseTimeout bounds the release after the turn (0: ReleaseTimeout).
	ReleaseTimeout time.Duration
	// OnWarning, when not nil, is given each warning as it happens: a
	// failed renewal on the heartbeat's goroutine while the turn runs, the
	// release's on Run's goroutine after the turn returned. Calls never
	// overlap, and none comes after Run returns. It must not block: the
	// renewals wait for it.
	OnWarning func(Warning)
}

// Run stages entry into the worktree holding dir ("" is the current
// directory) under a new lease, calls turn with that lease, renews the
// lease every opts.HeartbeatEvery while turn runs, and releases it once
// turn has returned, however it ended. It returns turn's error unchanged
// and every warning, in the order they happened.
//
// turn must not return before whatever reads the worktree's config for it
// (an agent and the processes it started) is gone: the entry is removed as
// soon as it returns. A panic in turn releases the lease too and is then
// passed on.
//
// A failure before turn is called is Run's own, and turn is then never
// called: failure.Input for options out of range, a dir that is not a
// directory or an entry Stage refuses; failure.Setup for a tracked or
// unsafe config or a quarantined worktree; failure.Resource for a lock
// that stays busy. After that only turn fails the call. A renewal that
// fails is a WarnHeartbeat warning, and the renewals go on. The release
// runs on a context that keeps ctx's values but not its cancellation
// (turn commonly returns because ctx was cancelled, and the entry must go
// all the same), bounded by opts.ReleaseTimeout; when it fails (the lock
// stays busy, the time is up) Stager.ReleaseOnExit makes one last attempt,
// which never waits and never writes while a peer holds the lock. What
// still fails, or a lease that was already gone, is a WarnRelease warning;
// the entry is then left to the next Stage, Heartbeat, Release or
// Reconcile in that worktree, which drops a lease whose owner is gone.
//
// A process that is killed outright (SIGKILL; TerminateProcess on Windows)
// releases nothing: the same peers drop its lease once it is gone. On
// Windows a console that closes, a logoff or a shutdown ends the process a
// few seconds after telling it (Go delivers that as SIGTERM), which may
// cut the release short in the same way; the journal keeps the config
// whole whenever the process stops.
func Run(ctx context.Context, dir string, entry Entry, opts RunOptions, turn func(ctx context.Context, lease Lease) error) (warnings []Warning, err error) {
	every, timeout, err := opts.periods()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = "."
	}
	s, err := New(ctx, dir, opts.Options)
	if err != nil {
		return nil, err
	}
	lease, err := s.Stage(ctx, entry)
	if err != nil {
		return nil, err
	}
	st := &staged{stager: s, lease: lease, owner: "this process", onWarn: opts.OnWarning}
	if pid := opts.OwnerPID; pid != 0 && pid != os.Getpid() {
		st.owner = fmt.Sprintf("process %d", pid)
	}
	stopBeats := st.heartbeat(ctx, every)
	defer func() {
		stopBeats()
		st.release(ctx, timeout)
		warnings = st.warnings
	}()
	return nil, turn(ctx, lease)
}

// periods are the renewal period and the release's bound, checked.
func (o RunOptions) periods() (every, timeout time.Duration, err error) {
	every, timeout = o.HeartbeatEvery, o.ReleaseTimeout
	if every == 0 {
		every = HeartbeatEvery
	}
	if timeout == 0 {
		timeout = ReleaseTimeout
	}
	if every < 0 || every >= LeaseTTL {
		return 0, 0, failure.New(failure.Input, "the lease's heartbeat period %s must be above 0 and below the lease TTL, %s", every, LeaseTTL)
	}
	if timeout < 0 {
		return 0, 0, failure.New(failure.Input, "the release timeout %s is negative", timeout)
	}
	return every, timeout, nil
}

// staged is the lease Run holds around a turn. Its warnings are the
// heartbeat goroutine's until that stops, Run's after.
type staged struct {
	stager   *Stager
	lease    Lease
	owner    string // the lease's owner, as a release warning names it
	onWarn   func(Warning)
	warnings []Warning
}

// heartbeat renews the lease every period until ctx ends or the returned
// stop is called; stop waits for the renewal under way.
func (st *staged) heartbeat(ctx context.Context, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			// A renewal cut short by the end of the turn is no warning.
			if err := st.stager.Heartbeat(ctx, st.lease.ID); err != nil && ctx.Err() == nil {
				st.warn(Warning{Code: WarnHeartbeat, Err: err,
					Message: fmt.Sprintf("renewing the MCP server lease %s failed: %v", st.lease.ID, err)})
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// release removes the lease's entry, on a context of its own bounded by
// timeout, then through the exit backstop; what fails is a warning.
func (st *staged) release(ctx context.Context, timeout time.Duration) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	err := st.stager.Release(rctx, st.lease.ID)
	if err != nil && !failure.Is(err, failure.Input) { // Input: the lease is gone already
		err = st.stager.ReleaseOnExit(st.lease.ID)
	}
	if err != nil {
		st.warn(Warning{Code: WarnRelease, Err: err,
			Message: fmt.Sprintf("removing the staged MCP server %s failed (%s: %v); `cursorkit mcp reconcile --cwd %s` removes it once %s is gone",
				st.lease.Key, failure.KindOf(err), err, st.stager.Root(), st.owner)})
	}
}

func (st *staged) warn(w Warning) {
	st.warnings = append(st.warnings, w)
	if st.onWarn != nil {
		st.onWarn(w)
	}
}
