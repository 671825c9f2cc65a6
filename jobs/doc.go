// Package jobs keeps the jobs that package task runs, and carries a
// background job through its life (docs/contract.md, "Jobs").
//
// The records: a job's Record is on disk from before its agent starts
// until after it ends, written atomically by one writer at a time (Store:
// Save, Update); a record in a final state is never written again, so
// whoever ends a job first (its worker, Cancel, Judge) wins. Find, List,
// History and ResumeFrom read them, Prune keeps a workspace's history
// bounded, Sweep removes what killed writers left; a background job's
// events go to its output file (CreateOutput, ReadOutput).
//
// The lifecycle of a background job: the caller prepares it (task.Prepare,
// state starting) and Start hands it to a detached worker, a program that
// outlives the caller; in that program Worker.Work records the worker's
// identity and runs the job. Judge says whether an unfinished job's
// process is still there (else the job died), Cancel stops a job and waits
// until its worker and its agent are gone, and Cleanup cancels every job
// of one launcher session. Every process is acted on through its recorded
// identity (PID and creation time), from any process, so a reused PID is
// never signalled.
//
// The layout under the data directory (DataDir):
//
//	<data>/runs/<id>/home                       the private home of a task
//	<data>/runs/<id>/events.ndjson              a background job's output
//	<data>/runs/<id>/prompt                     its prompt, until its worker reads it
//	<data>/runs/<id>/worker.log                 its worker's stdout and stderr
//	<data>/runs/<id>/record.lock                the record writers' lock
//	<data>/state/<workspace-key>/jobs/<id>.json its record
package jobs
