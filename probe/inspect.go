package probe

import (
	"context"
	"sync"
)

// Inspection is everything `cursorkit doctor` needs from this package: the
// probe, then the auth status and the model catalog of the binary it chose.
// Auth.Err() is the status verdict.
type Inspection struct {
	Probe    Report
	ProbeErr error
	// Auth and Models are zero (and ModelsErr nil) when the probe found no
	// available binary.
	Auth      Auth
	Models    ModelsReport
	ModelsErr error
}

// Inspect runs Probe and then, when a binary is available, Status and
// Models on it concurrently (they are independent once the binary is
// chosen), so its wall time is the probe plus the slower of the two. An old
// build (ProbeErr of kind setup) is still inspected.
func Inspect(ctx context.Context, cfg Config, refresh bool) Inspection {
	var in Inspection
	in.Probe, in.ProbeErr = Probe(ctx, cfg)
	if !in.Probe.Available {
		return in
	}
	var wg sync.WaitGroup
	wg.Go(func() { in.Auth, _ = Status(ctx, cfg, in.Probe) })
	wg.Go(func() { in.Models, in.ModelsErr = Models(ctx, cfg, in.Probe, refresh) })
	wg.Wait()
	return in
}
