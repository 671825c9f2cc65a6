package mcpstage

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// ReleaseTimeout bounds Run's release after the turn by default.
const ReleaseTimeout = 10 * time.Second

// Warning codes of Run.
const (
	// WarnHeartbeat: renewing the lease failed; the turn goes on (the
	// lease lives LeaseTTL after its last renewal, unless its owner dies).
	WarnHeartbeat = "mcp_heartbeat"
	// WarnRelease: the staged entry could not be removed after the turn,
	// or its lease was already gone; `cursorkit mcp reconcile` removes it
	// once its owner is gone.
	WarnRelease = "mcp_release"
)

// Warning is something that went wrong around a turn without failing it.
type Warning struct {
	Code string `json:"code"` // WarnHeartbeat or WarnRelease
	// Message says what failed, for people: the lease, its server key and
	// the worktree, never the entry's args or env.
	Message string `json:"message"`
	Err     error  `json:"-"` // the *failure.Error behind the warning
}

// RunOptions configure Run. The zero value is cursorkit's own.
type RunOptions struct {
	// Options configure the Stager Run makes (OwnerPID 0: the lease follows
	// this process, the turn's).
	Options
	// HeartbeatEvery is how often the lease is renewed while the turn runs
	// (0: HeartbeatEvery). It must be below LeaseTTL: a peer may drop a
	// lease whose renewal is older.
	HeartbeatEvery time.Duration
	// ReleaseTimeout bounds the release after the turn (0: ReleaseTimeout).
	ReleaseTimeout time.Duration
	// OnWarning, when not nil, is given each warning as it happens (on a
	// lease's heartbeat goroutine or on Run's). Calls never overlap nor
	// come after Run returns. It must not block: the renewals wait for it.
	OnWarning func(Warning)
}

// Run stages entries, in order, into the worktree holding dir ("" is the
// current directory), each under a new lease of its own, calls turn with
// those leases (in the same order), renews each lease every
// opts.HeartbeatEvery while turn runs, and releases them, last staged
// first, once turn has returned, however it ended (a panic in turn is
// passed on after the releases). It returns turn's error unchanged and
// every warning, in the order they happened. turn must not return before
// whatever reads the worktree's config for it (an agent and what it
// started) is gone.
//
// A failure before turn is called is Run's own, and turn is then never
// called (what was staged already is released): failure.Input for no
// entries, options out of range, a dir that is not a directory or an
// entry Stage refuses (every entry is checked before the first is
// staged); failure.Setup for a tracked or unsafe config or a quarantined
// worktree; failure.Resource for a lock that stays busy;
// failure.Cancelled for ctx cancelled meanwhile. A renewal that fails is
// a WarnHeartbeat warning, and the renewals go on. Each release runs on a
// context that keeps ctx's values but not its cancellation (turn commonly
// returns because ctx was cancelled, and the entries must go all the
// same), bounded by opts.ReleaseTimeout; when it fails,
// Stager.ReleaseOnExit makes one last attempt. What still fails, or a
// lease already gone, is a WarnRelease warning: the next Stage,
// Heartbeat, Release or Reconcile in that worktree drops the lease once
// its owner is gone.
//
// A process killed outright (SIGKILL; TerminateProcess on Windows)
// releases nothing, and is left to the same peers. On Windows a console
// that closes, a logoff or a shutdown ends the process a few seconds after
// telling it (as SIGTERM), which may cut the release short the same way;
// the journal keeps the config whole whenever the process stops.
func Run(ctx context.Context, dir string, entries []Entry, opts RunOptions, turn func(ctx context.Context, leases []Lease) error) ([]Warning, error) {
	every, timeout := cmp.Or(opts.HeartbeatEvery, HeartbeatEvery), cmp.Or(opts.ReleaseTimeout, ReleaseTimeout)
	if every < 0 || every >= LeaseTTL {
		return nil, failure.New(failure.Input, "the lease's heartbeat period %s must be above 0 and below the lease TTL, %s", every, LeaseTTL)
	}
	if timeout < 0 {
		return nil, failure.New(failure.Input, "the release timeout %s is negative", timeout)
	}
	if len(entries) == 0 {
		return nil, failure.New(failure.Input, "no MCP server to stage")
	}
	for _, e := range entries {
		if err := checkEntry(e); err != nil {
			return nil, err
		}
	}
	s, err := New(ctx, cmp.Or(dir, "."), opts.Options)
	if err != nil {
		return nil, err
	}
	owner := "this process"
	if pid := opts.OwnerPID; pid != 0 && pid != os.Getpid() {
		owner = fmt.Sprintf("process %d", pid)
	}
	// Each lease renews on a goroutine of its own: one lock keeps the
	// warnings in the order they happened and OnWarning's calls apart.
	var mu sync.Mutex
	var warnings []Warning
	warn := func(w Warning) {
		mu.Lock()
		defer mu.Unlock()
		warnings = append(warnings, w)
		if opts.OnWarning != nil {
			opts.OnWarning(w)
		}
	}
	var stage func(ctx context.Context, leases []Lease) error
	stage = func(ctx context.Context, leases []Lease) error {
		if len(leases) == len(entries) {
			return turn(ctx, leases)
		}
		return runOne(ctx, s, entries[len(leases)], every, timeout, owner, warn, func(ctx context.Context, lease Lease) error {
			return stage(ctx, append(leases[:len(leases):len(leases)], lease))
		})
	}
	err = stage(ctx, nil)
	return warnings, err
}

// runOne stages entry with s under a lease, renews it while turn runs and
// releases it after, telling warn what went wrong around it; it returns
// once its renewals have stopped.
func runOne(ctx context.Context, s *Stager, entry Entry, every, timeout time.Duration, owner string, warn func(Warning), turn func(ctx context.Context, lease Lease) error) error {
	lease, err := s.Stage(ctx, entry)
	if err != nil {
		return err
	}
	beatCtx, stopBeats := context.WithCancel(ctx)
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-beatCtx.Done():
				return
			case <-tick.C:
			}
			// A renewal cut short by the end of the turn is no warning.
			if err := s.Heartbeat(beatCtx, lease.ID); err != nil && beatCtx.Err() == nil {
				warn(Warning{Code: WarnHeartbeat, Err: err,
					Message: fmt.Sprintf("renewing the MCP server lease %s failed: %v", lease.ID, err)})
			}
		}
	}()
	defer func() {
		stopBeats()
		<-beating
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		err := s.Release(rctx, lease.ID)
		if err != nil && !failure.Is(err, failure.Input) { // Input: the lease is gone already
			err = s.ReleaseOnExit(lease.ID)
		}
		if err != nil {
			warn(Warning{Code: WarnRelease, Err: err,
				Message: fmt.Sprintf("removing the staged MCP server %s failed (%s: %v); `cursorkit mcp reconcile --cwd %s` removes it once %s is gone",
					lease.Key, failure.KindOf(err), err, s.Root(), owner)})
		}
	}()
	return turn(ctx, lease)
}
