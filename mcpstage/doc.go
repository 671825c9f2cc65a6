// Package mcpstage stages MCP server entries into a worktree's
// .cursor/mcp.json crash-safely (docs/contract.md, "MCP staging").
package mcpstage
