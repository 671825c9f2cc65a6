package launch

import (
	"context"

	"github.com/cursorkit/cursorkit/shim"
)

// TreeWalkKill runs the no-job fallback's native tree walk alone (no
// taskkill), so both lanes can test it.
func TreeWalkKill(p *Process) (KillReport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killTreeWithoutJob(false)
}

// TaskkillFallbackKill runs the whole no-job fallback: taskkill /T, then the
// tree walk.
func TaskkillFallbackKill(p *Process) (KillReport, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killTreeWithoutJob(true)
}

// StartPaused is Start with paused run with the child's PID right after
// CreateProcess created it, suspended, before it is resumed; with
// noJobList it takes the fallback of Windows before 10 1607 (the child is
// created outside its job), and paused runs before the job assignment.
func StartPaused(ctx context.Context, plan shim.Command, opts Options, noJobList bool, paused func(pid int)) (*Process, error) {
	p, cmd, err := prepare(ctx, plan, opts)
	if err != nil {
		return nil, err
	}
	p.sys.afterCreate, p.sys.noJobList = paused, noJobList
	if err := p.start(ctx, cmd, plan, opts.Stdin); err != nil {
		return nil, err
	}
	return p, nil
}
