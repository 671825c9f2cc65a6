package probe

import (
	"context"
	"errors"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

// Explanation is how a program would be found and launched, exactly, and
// what where.exe says of it (docs/contract.md, "JSON shapes", EXPLAIN).
type Explanation struct {
	Resolution discovery.Resolution `json:"resolution"`
	// Plan is nil when nothing was found or the launch is refused; then
	// Refusal says why it was refused.
	Plan    *shim.Command `json:"plan"`
	Refusal *shim.Refusal `json:"refusal,omitempty"`
	// Where is where.exe's answer on Windows, "unavailable" elsewhere.
	Where discovery.WhereResult `json:"where"`
	// Warnings are the resolution's, then the plan's, then where.exe's
	// disagreement; never nil.
	Warnings []string `json:"warnings"`
}

// Explain resolves target (cfg's Cursor candidates, as Probe tries them,
// when "") and plans its launch with args exactly as a turn would, without
// running anything but where.exe. where.exe cross-checks the PATH name
// resolution chose, else the first one tried. The error is resolution's
// (for the Cursor candidates, "Cursor CLI not found" with the trail's
// detail) or the refusal's, and the Explanation keeps what was learned.
func Explain(ctx context.Context, cfg Config, target string, args []string) (Explanation, error) {
	env, fsys := cfg.machine(), cfg.fsys()
	var res discovery.Resolution
	var err error
	whereName := target
	if target == "" {
		cands := cursor.Candidates(cfg.Override, cfg.getenv)
		if cerr := cursor.CheckCandidates(cands, env.GOOS); cerr != nil {
			return Explanation{Warnings: []string{}}, cerr
		}
		res, err = discovery.ResolveFirst(ctx, cands, env, fsys)
		var fe *failure.Error
		if errors.As(err, &fe) && fe.Kind != failure.Cancelled && fe.Kind != failure.Timeout {
			err = failure.New(fe.Kind, "Cursor CLI not found").WithDetail(fe.Detail)
		}
		for _, c := range cands {
			if c.Source == discovery.SourcePath && whereName == "" {
				whereName = c.Value
			}
		}
		if err == nil && res.Source == discovery.SourcePath {
			whereName = res.Candidate
		}
	} else {
		res, err = discovery.Resolve(ctx, discovery.Candidate{Value: target, Source: discovery.SourceOverride}, env, fsys)
	}
	ex := Explanation{Resolution: res, Where: discovery.WhereCheck(ctx, whereName, env)}
	if err != nil {
		ex.Warnings = append([]string{}, res.Warnings...)
		return ex, err
	}
	plan := shim.Explain(res, args, cfg.shimOptions())
	ex.Plan, ex.Refusal, ex.Warnings = plan.Command, plan.Refusal, plan.Warnings
	if d := ex.Where.Disagreement(res); d != "" {
		ex.Warnings = append(ex.Warnings, d)
	}
	if ex.Refusal != nil {
		return ex, &failure.Error{Kind: ex.Refusal.Kind, Message: ex.Refusal.Message}
	}
	return ex, nil
}
