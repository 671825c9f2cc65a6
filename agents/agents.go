// Package agents is the one list of the agent CLIs cursorkit runs (cursor,
// claude, codex, gemini) and what every one of them shares above its own
// package: finding its binary through discovery, asking its --version,
// running one turn of it (Run), and a multi-turn Session that keeps its
// session id, its text-only history and stops whatever it runs on Close.
// The per-agent policy (argv, stream decoder, messages) is each agent's
// package; docs/contract.md, "Agents", states what each supports.
package agents

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// Turn is one prompt turn, whatever the agent. Its first six fields are
// turn.Request's and mean what they mean there, for the agent that runs
// the turn (each agent's Args says how it reads them); the rest are
// options only the Cursor CLI has, which another agent refuses (Option).
// It is cursor.Turn, whose fields say what each does for Cursor.
type Turn = cursor.Turn

// Option is something a caller may ask of an agent beyond the turn every
// agent runs, named as docs/contract.md, "Agents", names it. The Cursor
// CLI has all of them; the others none.
type Option string

// The options only the Cursor CLI has. OptionEffort is no field of Turn:
// a reasoning effort is resolved with the model through Cursor's catalog
// (package probe) into the model id the turn carries.
const (
	OptionMCPServer     Option = "--mcp-server"
	OptionPartialOutput Option = "--partial"
	OptionEffort        Option = "--effort"
	OptionTaskProfile   Option = "the task profile"
)

// UnsupportedError is the failure.Input error of an agent asked for an
// Option it does not have.
type UnsupportedError struct {
	Agent  string
	Option Option
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s is the Cursor CLI's only: %s has no such option (docs/contract.md, \"Agents\")", e.Option, e.Agent)
}

// Unwrap gives the error its failure kind.
func (e *UnsupportedError) Unwrap() error { return failure.New(failure.Input, "%s", e.Error()) }

// Offers returns nil when the agent has option o (the Cursor CLI has them
// all), else an *UnsupportedError naming both.
func (a Agent) Offers(o Option) error {
	if slices.Contains(a.offers, o) {
		return nil
	}
	return &UnsupportedError{Agent: a.Name, Option: o}
}

// options are the Options t asks for.
func options(t Turn) []Option {
	var asked []Option
	if len(t.MCPServers) > 0 {
		asked = append(asked, OptionMCPServer)
	}
	if t.PartialOutput {
		asked = append(asked, OptionPartialOutput)
	}
	if t.Sandboxed {
		asked = append(asked, OptionTaskProfile)
	}
	return asked
}

// check refuses a turn that asks the agent for an option it has not.
func (a Agent) check(t Turn) error {
	for _, o := range options(t) {
		if err := a.Offers(o); err != nil {
			return err
		}
	}
	return nil
}

// Agent is one agent CLI. Its zero value is not usable: take one from All
// or Lookup.
type Agent struct {
	// Name is cursorkit's name for it (run --agent NAME); Provider the id
	// of the models' provider; Command the bare name searched on PATH
	// (cursor also searches cursor-agent's alternatives: cursor.Candidates).
	Name, Provider, Command string
	// EnvBinary names the environment variable that names its binary.
	EnvBinary string
	// InstallHint says how to install it.
	InstallHint string

	candidates func(override string, getenv func(string) string) []discovery.Candidate
	// checkCandidates, when set, refuses candidates before any resolves.
	checkCandidates func(cands []discovery.Candidate, goos string) error
	// offers are the Options it has beyond the common Turn.
	offers   []Option
	args     func(Turn) ([]string, error)
	decoder  func(Turn) (turn.Decoder, error)
	version  func(output string) (string, error)
	classify func(text string) failure.Kind
	defaults func() turn.Options
	// run, when set, runs a turn instead of the generic plan-and-decode
	// (cursor's own Run, with its vanished-binary retry).
	run func(ctx context.Context, res discovery.Resolution, configured bool, t Turn, opts turn.Options) (turn.Outcome, error)
}

// Names returns the agents' names, in the order All lists them.
func Names() []string {
	all := All()
	names := make([]string, len(all))
	for i, a := range all {
		names[i] = a.Name
	}
	return names
}

// Lookup returns the agent named name, or a failure.Input error listing
// the names.
func Lookup(name string) (Agent, error) {
	for _, a := range All() {
		if a.Name == name {
			return a, nil
		}
	}
	return Agent{}, failure.New(failure.Input, "unknown agent %s (want %s)", turn.Quote(name, 40), strings.Join(Names(), ", "))
}

// Candidates returns the binaries to try, in order: override (a
// configured path), the agent's EnvBinary read through getenv, then its
// bare name on PATH.
func (a Agent) Candidates(override string, getenv func(string) string) []discovery.Candidate {
	return a.candidates(override, getenv)
}

// genericCandidates is Candidates of an agent found by one bare name.
func genericCandidates(envName, command string) func(string, func(string) string) []discovery.Candidate {
	return func(override string, getenv func(string) string) []discovery.Candidate {
		return discovery.Candidates(override, envName, getenv, command)
	}
}

// Find resolves the agent's binary: the first of Candidates that
// resolves. The error is failure.MissingCLI naming the agent, what was
// tried and how to install it (failure.Input when the configured override
// is refused).
func (a Agent) Find(ctx context.Context, override string, getenv func(string) string, env discovery.Env, fsys discovery.FS) (discovery.Resolution, error) {
	cands := a.Candidates(override, getenv)
	if a.checkCandidates != nil {
		if err := a.checkCandidates(cands, env.GOOS); err != nil {
			return discovery.Resolution{}, err
		}
	}
	res, err := discovery.ResolveFirst(ctx, cands, env, fsys)
	if err != nil {
		kind := failure.KindOf(err)
		if kind == failure.MissingCLI {
			return res, failure.Wrap(kind, err, "%s was not found (%s)", a.Name, a.InstallHint)
		}
		return res, failure.Wrap(kind, err, "%s could not be resolved", a.Name)
	}
	return res, nil
}

// Args returns the argv after the program that runs t. Its error is the
// one Run refuses t with before starting anything: an option the agent
// has not (*UnsupportedError), a bad mode, tool name, model or session id.
func (a Agent) Args(t Turn) ([]string, error) {
	if err := a.check(t); err != nil {
		return nil, err
	}
	return a.args(t)
}

// ParseVersion reads the agent's --version output.
func (a Agent) ParseVersion(output string) (string, error) { return a.version(output) }

// ClassifyMessage returns the failure kind a message of the agent's means.
func (a Agent) ClassifyMessage(text string) failure.Kind { return a.classify(text) }

// TurnDefaults returns the supervision defaults of the agent's turns.
func (a Agent) TurnDefaults() turn.Options { return a.defaults() }

// DefaultVersionTimeout bounds a --version run when the caller gives no
// bound: the Node.js CLIs take a second or two to start on a slow machine.
const DefaultVersionTimeout = 10 * time.Second
