package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/probe"
)

const shimUsage = "shim explain [--json] [TARGET] [-- ARG...]"

// explain is probe.Explain; only the Cursor candidates (no target) read
// the probe configuration, so a bad one fails nothing else.
func (a *app) explain(ctx context.Context, target string, args []string) (probe.Explanation, error) {
	var cfg probe.Config
	if target == "" {
		var err error
		if cfg, err = a.probeConfig(); err != nil {
			return probe.Explanation{Warnings: []string{}}, err
		}
	}
	return probe.Explain(ctx, cfg, target, args)
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
	return a.printReport(*asJSON, "explain", rep, func(w io.Writer) { printExplain(w, rep, err) }, err)
}

func printExplain(w io.Writer, rep probe.Explanation, err error) {
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
