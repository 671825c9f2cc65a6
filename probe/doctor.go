package probe

import (
	"context"
	"strings"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
)

// StatusOf is Probe, then Status of the binary it chose. A probe failure
// other than an old build ends it with an unknown auth state and the
// probe's error; for an old build the status still runs and the probe's
// setup error is returned.
func StatusOf(ctx context.Context, cfg Config) (Report, Auth, error) {
	report, perr := Probe(ctx, cfg)
	auth, aerr := Status(ctx, cfg, report) // without a binary, an unknown state; Probe's error says why
	if perr != nil {
		return report, auth, perr
	}
	return report, auth, aerr
}

// ModelsOf is Probe, then Models of the binary it chose. A build older
// than tested still lists its models, and the probe's setup error is
// returned with them. Without a binary the report lists no models ([]) and
// carries the probe's diagnostics.
func ModelsOf(ctx context.Context, cfg Config, refresh bool) (ModelsReport, error) {
	report, perr := Probe(ctx, cfg)
	if !report.Available {
		return ModelsReport{Models: []Model{}, Diagnostics: report.Diagnostics}, perr
	}
	mr, merr := Models(ctx, cfg, report, refresh)
	if perr != nil {
		return mr, perr
	}
	return mr, merr
}

// ResolveTurnModel maps a turn's model and effort to the id to pass to
// --model, and says whether the effort is part of it (ResolveModel against
// the catalog of the binary report chose). A bracketed id without an
// effort passes through untouched, without asking for the catalog.
func ResolveTurnModel(ctx context.Context, cfg Config, report Report, model, effort string) (string, bool, error) {
	if strings.Contains(model, "[") && effort == "" {
		return model, false, nil
	}
	catalog, err := Models(ctx, cfg, report, false)
	if err != nil {
		return "", false, err
	}
	return ResolveModel(catalog.Models, model, effort)
}

// Problem is one thing `cursorkit doctor` found wrong, with what to do
// about it.
type Problem struct {
	Kind    failure.Kind `json:"kind"`
	Message string       `json:"message"`
	Fix     string       `json:"fix"`
}

// Diagnose turns an inspection of cfg, and the error of planning a turn of
// the binary (explainErr, nil when it could be planned), into problems,
// most blocking first; none (an empty list, never nil) means all is well.
// A cause the agent's words named (cursor.Diagnose: the keychain, the IDE,
// the network, a limit, the login) gets that cause's fix wherever it was
// found, and a problem already listed (a blocked --version repeated by
// status and models) is listed once.
func Diagnose(cfg Config, in Inspection, explainErr error) []Problem {
	problems := []Problem{}
	add := func(err error, fix string) {
		p := Problem{Kind: failure.KindOf(err), Message: err.Error(), Fix: fix}
		for _, q := range problems {
			if q.Kind == p.Kind && q.Message == p.Message {
				return
			}
		}
		problems = append(problems, p)
	}
	if in.ProbeErr != nil {
		switch {
		case in.Probe.Blocked != cursor.CauseNone:
			add(in.ProbeErr, in.Probe.Blocked.Fix())
		case failure.Is(in.ProbeErr, failure.MissingCLI):
			add(in.ProbeErr, cursor.InstallHint)
		case failure.Is(in.ProbeErr, failure.Setup):
			add(in.ProbeErr, "update the Cursor CLI (cursor-agent update), or point cursorCliBinaryPath at a newer build")
		default:
			add(in.ProbeErr, "run `cursorkit shim explain` to see how the binary is found and launched")
		}
	}
	if cfg.Override != "" && in.Probe.Available && in.Probe.Binary.Resolution.Source != discovery.SourceOverride {
		problems = append(problems, Problem{
			Kind:    failure.Setup,
			Message: "the configured binary did not work; a PATH candidate is used instead",
			Fix:     "fix or clear cursorCliBinaryPath (an empty value clears it); the probe's diagnostics say why it failed",
		})
	}
	if explainErr != nil && in.ProbeErr == nil {
		add(explainErr, "the binary answers --version but a prompt turn could not be planned; see the explain section")
	}
	if !in.Probe.Available {
		return problems
	}
	if err := in.Auth.Err(); err != nil {
		add(err, fixOr(in.Auth.Cause(), "run `cursor-agent status` by hand to see what it says"))
	}
	if in.ModelsErr != nil {
		add(in.ModelsErr, fixOr(in.Models.Cause, "run `cursor-agent models` by hand; `cursorkit models --refresh` asks again"))
	} else if len(in.Models.Models) == 0 {
		problems = append(problems, Problem{Kind: failure.Setup, Message: "no models are available for this account",
			Fix: "check the account's plan in the Cursor dashboard"})
	}
	return problems
}

// fixOr is c's fix, or fallback when c names no cause.
func fixOr(c cursor.Cause, fallback string) string {
	if fix := c.Fix(); fix != "" {
		return fix
	}
	return fallback
}
