package main

import (
	"context"
	"fmt"
	"io"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/probe"
)

const doctorUsage = "doctor [--json]"

// doctorReport is `cursorkit doctor --json`.
type doctorReport struct {
	OK       bool                `json:"ok"`
	Probe    probe.Report        `json:"probe"`
	Status   *probe.Auth         `json:"status"`
	Models   *probe.ModelsReport `json:"models"`
	Explain  *probe.Explanation  `json:"explain"`
	Problems []probe.Problem     `json:"problems"`
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
		ex, err := probe.Explain(ctx, cfg, "", nil)
		rep.Explain, explainErr = &ex, err
	}()
	in := probe.Inspect(ctx, cfg, false)
	<-explained
	rep.Probe = in.Probe
	if in.Probe.Available {
		rep.Status, rep.Models = &in.Auth, &in.Models
	}
	rep.Problems = probe.Diagnose(cfg, in, explainErr)
	rep.OK = len(rep.Problems) == 0
	return rep
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
