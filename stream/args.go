package stream

import (
	"strings"

	"github.com/cursorkit/cursorkit/failure"
)

// ArgsOptions are the choices that shape a prompt turn's argv. The prompt is
// not among them: it travels on stdin only.
type ArgsOptions struct {
	Mode  Mode
	Model string // a resolved catalog id; "" keeps the agent's configured model
	// Resume is the session id of an earlier turn to continue ("" for a new session).
	Resume string
	// PartialOutput adds --stream-partial-output (text as deltas; Turn
	// deduplicates the recaps that come with them).
	PartialOutput bool
}

// Args returns the arguments, after the program, for one prompt turn:
//
//	--print --output-format stream-json [--stream-partial-output]
//	  --force --trust               (ModeWrite)
//	  --mode plan --trust           (ModeDefault, ModePlan; never --force)
//	  --mode ask --trust            (ModeAsk)
//	  [--model ID] [--resume SESSION]
//
// A model or session that is empty-looking, starts with '-', holds
// whitespace or control characters, or a model of "auto" or "default"
// (which route to a model no event reports), is a failure.Input error.
func Args(opts ArgsOptions) ([]string, error) {
	if !opts.Mode.Valid() {
		return nil, failure.New(failure.Input, "unknown mode %s", boundedQuote(string(opts.Mode), 40))
	}
	args := []string{"--print", "--output-format", "stream-json"}
	if opts.PartialOutput {
		args = append(args, "--stream-partial-output")
	}
	switch opts.Mode {
	case ModeWrite:
		args = append(args, "--force", "--trust")
	case ModeAsk:
		args = append(args, "--mode", "ask", "--trust")
	default:
		args = append(args, "--mode", "plan", "--trust")
	}
	if opts.Model != "" {
		if err := checkValue("model", opts.Model); err != nil {
			return nil, err
		}
		if m := strings.ToLower(opts.Model); m == "auto" || m == "default" {
			return nil, failure.New(failure.Input, "model %q is refused: it routes to a model no event reports; name a catalog model", opts.Model)
		}
		args = append(args, "--model", opts.Model)
	}
	if opts.Resume != "" {
		if err := checkValue("resume session id", opts.Resume); err != nil {
			return nil, err
		}
		args = append(args, "--resume", opts.Resume)
	}
	return args, nil
}

// checkValue refuses values the agent's option parser could take for an
// option, or that no model id or session id holds.
func checkValue(what, v string) error {
	if len(v) > 256 {
		return failure.New(failure.Input, "%s is longer than 256 bytes", what)
	}
	if v[0] == '-' {
		return failure.New(failure.Input, "%s %s starts with '-'", what, boundedQuote(v, 64))
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c == 0x7f {
			return failure.New(failure.Input, "%s %s holds %s at byte %d", what, boundedQuote(v, 64), quoteChar(c), i)
		}
	}
	return nil
}
