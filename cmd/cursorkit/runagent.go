package main

import (
	"context"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/turn"
)

// cursorOnlyFlags are the run flags only the Cursor CLI has a meaning for.
func cursorOnlyFlags() []string { return []string{"mcp-server", "partial", "effort"} }

// maxTranscriptFile bounds a --transcript file.
const maxTranscriptFile = 32 << 20

// runAgentTurn is `run` with --agent other than cursor, or with
// --fallback: one prompt through an agents.Session, wrapped in a
// fallback.Session when a fallback is asked for (docs/contract.md,
// "Agents" and "Cross-runtime fallback").
func (a *app) runAgentTurn(ctx context.Context, fs *pflag.FlagSet, f runFlags, prompt string) int {
	fail := func(err error) int { return a.fail(f.asJSON, err) }
	ag, err := agents.Lookup(f.agentName)
	if err != nil {
		return fail(err)
	}
	if ag.Name != cursor.Name {
		for _, name := range cursorOnlyFlags() {
			if fs.Changed(name) {
				return fail(failure.New(failure.Input, "--%s is the Cursor CLI's only: %s has no such option (docs/contract.md, \"Agents\")", name, ag.Name))
			}
		}
	}
	if fs.Changed("mcp-server") {
		return fail(failure.New(failure.Input, "--mcp-server cannot be combined with --agent or --fallback"))
	}
	if f.transcript != "" && f.fallback == "" {
		return fail(failure.New(failure.Input, "--transcript needs --fallback: it is what the fallback is told of the conversation"))
	}
	if fs.Changed("fallback-after-retries") && f.fallback == "" {
		return fail(failure.New(failure.Input, "--fallback-after-retries needs --fallback: it says when to hand off"))
	}
	fbModel, err := parseFallback(f.fallback)
	if err != nil {
		return fail(err)
	}
	var history []fallback.Message
	if f.transcript != "" {
		if history, err = readTranscript(f.transcript); err != nil {
			return fail(err)
		}
	}
	mode, err := cursor.ParseMode(f.mode)
	if err != nil {
		return fail(err)
	}
	if f.write {
		if f.mode != "" {
			return fail(failure.New(failure.Input, "--write and --mode %s exclude each other", f.mode))
		}
		mode = turn.ModeWrite
	}
	req := agents.Turn{Prompt: prompt, Mode: mode, Resume: f.resume, Tools: splitTools(f.allowTools)}

	// The primary: cursor through its probe (as `run` does), the others
	// found by discovery; their --version is `cursorkit agents`' (a turn
	// reports a broken binary itself).
	var res discovery.Resolution
	configured := false
	if ag.Name == cursor.Name {
		report, ct, err := a.planTurn(ctx, f, prompt)
		if err != nil {
			return fail(err)
		}
		res, configured, req.Model = report.Binary.Resolution, report.Binary.Configured, ct.Model
	} else {
		req.Model = f.model
		if _, err := ag.Args(req); err != nil {
			return fail(err)
		}
		if res, err = ag.Find(ctx, "", a.getenv, discovery.EnvFromOS(), discovery.OSFS()); err != nil {
			return fail(err)
		}
		configured = res.Source != discovery.SourcePath
	}

	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	w := newTurnWriter(f.asJSON, a.stdout, a.stderr, stop)
	supervision := func(defaults turn.Options) turn.Options {
		opts := defaults
		if fs.Changed("first-line-timeout") {
			opts.FirstLineTimeout = f.firstLine
		}
		if fs.Changed("idle-timeout") {
			opts.IdleTimeout = f.idle
		}
		if fs.Changed("exit-grace") {
			opts.ExitGrace = f.exitGrace
		}
		opts.TotalTimeout = f.total
		opts.Dir = f.cwd
		opts.Env = os.Environ()
		opts.OnEvent, opts.OnDrained = w.event, w.drained
		return opts
	}
	primary := agents.NewSession(ag, res, configured, req, supervision(ag.TurnDefaults()))
	var conv fallback.Conversation = primary
	if f.fallback != "" {
		cfg := fallback.Config{
			Purpose:      "run",
			Primary:      primary,
			PrimaryID:    fallback.Identity{Agent: ag.Name, Provider: ag.Provider, Model: req.Model},
			FallbackID:   fallback.Identity{Agent: cursor.Name, Provider: cursor.Provider},
			Transcript:   history,
			OnEvent:      w.event,
			AfterRetries: f.fallbackAfterRetries,
		}
		// The fallback is armed only when Cursor probes usable, before
		// the primary starts: the probe (its --version cached by file)
		// and the model's resolution are paid once, here, so the handoff
		// itself starts Cursor at once.
		fbTurn, fbRes, fbConfigured, perr := a.planFallback(ctx, mode, fbModel)
		cfg.FallbackID.Model = fbTurn.Model
		cfg.Probe = func(context.Context) error { return perr }
		cfg.Start = func(context.Context) (fallback.Conversation, error) {
			cursorAgent, err := agents.Lookup(cursor.Name)
			if err != nil {
				return nil, err
			}
			return agents.NewSession(cursorAgent, fbRes, fbConfigured, fbTurn, supervision(cursor.TurnDefaults())), nil
		}
		s, _, err := fallback.New(ctx, cfg)
		if err != nil {
			w.close()
			return fail(err)
		}
		conv = s
	}
	started := time.Now()
	o, err := conv.Prompt(ctx, prompt)
	_ = conv.Close()
	w.close()
	if f.asJSON {
		a.writeOutcome(w, o)
	} else if !w.textEnded && w.text > 0 {
		_ = w.out.WriteByte('\n')
	}
	_ = w.out.Flush()
	if !f.asJSON {
		printFooter(a.stderr, o, time.Since(started), err)
	}
	return failure.ExitCodeOf(err)
}

// parseFallback reads --fallback: "" (none), "cursor" or "cursor:MODEL".
// Cursor is the one fallback there is.
func parseFallback(v string) (model string, err error) {
	if v == "" {
		return "", nil
	}
	name, model, hasModel := strings.Cut(v, ":")
	if name != cursor.Name {
		return "", failure.New(failure.Input, "--fallback %s: the fallback is cursor or cursor:MODEL", turn.Quote(v, 64))
	}
	if hasModel {
		if err := turn.CheckValue("--fallback model", model); err != nil {
			return "", err
		}
	}
	return model, nil
}

// planFallback probes Cursor and resolves the fallback's model: the
// fallback turn (mode kept, no tools: tool names are each agent's own)
// and the binary, or why Cursor cannot be the fallback.
func (a *app) planFallback(ctx context.Context, mode turn.Mode, model string) (agents.Turn, discovery.Resolution, bool, error) {
	t := agents.Turn{Mode: mode}
	cfg, err := a.probeConfig()
	if err != nil {
		return t, discovery.Resolution{}, false, err
	}
	cfg.ReuseVersion = true
	report, err := probe.Probe(ctx, cfg)
	if err != nil {
		return t, discovery.Resolution{}, false, err
	}
	if model != "" {
		if t.Model, err = a.resolveModel(ctx, cfg, report, model, ""); err != nil {
			return t, discovery.Resolution{}, false, err
		}
	}
	if _, err := cursor.Args(cursor.Turn{Mode: t.Mode, Model: t.Model}); err != nil {
		return t, discovery.Resolution{}, false, err
	}
	return t, report.Binary.Resolution, report.Binary.Configured, nil
}

// readTranscript reads --transcript FILE (bounded, a regular file), and
// parses it; errors name the file and where it is wrong, never its text.
func readTranscript(path string) ([]fallback.Message, error) {
	data, err := safefile.Read(path, maxTranscriptFile)
	if err != nil {
		var tooLarge *safefile.TooLargeError
		var notRegular *safefile.NotRegularError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, failure.New(failure.Input, "--transcript file %s does not exist", strconv.Quote(path))
		case errors.As(err, &tooLarge):
			return nil, failure.New(failure.Input, "--transcript file %s is larger than %d bytes", strconv.Quote(path), maxTranscriptFile)
		case errors.As(err, &notRegular):
			return nil, failure.New(failure.Input, "--transcript file %s is not a regular file", strconv.Quote(path))
		}
		return nil, failure.Wrap(failure.Input, err, "reading the --transcript file %s", strconv.Quote(path))
	}
	msgs, err := fallback.ParseTranscript(data)
	if err != nil {
		return nil, failure.Wrap(failure.Input, err, "--transcript file %s", strconv.Quote(path))
	}
	return msgs, nil
}

// writeOutcome writes the outcome line of `run --json`.
func (a *app) writeOutcome(w *turnWriter, o turn.Outcome) {
	if err := json.MarshalEncode(w.events.Encoder(), o); err != nil {
		fmt.Fprintf(a.stderr, "cursorkit: writing the outcome: %v\n", err)
	}
}
