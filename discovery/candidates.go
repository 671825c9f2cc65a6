package discovery

import "strings"

// The PATH candidates, in SPEC order. The bare name "agent" is deliberately
// absent: other CLIs install an `agent` earlier on PATH.
const (
	NameCursorAgent = "cursor-agent"
	NameCursor      = "cursor"
)

// EnvBinary is the environment variable naming the agent binary.
const EnvBinary = "CURSOR_AGENT_BIN"

// Candidate is one value to resolve and where it came from.
type Candidate struct {
	Value  string `json:"value"`
	Source Source `json:"source"`
}

// Candidates returns the candidates to try, in SPEC order: the configured
// override (settings cursorCliBinaryPath or --binary), CURSOR_AGENT_BIN read
// through getenv, then `cursor-agent` and `cursor` on PATH.
//
// Configured values are trimmed of surrounding white space and otherwise
// kept verbatim: never split, unquoted or expanded, so a Windows path with
// spaces is one candidate. Empty values are dropped. The list holds no
// duplicates: a value already listed is not repeated, so a configured value
// of exactly `cursor-agent` or `cursor` is that PATH candidate, tried once,
// at the configured position and with the configured source. getenv may be
// nil, which means no environment.
func Candidates(override string, getenv func(string) string) []Candidate {
	cands := make([]Candidate, 0, 4)
	add := func(value string, src Source) {
		value = strings.TrimSpace(value)
		if value == "" {
			return
		}
		for _, c := range cands {
			if c.Value == value {
				return
			}
		}
		cands = append(cands, Candidate{Value: value, Source: src})
	}
	add(override, SourceOverride)
	if getenv != nil {
		add(getenv(EnvBinary), SourceEnv)
	}
	add(NameCursorAgent, SourcePath)
	add(NameCursor, SourcePath)
	return cands
}

// Configured reports whether the candidate came from configuration (the
// override or CURSOR_AGENT_BIN) rather than the built-in PATH names.
func (c Candidate) Configured() bool { return c.Source == SourceOverride || c.Source == SourceEnv }

// label names the candidate in messages: its source and value, bounded.
func (c Candidate) label() string {
	switch c.Source {
	case SourceOverride:
		return "configured binary " + quoteBounded(c.Value, 120)
	case SourceEnv:
		return EnvBinary + "=" + quoteBounded(c.Value, 120)
	}
	return quoteBounded(c.Value, 120) + " on PATH"
}
