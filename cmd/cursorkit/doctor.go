package main

import (
	"context"
	"fmt"
	"io"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/probe"
)

const doctorUsage = "doctor [--json]"

// problem is one thing doctor found wrong, with what to do about it.
type problem struct {
	Kind    failure.Kind `json:"kind"`
	Message string       `json:"message"`
	Fix     string       `json:"fix"`
}

// doctorReport is `cursorkit doctor --json`.
type doctorReport struct {
	OK       bool                `json:"ok"`
	Probe    probe.Report        `json:"probe"`
	Status   *probe.Auth         `json:"status"`
	Models   *probe.ModelsReport `json:"models"`
	Explain  *explainReport      `json:"explain"`
	Problems []problem           `json:"problems"`
}

// doctor runs every check: probe.Inspect (the probe, then auth and models
// of the binary it chose, concurrently) beside the shim explanation and
// the where.exe cross-check, so the whole takes about as long as the
// slowest single probe.
func (a *app) doctor(ctx context.Context, cfg probe.Config) doctorReport {
	var rep doctorReport
	var explainErr error
	explained := make(chan struct{})
	go func() {
		defer close(explained)
		ex, err := a.explain(ctx, "", nil)
		rep.Explain, explainErr = &ex, err
	}()
	in := probe.Inspect(ctx, cfg, false)
	<-explained
	rep.Probe = in.Probe
	var statusErr error
	if in.Probe.Available {
		rep.Status, rep.Models = &in.Auth, &in.Models
		statusErr = in.Auth.Err()
	}
	rep.Problems = diagnose(cfg, rep, in.ProbeErr, explainErr, statusErr, in.ModelsErr)
	rep.OK = len(rep.Problems) == 0
	return rep
}

// diagnose turns the checks' results into problems, most blocking first.
// A cause the agent's words named (cursor.Diagnose: the keychain, the
// IDE, the network, a limit, the login) gets that cause's fix wherever it
// was found, and a problem already listed (a blocked --version repeated
// by status and models) is listed once.
func diagnose(cfg probe.Config, rep doctorReport, probeErr, explainErr, statusErr, modelsErr error) []problem {
	problems := []problem{}
	add := func(err error, fix string) {
		p := problem{Kind: failure.KindOf(err), Message: err.Error(), Fix: fix}
		for _, q := range problems {
			if q.Kind == p.Kind && q.Message == p.Message {
				return
			}
		}
		problems = append(problems, p)
	}
	if probeErr != nil {
		switch {
		case rep.Probe.Blocked != cursor.CauseNone:
			add(probeErr, rep.Probe.Blocked.Fix())
		case failure.Is(probeErr, failure.MissingCLI):
			add(probeErr, cursor.InstallHint)
		case failure.Is(probeErr, failure.Setup):
			add(probeErr, "update the Cursor CLI (cursor-agent update), or point cursorCliBinaryPath at a newer build")
		default:
			add(probeErr, "run `cursorkit shim explain` to see how the binary is found and launched")
		}
	}
	if cfg.Override != "" && rep.Probe.Available && rep.Probe.Binary.Resolution.Source != discovery.SourceOverride {
		problems = append(problems, problem{
			Kind:    failure.Setup,
			Message: "the configured binary did not work; a PATH candidate is used instead",
			Fix:     "fix or clear cursorCliBinaryPath (an empty value clears it); the probe's diagnostics say why it failed",
		})
	}
	if explainErr != nil && probeErr == nil {
		add(explainErr, "the binary answers --version but a prompt turn could not be planned; see the explain section")
	}
	if statusErr != nil && rep.Status != nil {
		add(statusErr, fixOr(rep.Status.Cause(), "run `cursor-agent status` by hand to see what it says"))
	}
	if modelsErr != nil {
		add(modelsErr, fixOr(kindCause(failure.KindOf(modelsErr)), "run `cursor-agent models` by hand; `cursorkit models --refresh` asks again"))
	} else if rep.Models != nil && len(rep.Models.Models) == 0 {
		problems = append(problems, problem{Kind: failure.Setup, Message: "no models are available for this account",
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

// kindCause is the cause a failure kind can only have come from: the
// network and the limits (auth and setup have several).
func kindCause(k failure.Kind) cursor.Cause {
	switch k {
	case failure.Network:
		return cursor.CauseNetwork
	case failure.Quota:
		return cursor.CauseQuota
	case failure.RateLimited:
		return cursor.CauseRateLimited
	}
	return cursor.CauseNone
}

func runDoctor(ctx context.Context, a *app, args []string) int {
	cfg, asJSON, code, ok := a.probeCommand("doctor", doctorUsage, args, nil)
	if !ok {
		return code
	}
	rep := a.doctor(ctx, cfg)
	code = failure.ExitOK
	if len(rep.Problems) > 0 {
		code = failure.ExitCode(rep.Problems[0].Kind)
	}
	if asJSON {
		if len(rep.Problems) > 0 {
			first := rep.Problems[0]
			a.writeJSON(map[string]any{"error": errorObject{Kind: first.Kind, Message: first.Message}, "doctor": rep})
		} else {
			a.writeJSON(rep)
		}
		return code
	}
	printDoctor(a.stdout, rep)
	return code
}

func printDoctor(w io.Writer, rep doctorReport) {
	printProbe(w, rep.Probe)
	if rep.Status != nil {
		printAuth(w, *rep.Status)
	}
	if rep.Models != nil {
		fmt.Fprintf(w, "  models   %d (from %s)\n", len(rep.Models.Models), orDash(rep.Models.Source))
	}
	if rep.Explain != nil && rep.Explain.Plan != nil {
		fmt.Fprintf(w, "  launch   %s\n", rep.Explain.Plan.CommandLine)
	}
	if rep.Explain != nil {
		fmt.Fprintf(w, "  where    %s\n", rep.Explain.Where.Status)
		for _, warn := range rep.Explain.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", warn)
		}
	}
	if len(rep.Problems) == 0 {
		fmt.Fprintln(w, "\nAll checks passed: cursorkit can run the Cursor CLI here.")
		return
	}
	fmt.Fprintf(w, "\n%d problem(s):\n", len(rep.Problems))
	for i, p := range rep.Problems {
		fmt.Fprintf(w, "%d. [%s] %s\n   fix: %s\n", i+1, p.Kind, p.Message, p.Fix)
	}
}
