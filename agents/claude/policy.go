package claude

import (
	"slices"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// allowlist is the set of tools a turn may use.
type allowlist struct {
	mode   turn.Mode
	tools  []string          // sorted, distinct
	bridge *mcpbridge.Server // the turn's MCP tool bridge, nil when none
}

// newAllowlist returns the tools of mode plus extra, or a failure.Input
// error for an unknown mode or a bad tool name.
func newAllowlist(mode turn.Mode, extra []string) (allowlist, error) {
	mode, err := mode.Resolve()
	if err != nil {
		return allowlist{}, err
	}
	tools := readOnlyTools()
	switch mode {
	case turn.ModePlan:
		tools = append(tools, planTools()...)
	case turn.ModeWrite:
		tools = append(tools, writeTools()...)
	}
	for _, name := range extra {
		if err := validToolName(name); err != nil {
			return allowlist{}, err
		}
		tools = append(tools, name)
	}
	slices.Sort(tools)
	return allowlist{mode: mode, tools: slices.Compact(tools)}, nil
}

// allows reports whether the tool name may run: a tool the turn's bridge
// publishes, a name of the list, or an MCP tool mcp__SERVER__TOOL whose
// server the list names as mcp__SERVER. A tool of the bridge's server is
// the bridge's alone: one it does not publish is refused whatever the
// list says.
func (a allowlist) allows(name string) bool {
	if name == "" {
		return false
	}
	if _, onServer, published := bridged(a.bridge, name); onServer {
		return published
	}
	if _, found := slices.BinarySearch(a.tools, name); found {
		return true
	}
	if !strings.HasPrefix(name, mcpPrefix) {
		return false
	}
	for _, t := range a.tools {
		if strings.HasPrefix(t, mcpPrefix) && !strings.Contains(t[len(mcpPrefix):], mcpSeparator) &&
			strings.HasPrefix(name, t+mcpSeparator) {
			return true
		}
	}
	return false
}

// check returns the failure.Policy error of a tool call the list does not
// allow, nil when it does.
func (a allowlist) check(name string) *failure.Error {
	if a.allows(name) {
		return nil
	}
	if name == "" {
		return failure.New(failure.Policy, "a tool call names no tool (%s mode allows %s)", a.mode, detail.Cut(strings.Join(a.tools, ", "), 300))
	}
	if _, onServer, _ := bridged(a.bridge, name); onServer {
		return failure.New(failure.Policy, "tool %s is not one the MCP bridge publishes (it publishes: %s)", turn.Quote(name, 64),
			detail.Cut(strings.Join(a.bridge.Tools, ", "), 300))
	}
	return failure.New(failure.Policy, "tool %s is not allowed in %s mode (allowed: %s)", turn.Quote(name, 64), a.mode, detail.Cut(strings.Join(a.tools, ", "), 300))
}
