// Package review is the agent-neutral part of a code review
// (docs/contract.md, "Review"): Collect gathers the change from git (the
// working tree, or the current branch against a base), NewPrompt puts it
// into the review prompt that ships inside the binary, cut to a bound with
// a stated marker, and ParseVerdict extracts and strictly validates the
// JSON verdict from the agent's result text (CheckVerdict, as a review
// task's check).
//
// git runs the way every child of cursorkit runs: resolved by discovery
// (the bare name git on PATH), planned by shim, supervised by supervise
// with a deadline, its tree killed at once on a stop, its output bounded,
// in an environment that never prompts, pages or runs an external diff.
// The package starts nothing else and knows no agent.
package review
