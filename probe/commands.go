package probe

import (
	"context"
	"fmt"
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// Err returns the failure an auth verdict means for a caller, or nil when
// authenticated: failure.Auth for unauthenticated and keychain_locked (with
// the fix: log in, unlock the keychain), failure.Setup for ide_missing,
// failure.Timeout or failure.Process when the status command gave no answer.
func (a Auth) Err() error {
	var err *failure.Error
	switch a.State {
	case AuthAuthenticated:
		return nil
	case AuthKeychainLocked:
		err = failure.New(failure.Auth, "the macOS login keychain is locked: run `security unlock-keychain` and try again")
	case AuthIDEMissing:
		err = failure.New(failure.Setup, "this Cursor CLI needs a Cursor IDE installation: install cursor-agent or set cursorCliBinaryPath to it")
	case AuthUnknown:
		kind := failure.Process
		if a.Reason == ReasonStatusTimeout {
			kind = failure.Timeout
		}
		err = failure.New(kind, "the Cursor CLI status command gave no answer")
	default:
		err = failure.New(failure.Auth, "not logged in to Cursor (%s): run `cursor-agent login`", a.Reason)
	}
	if a.Detail != "" {
		err = err.WithDetail(a.Detail)
	}
	return err
}

// StatusOf runs `status --format json` on exactly the binary report's probe
// chose (never another candidate), bounded by cfg.StatusTimeout (3 s by
// default), and judges it with ParseStatus. A run that timed out or could
// not start is AuthUnknown. The error is Auth.Err(), or failure.MissingCLI
// when report names no available binary.
func StatusOf(ctx context.Context, cfg Config, report Report) (Auth, error) {
	if !report.Available {
		a := Auth{State: AuthUnknown, Reason: ReasonStatusStartFailed, Detail: "no Cursor CLI binary is available"}
		return a, failure.New(failure.MissingCLI, "no Cursor CLI binary is available to ask for its login status")
	}
	timeout := orDefault(cfg.StatusTimeout, DefaultStatusTimeout)
	r := cfg.run().run(ctx, report.Resolution, []string{"status", "--format", "json"}, timeout)
	if r.cancelled || ctx.Err() != nil {
		return Auth{State: AuthUnknown, Reason: ReasonStatusStartFailed, Detail: "cancelled"}, ctxFailure(ctx.Err(), "status")
	}
	var a Auth
	switch {
	case r.timedOut:
		_, detail := classify(r, "status", timeout)
		a = Auth{State: AuthUnknown, Reason: ReasonStatusTimeout, Detail: detail}
	case r.refused != nil || r.startErr != nil:
		_, detail := classify(r, "status", timeout)
		a = Auth{State: AuthUnknown, Reason: ReasonStatusStartFailed, Detail: detail}
	default:
		exit := r.exitCode
		if r.signal != 0 && exit == 0 {
			exit = -1
		}
		a = ParseStatus(r.stdout, []byte(r.stderr), exit)
	}
	return a, a.Err()
}

// Status is Probe followed by StatusOf on the binary it chose. A probe
// failure other than an old build ends it with AuthUnknown and the probe's
// error; for an old build the status still runs and the setup error is
// returned.
func Status(ctx context.Context, cfg Config) (StatusReport, error) {
	report, perr := Probe(ctx, cfg)
	if !report.Available {
		return StatusReport{Report: report, Auth: Auth{State: AuthUnknown, Reason: ReasonStatusStartFailed,
			Detail: "no Cursor CLI binary is available"}}, perr
	}
	a, aerr := StatusOf(ctx, cfg, report)
	if perr != nil {
		return StatusReport{Report: report, Auth: a}, perr
	}
	return StatusReport{Report: report, Auth: a}, aerr
}

// ModelsOf returns the model catalog of the binary report's probe chose:
// from cfg's catalog cache when a fresh entry exists for that binary path
// and build and refresh is false, otherwise by running `models` (never
// --list-models) bounded by cfg.ModelsTimeout (5 s by default) and caching
// the result. An explicit empty account is an empty catalog, not an error.
//
// Errors: failure.MissingCLI without an available binary; failure.Timeout;
// the keychain, IDE and not-logged-in states as in Auth.Err; failure.Process for another
// non-zero exit; failure.Protocol when the output holds no model line and
// no known empty state but other text.
func ModelsOf(ctx context.Context, cfg Config, report Report, refresh bool) (ModelsReport, error) {
	mr := ModelsReport{Models: []Model{}, BinaryPath: report.BinaryPath, Version: report.Version, Diagnostics: []string{}}
	if !report.Available {
		return mr, failure.New(failure.MissingCLI, "no Cursor CLI binary is available to list models")
	}
	cache, cacheErr := cfg.cache()
	if cacheErr != nil {
		mr.Diagnostics = append(mr.Diagnostics, BoundDetail("model catalog cache disabled: "+cacheErr.Error()))
	}
	build := report.Version
	if build == "" {
		build = report.Resolution.Build
	}
	if cache != nil && !refresh {
		if models, fetched, ok := cache.Load(report.BinaryPath, build); ok {
			mr.Models, mr.Source, mr.FetchedAt, mr.Empty = models, SourceCache, fetched, len(models) == 0
			return mr, nil
		}
	}
	timeout := orDefault(cfg.ModelsTimeout, DefaultModelsTimeout)
	r := cfg.run().run(ctx, report.Resolution, []string{"models"}, timeout)
	if r.cancelled || ctx.Err() != nil {
		return mr, ctxFailure(ctx.Err(), "models")
	}
	if !r.ok() {
		if a := ParseStatus(r.stdout, []byte(r.stderr), 1); a.State == AuthKeychainLocked || a.State == AuthIDEMissing || a.Reason == ReasonNotLoggedIn {
			return mr, a.Err()
		}
		outcome, detail := classify(r, "models", timeout)
		kind := failure.Process
		switch outcome {
		case OutcomeTimeout:
			kind = failure.Timeout
		case OutcomeNotFound:
			kind = failure.MissingCLI
		case OutcomeRefused, OutcomePermission:
			kind = failure.Setup
		}
		return mr, failure.New(kind, "listing Cursor models failed").WithDetail(detail)
	}
	c := ParseModels(string(r.stdout))
	mr.Models, mr.Empty, mr.Source, mr.FetchedAt = c.Models, c.Empty, SourceCLI, time.Now().UTC()
	for _, line := range c.Unrecognized {
		mr.Diagnostics = append(mr.Diagnostics, "unrecognized models line: "+line)
	}
	if r.truncated {
		mr.Diagnostics = append(mr.Diagnostics, fmt.Sprintf("models output was cut at %d bytes", maxProbeStdout))
	}
	if len(c.Models) == 0 && !c.Empty && len(c.Unrecognized) == 0 {
		mr.Diagnostics = append(mr.Diagnostics, "`models` printed no model lines and no empty-account message")
	}
	if len(c.Models) == 0 && !c.Empty && len(c.Unrecognized) > 0 {
		return mr, failure.New(failure.Protocol, "`models` printed no model lines").WithDetail(JoinDetails(c.Unrecognized...))
	}
	if cache != nil {
		if err := cache.Store(report.BinaryPath, build, c.Models); err != nil {
			mr.Diagnostics = append(mr.Diagnostics, BoundDetail("model catalog not cached: "+err.Error()))
		}
	}
	return mr, nil
}

// Models is Probe followed by ModelsOf on the binary it chose. A build
// older than tested still lists its models, and the setup error is
// returned with them.
func Models(ctx context.Context, cfg Config, refresh bool) (ModelsReport, error) {
	report, perr := Probe(ctx, cfg)
	if !report.Available {
		return ModelsReport{Models: []Model{}, Diagnostics: report.Diagnostics}, perr
	}
	mr, merr := ModelsOf(ctx, cfg, report, refresh)
	if perr != nil {
		return mr, perr
	}
	return mr, merr
}

func (c Config) cache() (*CatalogCache, error) {
	if c.Cache != nil {
		return c.Cache, nil
	}
	dir, err := DefaultCatalogCacheDir()
	if err != nil {
		return nil, err
	}
	return &CatalogCache{Dir: dir}, nil
}
