package stream

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
)

// Mode is how much the agent may do in a turn. It decides both the agent's
// flags (Args) and the tool allowlist cursorkit enforces (NewPolicy).
type Mode string

const (
	// ModeDefault is no mode asked for: read-only, run as `--mode plan`.
	ModeDefault Mode = ""
	// ModePlan is read-only planning: `--mode plan`.
	ModePlan Mode = "plan"
	// ModeAsk is read-only questions and answers: `--mode ask`.
	ModeAsk Mode = "ask"
	// ModeWrite is coding: `--force`, with the write tools allowed.
	ModeWrite Mode = "write"
)

// ParseMode returns the Mode named s: "" (default), "plan", "ask", or
// "write" (also spelled "coding"). Anything else is a failure.Input error.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "":
		return ModeDefault, nil
	case "plan":
		return ModePlan, nil
	case "ask":
		return ModeAsk, nil
	case "write", "coding":
		return ModeWrite, nil
	}
	return "", failure.New(failure.Input, "unknown mode %s (want plan, ask or write)", boundedQuote(s, 40))
}

// Valid reports whether m is one of the modes above.
func (m Mode) Valid() bool {
	switch m {
	case ModeDefault, ModePlan, ModeAsk, ModeWrite:
		return true
	}
	return false
}

// ReadOnly reports whether m lets the agent change nothing.
func (m Mode) ReadOnly() bool { return m != ModeWrite }

// String returns the mode's name; ModeDefault is "default".
func (m Mode) String() string {
	if m == ModeDefault {
		return "default"
	}
	return string(m)
}

// ReadOnlyTools returns the tools every mode allows: read, grep, glob, ls.
func ReadOnlyTools() []string { return []string{"read", "grep", "glob", "ls"} }

// WriteTools returns the tools ModeWrite adds to ReadOnlyTools.
func WriteTools() []string {
	return []string{"write", "edit", "delete", "shell", "updateTodos", "readTodos"}
}

// Policy is the set of tools a turn may use. The zero Policy allows none.
// MCP tools (mcp, getMcpTools, ...) and every other tool are outside every
// mode's list unless the caller adds them by name.
type Policy struct {
	mode  Mode
	tools []string // sorted, distinct
}

// NewPolicy returns the allowlist of mode plus the extra tool names (for
// example from `--allow-tools mcp,getMcpTools`). An invalid mode or tool name
// is a failure.Input error.
func NewPolicy(mode Mode, extra ...string) (Policy, error) {
	if !mode.Valid() {
		return Policy{}, failure.New(failure.Input, "unknown mode %s", boundedQuote(string(mode), 40))
	}
	tools := ReadOnlyTools()
	if mode == ModeWrite {
		tools = append(tools, WriteTools()...)
	}
	for _, name := range extra {
		if err := validToolName(name); err != nil {
			return Policy{}, err
		}
		tools = append(tools, name)
	}
	slices.Sort(tools)
	return Policy{mode: mode, tools: slices.Compact(tools)}, nil
}

// Mode returns the mode the policy was made for.
func (p Policy) Mode() Mode { return p.mode }

// Tools returns the allowed tool names, sorted.
func (p Policy) Tools() []string { return slices.Clone(p.tools) }

// Allows reports whether the tool named name may run. Names are compared
// exactly ("read", "updateTodos").
func (p Policy) Allows(name string) bool {
	_, found := slices.BinarySearch(p.tools, name)
	return found
}

// Check returns nil when the tool may run, else a failure.Policy error
// naming the tool and the mode. An empty name (a tool_call whose tool cannot
// be identified) is never allowed.
func (p Policy) Check(name string) error {
	if name != "" && p.Allows(name) {
		return nil
	}
	if name == "" {
		return failure.New(failure.Policy, "the agent called a tool that cannot be identified; the %s mode allows only: %s",
			p.mode, strings.Join(p.tools, ", "))
	}
	return failure.New(failure.Policy, "the agent called the tool %s, which the %s mode does not allow (allowed: %s)",
		boundedQuote(name, 64), p.mode, strings.Join(p.tools, ", "))
}

// ParseToolList splits a comma-separated list of tool names (the
// `--allow-tools` flag), trimming spaces around each. Empty entries and names
// that are not plain identifiers are a failure.Input error.
func ParseToolList(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var names []string
	for i, part := range strings.Split(s, ",") {
		name := strings.TrimSpace(part)
		if name == "" {
			return nil, failure.New(failure.Input, "tool list entry %d is empty", i+1)
		}
		if err := validToolName(name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// validToolName accepts what Cursor's tool keys are made of: ASCII letters,
// digits, '_' and '-', at most 64 of them.
func validToolName(name string) error {
	if name == "" || len(name) > 64 {
		return failure.New(failure.Input, "tool name %s must be 1 to 64 characters", boundedQuote(name, 64))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return failure.New(failure.Input, "tool name %s holds %s at byte %d; only letters, digits, '_' and '-' are allowed",
				boundedQuote(name, 64), quoteChar(c), i)
		}
	}
	return nil
}

// boundedQuote quotes s for a message, cut to at most max bytes of s.
func boundedQuote(s string, max int) string {
	if len(s) <= max {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:max]) + "…"
}
