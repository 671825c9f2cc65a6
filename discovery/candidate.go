package discovery

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
