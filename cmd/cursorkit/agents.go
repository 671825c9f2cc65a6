package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/turn"
)

const agentsUsage = "agents [--json]"

// agentReport is one agent of `cursorkit agents --json`.
type agentReport struct {
	Name     string        `json:"name"`
	Provider string        `json:"provider"`
	Found    bool          `json:"found"`
	Path     string        `json:"path,omitempty"`
	Kind     string        `json:"kind,omitempty"`
	Source   string        `json:"source,omitempty"`
	Version  string        `json:"version,omitempty"`
	Launch   *launchReport `json:"launch,omitempty"`
	Error    *errorObject  `json:"error,omitempty"`
	// Install says how to install a missing agent.
	Install string `json:"install,omitempty"`
}

// launchReport is how a plan-mode turn of the agent would be started.
type launchReport struct {
	Program     string   `json:"program"`
	Args        []string `json:"args"`
	CommandLine string   `json:"commandLine"`
}

// runAgents lists the agent CLIs this machine has: each found through
// discovery as a turn would find it, asked its --version (all at once,
// each bounded), and the exact launch of a plan-mode turn. A missing or
// broken agent is a line of the listing, not a failure: the command fails
// only on bad flags.
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
	timeout, err := a.versionTimeout()
	if err != nil {
		return a.fail(asJSON, err)
	}
	all := agents.All()
	reports := make([]agentReport, len(all))
	var wg sync.WaitGroup
	for i, ag := range all {
		wg.Go(func() { reports[i] = a.inspectAgent(ctx, ag, timeout) })
	}
	wg.Wait()
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

// versionTimeout is CURSORKIT_PROBE_TIMEOUT, else agents' default.
func (a *app) versionTimeout() (time.Duration, error) {
	cfg, err := a.probeConfig()
	if err != nil {
		return 0, err
	}
	if cfg.VersionTimeout > 0 {
		return cfg.VersionTimeout, nil
	}
	return agents.DefaultVersionTimeout, nil
}

// agentOverride is the configured binary of ag: --binary and the settings
// file name cursor's only; the others are named by their environment
// variable (Candidates reads it).
func (a *app) agentOverride(ag agents.Agent) (string, error) {
	if ag.Name != "cursor" {
		return "", nil
	}
	cfg, err := a.probeConfig()
	return cfg.Override, err
}

func (a *app) inspectAgent(ctx context.Context, ag agents.Agent, timeout time.Duration) agentReport {
	r := agentReport{Name: ag.Name, Provider: ag.Provider}
	override, err := a.agentOverride(ag)
	if err != nil {
		r.Error = &errorObject{Kind: failure.KindOf(err), Message: err.Error()}
		return r
	}
	res, err := ag.Find(ctx, override, a.getenv, discovery.EnvFromOS(), discovery.OSFS())
	if err != nil {
		if failure.KindOf(err) == failure.MissingCLI {
			r.Install = ag.InstallHint
			return r
		}
		r.Error = &errorObject{Kind: failure.KindOf(err), Message: err.Error()}
		return r
	}
	r.Found, r.Path, r.Kind, r.Source = true, res.Path, string(res.Kind), string(res.Source)
	if args, err := ag.Args(agents.Turn{Mode: turn.ModePlan}); err == nil {
		if plan, err := shim.Build(res, args, shim.OptionsFromOS()); err == nil {
			r.Launch = &launchReport{Program: plan.Program, Args: plan.Args, CommandLine: plan.CommandLine}
		} else {
			r.Error = &errorObject{Kind: failure.KindOf(err), Message: err.Error()}
			return r
		}
	}
	v, err := ag.Version(ctx, res, os.Environ(), timeout)
	if err != nil {
		r.Error = &errorObject{Kind: failure.KindOf(err), Message: strings.TrimSpace(err.Error())}
		return r
	}
	r.Version = v
	return r
}
