package probe

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// Err returns the failure an auth verdict means for a caller, nil when
// authenticated: a verdict with a cause (Auth.Cause) gets that cause's
// failure and fix (cursor.Cause.Err); unauthenticated is failure.Auth with
// the reason and the fix (log in); failure.Timeout or failure.Process when
// the status command gave no answer.
func (a Auth) Err() error {
	var err *failure.Error
	switch a.State {
	case AuthAuthenticated:
		return nil
	case AuthUnauthenticated:
		err = failure.New(failure.Auth, "not logged in to Cursor (%s): run `cursor-agent login`", a.Reason)
	default:
		if err = a.Cause().Err(""); err != nil {
			break
		}
		kind := failure.Process
		if a.Reason == reasonStatusTimeout {
			kind = failure.Timeout
		}
		err = failure.New(kind, "the Cursor CLI status command gave no answer")
	}
	if a.Detail != "" {
		err = err.WithDetail(a.Detail)
	}
	return err
}

// Status runs `status --format json` on exactly the binary report's probe
// chose (never another candidate), bounded by cfg.StatusTimeout (3 s by
// default), and judges it with parseStatus. A run that timed out or could
// not start is AuthUnknown. A binary whose --version was blocked
// (Report.Blocked) is not run again: the verdict is that cause's
// (keychain_locked, ide_missing, a network failure...). The error is
// Auth.Err(), or failure.MissingCLI when report names no available binary.
func Status(ctx context.Context, cfg Config, report Report) (Auth, error) {
	if !report.Available {
		a := Auth{State: AuthUnknown, Reason: reasonStatusStartFailed, Detail: "no Cursor CLI binary is available"}
		return a, failure.New(failure.MissingCLI, "no Cursor CLI binary is available to ask for its login status")
	}
	if report.Blocked != cursor.CauseNone {
		a := authFor(report.Blocked, report.BlockedDetail)
		return a, a.Err()
	}
	timeout := orDefault(cfg.StatusTimeout, defaultStatusTimeout)
	r := cfg.run().run(ctx, report.Binary.Resolution, []string{"status", "--format", "json"}, timeout)
	if r.cancelled || ctx.Err() != nil {
		return Auth{State: AuthUnknown, Reason: reasonStatusStartFailed, Detail: "cancelled"}, ctxFailure(ctx.Err(), "status")
	}
	a := Auth{State: AuthUnknown, Reason: reasonStatusStartFailed}
	switch {
	case r.timedOut || r.refused != nil || r.startErr != nil:
		if r.timedOut {
			a.Reason = reasonStatusTimeout
		}
		_, a.Detail = classify(r, "status", timeout)
	default:
		exit := r.exitCode
		if r.signal != 0 && exit == 0 {
			exit = -1
		}
		a = parseStatus(r.stdout, []byte(r.stderr), exit)
	}
	return a, a.Err()
}

// Models returns the model catalog of the binary report's probe chose
// (docs/contract.md, "Models"): from cfg's catalog cache when a fresh
// entry exists for that binary path and build and refresh is false,
// otherwise by running `models` bounded by cfg.ModelsTimeout and caching
// the result. An explicit empty account is an empty catalog, not an error.
//
// Errors: failure.MissingCLI without an available binary; a blocked
// binary's cause (Report.Blocked), without running it again;
// failure.Timeout; for a failed run, or output without model lines, whose
// words cursor.Diagnose explains, that cause's failure; failure.Process
// for another non-zero exit; failure.Protocol when the output holds no
// model line and no known empty state but other text.
func Models(ctx context.Context, cfg Config, report Report, refresh bool) (ModelsReport, error) {
	mr := ModelsReport{Models: []Model{}, Diagnostics: []string{}}
	if !report.Available {
		return mr, failure.New(failure.MissingCLI, "no Cursor CLI binary is available to list models")
	}
	if report.Blocked != cursor.CauseNone {
		return mr, authFor(report.Blocked, report.BlockedDetail).Err()
	}
	cache, cacheErr := cfg.catalogCache()
	if cacheErr != nil {
		mr.Diagnostics = append(mr.Diagnostics, detail.Bound("model catalog cache disabled: "+cacheErr.Error()))
	}
	build := report.Version
	if build == "" {
		build = cursor.InstalledBuild(report.Binary.Resolution)
	}
	if cache != nil && !refresh {
		if models, fetched, ok := cache.Load(report.Binary.Resolution.Path, build); ok {
			mr.Models, mr.Source, mr.FetchedAt, mr.Empty = models, sourceCache, fetched, len(models) == 0
			return mr, nil
		}
	}
	timeout := orDefault(cfg.ModelsTimeout, defaultModelsTimeout)
	r := cfg.run().run(ctx, report.Binary.Resolution, []string{"models"}, timeout)
	if r.cancelled || ctx.Err() != nil {
		return mr, ctxFailure(ctx.Err(), "models")
	}
	said := agentMessage(r.stdout, []byte(r.stderr))
	cause := cursor.Diagnose(string(r.stdout) + "\n" + r.stderr)
	if !r.ok() {
		if cause != cursor.CauseNone {
			mr.Cause = cause
			return mr, authFor(cause, said).Err()
		}
		outcome, detail := classify(r, "models", timeout)
		kind := failure.Process
		switch outcome {
		case outcomeTimeout:
			kind = failure.Timeout
		case outcomeNotFound:
			kind = failure.MissingCLI
		case outcomeRefused, outcomePermission:
			kind = failure.Setup
		}
		return mr, failure.New(kind, "listing Cursor models failed").WithDetail(detail)
	}
	c := parseModels(string(r.stdout))
	mr.Models, mr.Empty, mr.Source, mr.FetchedAt = c.Models, c.Empty, sourceCLI, time.Now().UTC()
	for _, line := range c.Unrecognized {
		mr.Diagnostics = append(mr.Diagnostics, "unrecognized models line: "+line)
	}
	if r.truncated {
		mr.Diagnostics = append(mr.Diagnostics, fmt.Sprintf("models output was cut at %d bytes", maxProbeStdout))
	}
	if len(c.Models) == 0 && !c.Empty && len(c.Unrecognized) == 0 {
		mr.Diagnostics = append(mr.Diagnostics, "`models` printed no model lines and no empty-account message")
	}
	if len(c.Models) == 0 && !c.Empty && cause != cursor.CauseNone {
		// A failure printed in place of the catalog, exit 0 or not.
		mr.Cause = cause
		return mr, authFor(cause, said).Err()
	}
	if len(c.Models) == 0 && !c.Empty && len(c.Unrecognized) > 0 {
		return mr, failure.New(failure.Protocol, "`models` printed no model lines").WithDetail(detail.Join(c.Unrecognized...))
	}
	if cache != nil {
		if err := cache.Store(report.Binary.Resolution.Path, build, c.Models); err != nil {
			mr.Diagnostics = append(mr.Diagnostics, detail.Bound("model catalog not cached: "+err.Error()))
		}
	}
	return mr, nil
}

// catalogCache returns the model catalog cache, or why there is none.
func (c Config) catalogCache() (*catalogCache, error) {
	dir, err := c.cacheDir()
	if err != nil {
		return nil, err
	}
	return &catalogCache{cacheFiles{Dir: filepath.Join(dir, "models"), Now: c.now}}, nil
}

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
