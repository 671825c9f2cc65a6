// Package task runs the Cursor CLI the way the companion contract asks
// (docs/contract.md, "Tasks and reviews"): sandboxed, with an explicit tool
// allowlist, in a private home that hides every other tool's configuration,
// and with a durable record of every run.
//
// A task is one foreground turn of package cursor's sandboxed profile
// (cursor.Turn.Sandboxed). Before it starts, Run checks the workspace and
// the credentials, and makes the private home; from the moment the agent may
// start until the tree is gone, the task's Record is on disk, written
// atomically: first in state running, then with the outcome. The records are
// what the background jobs list, wait for, cancel and resume: Find, List,
// History and ResumeFrom read them, Prune keeps a workspace's
// history bounded, CopyChat carries a session's chat into a resume's home
// (docs/contract.md, "Jobs").
//
// The layout under the data directory (DataDir):
//
//	<data>/runs/<id>/home                       the private home of a task
//	<data>/runs/<id>/events.ndjson              a background job's output
//	<data>/state/<workspace-key>/jobs/<id>.json its record
package task
