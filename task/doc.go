// Package task runs the Cursor CLI the way the companion contract asks
// (docs/contract.md, "Tasks and reviews"): sandboxed, with an explicit tool
// allowlist, in a private home that hides every other tool's configuration,
// and with a durable record of every run.
//
// A task is one foreground turn of package cursor's sandboxed profile
// (cursor.Turn.Sandboxed), run as every agent's turn runs
// (agents.Agent.Run). Before it starts, Run checks the workspace and the
// credentials, and makes the private home; from the moment the agent may
// start until the tree is gone, the task's jobs.Record is on disk, written
// atomically: first in state running, then with the outcome. A background
// job is the same task split in two: Prepare saves it starting, and a
// detached worker (package jobs, Start and Worker) Executes it. CopyChat
// carries a session's chat into a resume's home (docs/contract.md, "Jobs").
//
// The records, their store and the background jobs' lifecycle are package
// jobs'; the private home of job id is jobs.Store.HomeDir(id).
package task
