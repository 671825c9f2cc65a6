// Package mcpstage stages MCP server entries into a worktree's
// .cursor/mcp.json crash-safely (docs/contract.md, "MCP staging").
//
// Run is the one call for a turn: it stages an entry, runs the caller's
// function while the lease is renewed, and releases it after, whatever
// ended the function; what went wrong around it comes back as Warnings.
// ReadEntryFile reads such an entry from a {command, args, env} file. A
// Stager gives the steps one by one (Stage, Heartbeat, Release, Reconcile,
// Status), for a lease that outlives one call or one process: the command
// line's follows the caller's job (CallerOwner) unless told otherwise.
package mcpstage
