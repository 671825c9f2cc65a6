package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

const shimUsage = "shim explain [--json] [TARGET] [-- ARG...]"

// explainReport is `cursorkit shim explain --json` (docs/contract.md, "JSON
// shapes"): the resolution,
// plan and warnings, the refusal when there is no plan, and what where.exe
// said (Windows; "unavailable" elsewhere).
type explainReport struct {
	Resolution discovery.Resolution  `json:"resolution"`
	Plan       *shim.Command         `json:"plan"`
	Refusal    *shim.Refusal         `json:"refusal,omitempty"`
	Where      discovery.WhereResult `json:"where"`
	Warnings   []string              `json:"warnings"`
}

// explain resolves target (the Cursor candidates when empty) and plans its
// launch with args, exactly as run and exec would, without running it.
func (a *app) explain(ctx context.Context, target string, args []string) (explainReport, error) {
	env := discovery.EnvFromOS()
	fsys := discovery.OSFS()
	var res discovery.Resolution
	var err error
	whereName := target
	if target == "" {
		cfg, cerr := a.probeConfig()
		if cerr != nil {
			return explainReport{Warnings: []string{}}, cerr
		}
		cands := cursor.Candidates(cfg.Override, a.getenv)
		for _, c := range cands {
			if cerr := cursor.CheckCandidate(c, env.GOOS); cerr != nil {
				return explainReport{Warnings: []string{}}, cerr
			}
		}
		res, err = discovery.ResolveFirst(ctx, cands, env, fsys)
		var fe *failure.Error
		if errors.As(err, &fe) && fe.Kind != failure.Cancelled && fe.Kind != failure.Timeout {
			err = failure.New(fe.Kind, "Cursor CLI not found").WithDetail(fe.Detail)
		}
		// where.exe cross-checks the PATH name that was chosen, else the
		// first one tried.
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
	rep := explainReport{Resolution: res, Where: discovery.WhereCheck(ctx, whereName, env)}
	if err != nil {
		rep.Warnings = append([]string{}, res.Warnings...)
		return rep, err
	}
	ex := shim.Explain(res, args, shim.OptionsFromOS())
	rep.Plan, rep.Refusal, rep.Warnings = ex.Command, ex.Refusal, ex.Warnings
	if d := rep.Where.Disagreement(res); d != "" {
		rep.Warnings = append(rep.Warnings, d)
	}
	if rep.Refusal != nil {
		return rep, &failure.Error{Kind: rep.Refusal.Kind, Message: rep.Refusal.Message}
	}
	return rep, nil
}

// runShim is `shim explain`: its flags may come before or after explain,
// so one flag set reads the whole line and explain must be its first
// positional argument.
func runShim(ctx context.Context, a *app, args []string) int {
	fs := newFlags("shim explain")
	asJSON := fs.Bool("json", a.json, "print one JSON object")
	if code, ok := a.parseFlags(fs, shimUsage, args); !ok {
		return code
	}
	positional, launchArgs := fs.Args(), []string(nil)
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		positional, launchArgs = fs.Args()[:dash], fs.Args()[dash:]
	}
	if len(positional) == 0 || positional[0] != "explain" {
		return a.usageError(*asJSON, shimUsage, errors.New("shim needs the subcommand explain"))
	}
	positional = positional[1:]
	if len(positional) > 1 {
		return a.fail(*asJSON, failure.New(failure.Input, "shim explain takes one TARGET; put the target's arguments after --"))
	}
	target := ""
	if len(positional) == 1 {
		target = strings.TrimSpace(positional[0])
		if target == "" {
			return a.fail(*asJSON, failure.New(failure.Input, "TARGET is empty"))
		}
	}
	rep, err := a.explain(ctx, target, launchArgs)
	if *asJSON {
		if err != nil {
			return a.failWith(true, err, "explain", rep)
		}
		a.writeJSON(rep)
		return failure.ExitOK
	}
	printExplain(a.stdout, rep, err)
	if err != nil {
		return a.fail(false, err)
	}
	return failure.ExitOK
}

func printExplain(w io.Writer, rep explainReport, err error) {
	res := rep.Resolution
	fmt.Fprintln(w, "tried:")
	for _, s := range res.Trail {
		line := "  " + s.Outcome + "  " + s.Candidate
		if s.Dir != "" {
			line += "  in " + s.Dir
		}
		if s.Path != "" {
			line += "  " + s.Path
		}
		if s.Detail != "" {
			line += ": " + s.Detail
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "where.exe: %s", rep.Where.Status)
	if len(rep.Where.Paths) > 0 {
		fmt.Fprintf(w, ", first %s", rep.Where.Paths[0])
	}
	if rep.Where.Detail != "" {
		fmt.Fprintf(w, " (%s)", rep.Where.Detail)
	}
	fmt.Fprintln(w)
	if res.Path != "" {
		fmt.Fprintf(w, "chosen: %s\n  kind %s, source %s, candidate %s\n", res.Path, res.Kind, res.Source, res.Candidate)
		if len(res.Links) > 0 {
			fmt.Fprintf(w, "  links %s\n", strings.Join(res.Links, " -> "))
		}
		if build := cursor.InstalledBuild(res); build != "" {
			fmt.Fprintf(w, "  build %s\n", build)
		}
	}
	if rep.Plan != nil {
		fmt.Fprintf(w, "plan (%s):\n  program      %s\n  command line %s\n", rep.Plan.Kind, rep.Plan.Program, rep.Plan.CommandLine)
	}
	if rep.Refusal != nil {
		fmt.Fprintf(w, "refused (%s): %s\n", rep.Refusal.Kind, rep.Refusal.Message)
	}
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if err != nil && rep.Refusal == nil {
		fmt.Fprintf(w, "not found: %v\n", err)
	}
}
