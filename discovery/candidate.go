package discovery

import (
	"slices"
	"strings"
)

// Candidate is one value to resolve and where it came from.
type Candidate struct {
	// Value is a path (absolute or relative) or a bare name to search on
	// PATH. It is one string, never split or unquoted.
	Value  string `json:"value"`
	Source Source `json:"source"`
	// Origin names where a configured value was read, for messages: an
	// environment variable's name for SourceEnv, a setting or flag for
	// SourceOverride. Empty is fine.
	Origin string `json:"origin,omitempty"`
}

// configured reports whether the candidate came from configuration (an
// override or an environment variable) rather than a built-in bare name.
func (c Candidate) configured() bool { return c.Source == SourceOverride || c.Source == SourceEnv }

// label names the candidate in messages: its origin and value, bounded.
func (c Candidate) label() string {
	v := quoteBounded(c.Value, 120)
	switch c.Source {
	case SourceOverride:
		if c.Origin != "" {
			return c.Origin + " " + v
		}
		return "configured " + v
	case SourceEnv:
		if c.Origin != "" {
			return c.Origin + "=" + v
		}
		return "environment value " + v
	}
	return v + " on PATH"
}

// Candidates returns a program's candidates in the order they are tried
// (docs/contract.md, "Resolution"): the configured override (Origin
// "configured binary"), then the variable envName read through getenv (nil:
// no environment), then each bare name on PATH. Values are trimmed of
// surrounding white space and otherwise kept verbatim: never split, unquoted
// or expanded, so a Windows path with spaces is one candidate. Empty values
// are dropped, and a value already listed is not repeated, so a configured
// value equal to a bare name is that candidate, tried once, at the configured
// position and with the configured source.
func Candidates(override, envName string, getenv func(string) string, names ...string) []Candidate {
	cands := make([]Candidate, 0, 2+len(names))
	add := func(c Candidate) {
		c.Value = strings.TrimSpace(c.Value)
		if c.Value == "" || slices.ContainsFunc(cands, func(have Candidate) bool { return have.Value == c.Value }) {
			return
		}
		cands = append(cands, c)
	}
	add(Candidate{Value: override, Source: SourceOverride, Origin: "configured binary"})
	if getenv != nil {
		add(Candidate{Value: getenv(envName), Source: SourceEnv, Origin: envName})
	}
	for _, name := range names {
		add(Candidate{Value: name, Source: SourcePath})
	}
	return cands
}
