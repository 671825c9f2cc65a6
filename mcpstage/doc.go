// Package mcpstage stages MCP server entries into a worktree's
// .cursor/mcp.json crash-safely (docs/contract.md, "MCP staging").
//
// Run is the one call for a turn: it stages the turn's entries, each under
// a lease of its own, runs the caller's function while the leases are
// renewed, and releases them after (last staged first), whatever ended the
// function; what went wrong around it comes back as Warnings.
// ReadEntryFile reads such an entry from a {command, args, env} file. A
// Stager gives the steps one by one (Stage, Heartbeat, Release, Reconcile,
// Status), for a lease that outlives one call or one process: the command
// line's follows the caller's job (CallerOwner) unless told otherwise.
package mcpstage
