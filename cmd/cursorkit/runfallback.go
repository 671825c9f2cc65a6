package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/internal/safefile"
	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/turn"
)

// maxTranscriptFile bounds a --transcript file.
const maxTranscriptFile = 32 << 20

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

// planFallback probes Cursor and resolves the fallback's model, before
// the primary starts: the fallback's binary and model, or why Cursor
// cannot be the fallback.
func (a *app) planFallback(ctx context.Context, model string) agents.Fallback {
	cfg, report, err := a.probeCursor(ctx)
	if err != nil {
		return agents.Fallback{Unusable: err}
	}
	fb := agents.Fallback{Resolution: report.Binary.Resolution, Configured: report.Binary.Configured}
	if model != "" {
		fb.Model, _, fb.Unusable = probe.ResolveTurnModel(ctx, cfg, report, model, "")
	}
	return fb
}

// readTranscript reads --transcript FILE (bounded, a regular file), and
// parses it; errors name the file and where it is wrong, never its text.
func readTranscript(path string) ([]fallback.Message, error) {
	data, err := safefile.Read(path, maxTranscriptFile)
	if problem := safefile.Problem(err); problem != "" {
		return nil, failure.New(failure.Input, "--transcript file %s %s", strconv.Quote(path), problem)
	} else if err != nil {
		return nil, failure.Wrap(failure.Input, err, "reading the --transcript file %s", strconv.Quote(path))
	}
	msgs, err := fallback.ParseTranscript(data)
	if err != nil {
		return nil, failure.Wrap(failure.Input, err, "--transcript file %s", strconv.Quote(path))
	}
	return msgs, nil
}
