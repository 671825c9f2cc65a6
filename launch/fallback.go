package launch

import (
	"context"
	"errors"
	"io/fs"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

// WarningFellBack is the warning StartWithFallback records when it started
// the `cursor` candidate instead of a vanished `cursor-agent`.
const WarningFellBack = "cursor-agent was not found at launch: started the cursor candidate instead"

// Retry says whether and how StartWithFallback may retry with the `cursor`
// PATH candidate.
type Retry struct {
	// Configured reports that an override (settings or --binary) or
	// CURSOR_AGENT_BIN is configured: then there is never a retry.
	Configured bool
	// Args are the agent arguments the first plan was built from; the
	// fallback plan is built from the same.
	Args []string
	// Env is the machine `cursor` is resolved on (discovery.EnvFromOS()).
	Env discovery.Env
	// FS is the file system it is resolved in; nil means discovery.OSFS().
	FS discovery.FS
	// Shim builds the fallback plan (shim.OptionsFromOS()).
	Shim shim.Options
}

// Launched is what StartWithFallback started.
type Launched struct {
	Process    *Process
	Plan       shim.Plan            // the plan actually started
	Resolution discovery.Resolution // the resolution it was built from
	// FellBack reports that the `cursor` candidate was started; the plan's
	// and the resolution's warnings then include WarningFellBack.
	FellBack bool
}

// StartWithFallback starts plan, built from res. When no override is
// configured, res is the `cursor-agent` PATH candidate and Start fails
// because that file is absent (it vanished since resolution), it resolves
// the `cursor` PATH candidate, builds its plan from retry.Args and starts
// that, once. opts.Stdin is untouched by a start that failed, so the retry
// sends the same prompt. When the retry cannot happen the first error is
// returned; when it fails too, a failure.MissingCLI error holding both
// (errors.Is(err, fs.ErrNotExist) holds).
func StartWithFallback(ctx context.Context, plan shim.Plan, res discovery.Resolution, retry Retry, opts Options) (Launched, error) {
	p, err := Start(ctx, plan, opts)
	if err == nil {
		return Launched{Process: p, Plan: plan, Resolution: res}, nil
	}
	if retry.Configured || res.Source != discovery.SourcePath || res.Candidate != discovery.NameCursorAgent ||
		failure.KindOf(err) != failure.MissingCLI || !errors.Is(err, fs.ErrNotExist) {
		return Launched{}, err
	}
	fsys := retry.FS
	if fsys == nil {
		fsys = discovery.OSFS()
	}
	alt, rerr := discovery.Resolve(ctx, discovery.Candidate{Value: discovery.NameCursor, Source: discovery.SourcePath}, retry.Env, fsys)
	if rerr != nil {
		return Launched{}, failure.Wrap(failure.MissingCLI, errors.Join(err, rerr), "cursor-agent was not found at launch and the cursor candidate cannot be resolved")
	}
	altPlan, berr := shim.Build(alt, retry.Args, retry.Shim)
	if berr != nil {
		return Launched{}, failure.Wrap(failure.KindOf(berr), errors.Join(err, berr), "cursor-agent was not found at launch and the cursor candidate cannot be planned")
	}
	p, serr := Start(ctx, altPlan, opts)
	if serr != nil {
		return Launched{}, failure.Wrap(failure.KindOf(serr), errors.Join(err, serr), "cursor-agent was not found at launch and the cursor candidate failed to start")
	}
	altPlan.Warnings = append(altPlan.Warnings, WarningFellBack)
	alt.Warnings = append(alt.Warnings, WarningFellBack)
	return Launched{Process: p, Plan: altPlan, Resolution: alt, FellBack: true}, nil
}
