package agents

import (
	"context"

	"github.com/cursorkit/cursorkit/agents/claude"
	"github.com/cursorkit/cursorkit/agents/codex"
	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// All returns every agent cursorkit runs, cursor first: a new slice on
// each call.
func All() []Agent {
	return []Agent{cursorAgent(), claudeAgent(), codexAgent(), geminiAgent()}
}

// Cursor returns the Cursor CLI's agent: Lookup(cursor.Name), which
// cannot fail.
func Cursor() Agent { return cursorAgent() }

func claudeAgent() Agent {
	return Agent{
		Name: claude.Name, Provider: claude.Provider, Command: claude.Command,
		EnvBinary: claude.EnvBinary, InstallHint: claude.InstallHint,
		candidates: genericCandidates(claude.EnvBinary, claude.Command),
		args:       func(t Turn) ([]string, error) { return claude.Args(request(t)) },
		decoder:    func(t Turn) (turn.Decoder, error) { return claude.NewDecoder(request(t)) },
		version:    claude.ParseVersion,
		classify:   claude.ClassifyMessage,
		defaults:   claude.TurnDefaults,
	}
}

func geminiAgent() Agent {
	return Agent{
		Name: gemini.Name, Provider: gemini.Provider, Command: gemini.Command,
		EnvBinary: gemini.EnvBinary, InstallHint: gemini.InstallHint,
		candidates: genericCandidates(gemini.EnvBinary, gemini.Command),
		args:       func(t Turn) ([]string, error) { return gemini.Args(request(t)) },
		decoder:    func(t Turn) (turn.Decoder, error) { return gemini.NewDecoder(request(t)) },
		version:    gemini.ParseVersion,
		classify:   gemini.ClassifyMessage,
		defaults:   gemini.TurnDefaults,
	}
}

func codexAgent() Agent {
	return Agent{
		Name: codex.Name, Provider: codex.Provider, Command: codex.Command,
		EnvBinary: codex.EnvBinary, InstallHint: codex.InstallHint,
		candidates: genericCandidates(codex.EnvBinary, codex.Command),
		args:       func(t Turn) ([]string, error) { return codex.Args(request(t)) },
		decoder:    func(t Turn) (turn.Decoder, error) { return codex.NewDecoder(request(t)) },
		version:    codex.ParseVersion,
		classify:   codex.ClassifyMessage,
		defaults:   codex.TurnDefaults,
	}
}

func cursorAgent() Agent {
	return Agent{
		Name: cursor.Name, Provider: cursor.Provider, Command: cursor.Command,
		EnvBinary: cursor.EnvBinary, InstallHint: cursor.InstallHint,
		candidates:      cursor.Candidates,
		checkCandidates: cursor.CheckCandidates,
		offers:          []Option{OptionMCPServer, OptionPartialOutput, OptionEffort, OptionTaskProfile},
		args:            func(t Turn) ([]string, error) { return cursor.Args(t) },
		decoder:         cursor.NewDecoder,
		version: func(output string) (string, error) {
			v := cursor.ParseVersion(output)
			if v.Raw == "" {
				return "", failure.New(failure.Protocol, "cursor-agent --version printed nothing")
			}
			return v.Raw, nil
		},
		classify: cursor.ClassifyMessage,
		defaults: cursor.TurnDefaults,
		run: func(ctx context.Context, res discovery.Resolution, configured bool, t Turn, opts turn.Options) (turn.Outcome, error) {
			return cursor.Run(ctx, cursor.Binary{Resolution: res, Configured: configured}, t, opts)
		},
	}
}

// request is the part of t every agent reads.
func request(t Turn) turn.Request {
	return turn.Request{Prompt: t.Prompt, Mode: t.Mode, Model: t.Model, Resume: t.Resume, Tools: t.Tools, Bridge: t.Bridge}
}
