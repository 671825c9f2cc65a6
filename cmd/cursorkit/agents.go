package main

import (
	"context"
	"fmt"
	"os"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/failure"
)

const agentsUsage = "agents [--json]"

// runAgents lists the agent CLIs this machine has (agents.InspectAll). A
// missing or broken agent is a line of the listing, not a failure: the
// command fails only on bad flags and a bad configuration.
func runAgents(ctx context.Context, a *app, args []string) int {
	fs := newFlags("agents")
	var asJSON bool
	fs.BoolVar(&asJSON, "json", a.json, "print one JSON object")
	if code, ok := a.parseFlags(fs, agentsUsage, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return a.fail(asJSON, failure.New(failure.Input, "agents takes no arguments"))
	}
	cfg, err := a.probeConfig()
	if err != nil {
		return a.fail(asJSON, err)
	}
	timeout := cfg.VersionTimeout // CURSORKIT_PROBE_TIMEOUT, else agents' default
	reports := agents.InspectAll(ctx, cfg.Override, a.getenv, os.Environ(), timeout)
	if asJSON {
		a.writeJSON(map[string]any{"agents": reports})
		return failure.ExitOK
	}
	for _, r := range reports {
		if !r.Found {
			fmt.Fprintf(a.stdout, "%-7s not found: %s\n", r.Name, r.Install)
			continue
		}
		v := r.Version
		if r.Error != nil {
			v = "unusable: " + r.Error.Message + " (" + string(r.Error.Kind) + ")"
		}
		fmt.Fprintf(a.stdout, "%-7s %s (%s, %s)\n        version %s\n", r.Name, r.Path, r.Kind, r.Source, v)
		if r.Launch != nil {
			fmt.Fprintf(a.stdout, "        launch  %s\n", r.Launch.CommandLine)
		}
	}
	return failure.ExitOK
}
