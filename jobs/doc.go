// Package jobs keeps the jobs that package task runs, and carries a
// background job through its life (docs/contract.md, "Jobs").
//
// A job's Record is on disk from before its agent starts until after it
// ends, written atomically by one writer at a time (Store); a record in a
// final state stays final, so whoever ends a job first (its worker,
// Cancel, Judge) wins, and only the operator's acceptance of the job is
// written into it afterwards (Store.Accept). A background job is prepared
// by the caller (task.Prepare, state starting) and handed by Start to a
// detached worker, a program that outlives the caller and runs it with
// Worker.Work; Wait follows it to a final state, and OutcomeWithJob is its
// output's outcome line with the record. Every process is acted on through
// its recorded identity (PID and creation time), from any process, so a
// reused PID is never signalled.
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
