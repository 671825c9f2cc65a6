package launch

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
