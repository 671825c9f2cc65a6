package agents

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/turn"
)

// Report is what Inspect learned of one agent CLI on this machine
// (`cursorkit agents --json`, docs/contract.md, "Agents").
type Report struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
	Found    bool   `json:"found"`
	Path     string `json:"path,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Source   string `json:"source,omitempty"`
	Version  string `json:"version,omitempty"`
	// Launch is how a plan-mode turn would be started.
	Launch *Launch `json:"launch,omitempty"`
	// Error is why an agent that was found (or whose configured binary
	// was refused) is unusable.
	Error *Problem `json:"error,omitempty"`
	// Install says how to install a missing agent.
	Install string `json:"install,omitempty"`
}

// Launch is the exact start of a turn: program, argv and, on Windows, the
// verbatim command line (shim.Command).
type Launch struct {
	Program     string   `json:"program"`
	Args        []string `json:"args"`
	CommandLine string   `json:"commandLine"`
}

// Problem is a failure as a Report shows it.
type Problem struct {
	Kind    failure.Kind `json:"kind"`
	Message string       `json:"message"`
}

func problemOf(err error) *Problem {
	return &Problem{Kind: failure.KindOf(err), Message: strings.TrimSpace(err.Error())}
}

// inspect finds the agent as a turn would (override is the configured
// binary, Cursor's only), plans the launch of a plan-mode turn and asks its
// --version under timeout (Version). A missing agent is a Report without
// Found, saying how to install it; nothing here is a failure of the call.
func (a Agent) inspect(ctx context.Context, override string, getenv func(string) string, environ []string, timeout time.Duration) Report {
	r := Report{Name: a.Name, Provider: a.Provider}
	res, err := a.Find(ctx, override, getenv, discovery.EnvFromOS(), discovery.OSFS())
	if failure.Is(err, failure.MissingCLI) {
		r.Install = a.InstallHint
		return r
	}
	if err != nil {
		r.Error = problemOf(err)
		return r
	}
	r.Found, r.Path, r.Kind, r.Source = true, res.Path, string(res.Kind), string(res.Source)
	if args, err := a.Args(Turn{Mode: turn.ModePlan}); err == nil {
		plan, err := shim.Build(res, args, shim.OptionsFromOS())
		if err != nil {
			r.Error = problemOf(err)
			return r
		}
		r.Launch = &Launch{Program: plan.Program, Args: plan.Args, CommandLine: plan.CommandLine}
	}
	if r.Version, err = a.Version(ctx, res, environ, timeout); err != nil {
		r.Error = problemOf(err)
	}
	return r
}

// InspectAll inspects every agent of All at once, cursorOverride being
// Cursor's configured binary, and returns their reports in All's order.
func InspectAll(ctx context.Context, cursorOverride string, getenv func(string) string, environ []string, timeout time.Duration) []Report {
	all := All()
	reports := make([]Report, len(all))
	var wg sync.WaitGroup
	for i, a := range all {
		override := ""
		if a.Name == cursor.Name {
			override = cursorOverride
		}
		wg.Go(func() { reports[i] = a.inspect(ctx, override, getenv, environ, timeout) })
	}
	wg.Wait()
	return reports
}
