package claude

import (
	"encoding/json/jsontext"
	"path/filepath"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpbridge"
)

// bridgeArgs returns the flags that publish the bridge b to a turn, and
// the names of its tools as Claude Code calls them (mcp__SERVER__TOOL),
// which Args approves:
//
//	--mcp-config FILE --strict-mcp-config
//
// The config is b's file, never inline JSON: argv is readable by every
// local user. --strict-mcp-config keeps every other MCP server (the
// user's, a workspace .mcp.json) out of the turn, so the turn's MCP tools
// are exactly the bridge's. A bridge without a config file, one whose
// path is not absolute or holds control characters, or a tool name Claude
// Code cannot approve is a failure.Input error.
func bridgeArgs(b *mcpbridge.Server) (args, tools []string, err error) {
	if b.Name == "" || b.ConfigFile == "" || !filepath.IsAbs(b.ConfigFile) {
		return nil, nil, failure.New(failure.Input, "the MCP bridge has no server name or no absolute config file")
	}
	if strings.ContainsFunc(b.ConfigFile, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, nil, failure.New(failure.Input, "the MCP bridge's config file path holds a control character")
	}
	for _, name := range b.Tools {
		full := bridgeToolName(b, name)
		if err := validToolName(full); err != nil {
			return nil, nil, err
		}
		tools = append(tools, full)
	}
	return []string{"--mcp-config", b.ConfigFile, "--strict-mcp-config"}, tools, nil
}

// bridgeToolName is the name Claude Code gives the tool name of the
// bridge's server: mcp__SERVER__TOOL.
func bridgeToolName(b *mcpbridge.Server, name string) string {
	return mcpPrefix + b.Name + mcpSeparator + name
}

// bridged is mcpbridge.Server.Called for the names Claude Code gives
// the bridge's tools.
func bridged(b *mcpbridge.Server, name string) (own string, onServer, published bool) {
	return b.Called(name, mcpPrefix, mcpSeparator)
}

// bridgedResult is a bridged call's result as its events report it: the
// tool's text, a JSON string, when Claude Code's content holds one.
func bridgedResult(content jsontext.Value) jsontext.Value {
	if q, ok := mcpbridge.ResultString(content); ok {
		return q
	}
	return present(content)
}
