package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/jsonobj"
	"github.com/cursorkit/cursorkit/probe"
)

// probeConfig is the probe configuration of one call: --binary when given,
// else the settings file's cursorCliBinaryPath (a missing file means none).
func (a *app) probeConfig() (probe.Config, error) {
	var cfg probe.Config
	d, err := a.envDuration(envProbeTimeout, 0)
	if err != nil {
		return cfg, err
	}
	if d > 0 {
		// The models listing keeps at least its own default bound.
		cfg.VersionTimeout, cfg.StatusTimeout, cfg.ModelsTimeout = d, d, max(d, 5*time.Second)
	}
	if a.binarySet {
		cfg.Override = strings.TrimSpace(a.binary)
		return cfg, nil
	}
	settings, err := cursor.LoadSettings(a.settingsPath)
	if err != nil {
		return cfg, err // a setup error naming the file
	}
	cfg.Override = settings.BinaryPath
	return cfg, nil
}

// failWith reports err like fail, and in JSON mode keeps what was learned
// before the failure under key, so `status --json` of a logged-out machine
// still shows which binary answered.
func (a *app) failWith(asJSON bool, err error, key string, partial any) int {
	kind := failure.KindOf(err)
	if !asJSON || partial == nil {
		return a.fail(asJSON, err)
	}
	a.writeJSON(map[string]any{
		"error": errorObject{Kind: kind, Message: err.Error()},
		key:     partial,
	})
	return failure.ExitCode(kind)
}

// probeCommand parses the flags of probe, status, models and doctor
// (--json, and those more adds), which take no arguments, and returns the
// probe configuration. ok false: exit with code.
func (a *app) probeCommand(name, usage string, args []string, more func(*pflag.FlagSet)) (cfg probe.Config, asJSON bool, code int, ok bool) {
	fs := newFlags(name)
	fs.BoolVar(&asJSON, "json", a.json, "print one JSON object")
	if more != nil {
		more(fs)
	}
	if code, ok := a.parseFlags(fs, usage, args); !ok {
		return cfg, asJSON, code, false
	}
	if fs.NArg() > 0 {
		return cfg, asJSON, a.fail(asJSON, failure.New(failure.Input, "%s takes no arguments", name)), false
	}
	cfg, err := a.probeConfig()
	if err != nil {
		return cfg, asJSON, a.fail(asJSON, err), false
	}
	return cfg, asJSON, 0, true
}

// printReport prints what a probe command learned, v (the JSON object,
// kept under key beside the error object of a failure) or the lines print
// writes, then err.
func (a *app) printReport(asJSON bool, key string, v any, print func(io.Writer), err error) int {
	if asJSON {
		if err != nil {
			return a.failWith(true, err, key, v)
		}
		a.writeJSON(v)
		return failure.ExitOK
	}
	print(a.stdout)
	if err != nil {
		return a.fail(false, err)
	}
	return failure.ExitOK
}

const probeUsage = "probe [--json]"

func runProbe(ctx context.Context, a *app, args []string) int {
	cfg, asJSON, code, ok := a.probeCommand("probe", probeUsage, args, nil)
	if !ok {
		return code
	}
	report, err := probe.Probe(ctx, cfg)
	return a.printReport(asJSON, "probe", report, func(w io.Writer) { printProbe(w, report) }, err)
}

const statusUsage = "status [--json]"

func runStatus(ctx context.Context, a *app, args []string) int {
	cfg, asJSON, code, ok := a.probeCommand("status", statusUsage, args, nil)
	if !ok {
		return code
	}
	report, auth, err := probe.StatusOf(ctx, cfg)
	merged, merr := jsonobj.Merge(report, auth)
	if merr != nil && asJSON {
		return a.fail(true, failure.Wrap(failure.Unclassified, merr, "encoding the status"))
	}
	return a.printReport(asJSON, "status", merged, func(w io.Writer) {
		printProbe(w, report)
		if report.Available {
			printAuth(w, auth)
		}
	}, err)
}

const modelsUsage = "models [--json] [--refresh]"

func runModels(ctx context.Context, a *app, args []string) int {
	var refresh bool
	cfg, asJSON, code, ok := a.probeCommand("models", modelsUsage, args, func(fs *pflag.FlagSet) {
		fs.BoolVar(&refresh, "refresh", false, "ask the CLI again instead of using the cached catalog")
	})
	if !ok {
		return code
	}
	report, err := probe.ModelsOf(ctx, cfg, refresh)
	return a.printReport(asJSON, "models", report, func(w io.Writer) { printModels(w, report) }, err)
}

func printProbe(w io.Writer, r probe.Report) {
	if !r.Available {
		fmt.Fprintln(w, "Cursor CLI: not usable")
	} else {
		fmt.Fprintln(w, "Cursor CLI: available")
		res := r.Binary.Resolution
		fmt.Fprintf(w, "  binary   %s\n", res.Path)
		fmt.Fprintf(w, "  kind     %s, found through %s%s\n", res.Kind, res.Source, configuredNote(r))
		fmt.Fprintf(w, "  version  %s (%s)\n", orDash(r.Version), testedText(r.Tested))
		if r.Blocked != cursor.CauseNone {
			fmt.Fprintf(w, "  blocked  %s: %s\n", r.Blocked.Summary(), r.Blocked.Fix())
		}
	}
	if len(r.Candidates) > 0 {
		fmt.Fprintln(w, "  candidates:")
		for _, c := range r.Candidates {
			line := fmt.Sprintf("    %-18s %-8s %s", c.Outcome, c.Source, c.Candidate)
			if c.Detail != "" {
				line += ": " + c.Detail
			}
			fmt.Fprintln(w, line)
		}
	}
	// Diagnostics repeat each failed candidate's line; show only the rest.
	shown := map[string]bool{}
	for _, c := range r.Candidates {
		shown[fmt.Sprintf("%s %s: %s", c.Source, c.Candidate, c.Detail)] = true
	}
	for _, d := range r.Diagnostics {
		if !shown[d] {
			fmt.Fprintf(w, "  note: %s\n", d)
		}
	}
}

func configuredNote(r probe.Report) string {
	if r.Binary.Resolution.Source == discovery.SourceOverride {
		return " (the configured binary)"
	}
	return ""
}

func testedText(t cursor.Tested) string {
	switch t {
	case cursor.TestedInRange:
		return "a tested build"
	case cursor.TestedNewer:
		return "newer than the builds cursorkit was tested with"
	case cursor.TestedOlder:
		return "older than the tested builds: update the Cursor CLI"
	}
	return "build not recognised"
}

func printAuth(w io.Writer, au probe.Auth) {
	fmt.Fprintf(w, "  auth     %s (%s)\n", au.State, au.Reason)
	if au.Detail != "" {
		fmt.Fprintf(w, "           %s\n", au.Detail)
	}
}

func printModels(w io.Writer, r probe.ModelsReport) {
	if r.Empty || len(r.Models) == 0 {
		fmt.Fprintln(w, "No models available for this account.")
	}
	width := 0
	for _, m := range r.Models {
		width = max(width, len(m.ID))
	}
	for _, m := range r.Models {
		var marks []string
		if m.Current {
			marks = append(marks, "current")
		}
		if m.Default {
			marks = append(marks, "default")
		}
		suffix := ""
		if len(marks) > 0 {
			suffix = " (" + strings.Join(marks, ", ") + ")"
		}
		fmt.Fprintf(w, "%-*s  %s%s\n", width, m.ID, m.Label, suffix)
	}
	if r.Source != "" {
		fmt.Fprintf(w, "(%d models, from %s)\n", len(r.Models), r.Source)
	}
	for _, d := range r.Diagnostics {
		fmt.Fprintf(w, "note: %s\n", d)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
