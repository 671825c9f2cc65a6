package jobs

import (
	"encoding/json/jsontext"
	"time"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
)

// Role is what a job is for: a task (consult or write) or a review.
type Role string

const (
	RoleTask   Role = "task"
	RoleReview Role = "review"
)

// Mode is what a task may do: consult reads (Cursor's ask mode), write
// also edits files and runs commands inside the workspace. A review is
// always consult.
type Mode string

const (
	ModeConsult Mode = "consult"
	ModeWrite   Mode = "write"
)

// State is where a job is (docs/contract.md, "Jobs"). A background job is
// starting until its worker records the agent's identity; died is what
// Judge concludes of a job whose process is gone.
type State string

const (
	StateStarting  State = "starting"
	StateRunning   State = "running"
	StateDone      State = "done"
	StateError     State = "error"
	StateCancelled State = "cancelled"
	StateDied      State = "died"
)

// Terminal reports whether s is a final state: done, error, cancelled or
// died. A record in a final state stays final: only its acceptance is
// ever written into it again (Store.Accept), which is what makes pruning
// safe.
func (s State) Terminal() bool {
	switch s {
	case StateDone, StateError, StateCancelled, StateDied:
		return true
	}
	return false
}

// known reports whether s is one of the states above; a record read back
// in any other is not one cursorkit wrote.
func (s State) known() bool {
	switch s {
	case StateStarting, StateRunning, StateDone, StateError, StateCancelled, StateDied:
		return true
	}
	return false
}

// AcceptanceState is the operator's verdict on a finished job's work
// (Store.Accept).
type AcceptanceState string

const (
	AcceptanceAccepted   AcceptanceState = "accepted"
	AcceptanceRejected   AcceptanceState = "rejected"
	AcceptanceUnverified AcceptanceState = "unverified"
)

func (a AcceptanceState) known() bool {
	switch a {
	case AcceptanceAccepted, AcceptanceRejected, AcceptanceUnverified:
		return true
	}
	return false
}

// Acceptance is what the operator recorded of a final job: the verdict, a
// one-line note ("" for none) and when.
type Acceptance struct {
	State AcceptanceState `json:"state"`
	Note  string          `json:"note"`
	At    time.Time       `json:"at"`
}

// Deliveries: a foreground task prints as it runs; a background job runs
// in a detached worker and keeps its output (Store.ReadOutput).
const (
	DeliveryForeground = "foreground"
	DeliveryBackground = "background"
)

// EnvSession is the launcher session an orchestrator tags its jobs with
// (Record.LauncherSession): Cleanup stops one session's jobs, and
// ResumeFrom resumes only its sessions.
const EnvSession = "CURSORKIT_SESSION"

// ProcessRef names one process for good, its PID and its creation time,
// so a reused PID is never taken for it (procid.Identity acts on it).
type ProcessRef struct {
	PID     int       `json:"pid"`
	Created time.Time `json:"created"`
}

// Failure is why a job did not end done. BillingPool is set for quota and
// rate_limited failures: the pool that failed, not the engine.
type Failure struct {
	Kind        failure.Kind `json:"kind"`
	Message     string       `json:"message"`
	BillingPool string       `json:"billingPool,omitempty"`
}

// Record is a job's durable record (docs/contract.md, "Tasks and reviews").
// Its JSON member names are the contract's; Usage is exactly as the agent
// reported it ({"reported":false} when it did not), never a cost.
type Record struct {
	Engine    string `json:"engine"` // always "cursor"
	ID        string `json:"id"`
	Role      Role   `json:"role"`
	Mode      Mode   `json:"mode"`
	Workspace string `json:"workspace"`

	CursorVersion   string `json:"cursorVersion"`
	CursorBuildPath string `json:"cursorBuildPath"`

	// SessionID resumes the session; RequestID is the result's.
	SessionID string `json:"sessionId"`
	RequestID string `json:"requestId"`

	// RequestedModel and RequestedEffort are the flags; ResolvedModel the
	// catalog id they resolved to ("" when none was asked: Cursor's
	// default, as the private home hides the user's configuration);
	// EffortApplied whether the effort is part of it; ObservedModel the
	// display name the init event reported (it may differ from the
	// catalog's for the same model: no drift).
	RequestedModel  string `json:"requestedModel"`
	ResolvedModel   string `json:"resolvedModel"`
	ObservedModel   string `json:"observedModel"`
	RequestedEffort string `json:"requestedEffort"`
	EffortApplied   bool   `json:"effortApplied"`
	BillingPool     string `json:"billingPool"`

	Usage event.Usage `json:"usage"`

	// Sandbox is the policy the task ran under; AllowedTools the allowlist
	// sent to the agent and enforced locally.
	Sandbox      string   `json:"sandbox"`
	Delivery     string   `json:"delivery"`
	AllowedTools []string `json:"allowedTools"`
	HomeDir      string   `json:"homeDir"`

	Warnings []event.Warning `json:"warnings"`
	State    State           `json:"state"`
	Failure  *Failure        `json:"failure"`

	// The members below are optional, so a record written before them
	// reads as it was.
	//
	// Worker is the cursorkit process running the job: a background job's
	// worker, or a foreground job's own command (task.Options.Owner); nil
	// until known, and for a foreground job without an owner. Agent is
	// the agent's direct process (a shim's interpreter on Windows).
	Worker *ProcessRef `json:"worker,omitempty"`
	Agent  *ProcessRef `json:"agent,omitempty"`
	// LauncherSession is CURSORKIT_SESSION as the launching command saw
	// it: an orchestrator's tag for its jobs ("" when unset).
	LauncherSession string `json:"launcherSession,omitempty"`
	// ParentJob is the job whose session this one resumes, ResumedSession
	// that session id; both "" for a fresh session.
	ParentJob      string `json:"parentJob,omitempty"`
	ResumedSession string `json:"resumedSession,omitempty"`
	// Output is the file keeping the run's events, "" when none was kept.
	Output string `json:"output,omitempty"`

	// Review is a review's validated verdict, absent for a task and for a
	// review that failed.
	Review jsontext.Value `json:"review,omitempty"`
	// Acceptance is the operator's verdict on the job once final, nil
	// until one is given (Store.Accept).
	Acceptance *Acceptance `json:"acceptance,omitempty"`

	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	EndedAt   *time.Time `json:"endedAt"`
}

// end makes r final in state, with a failure of kind saying message.
func (r *Record) end(state State, kind failure.Kind, message string) {
	now := time.Now()
	r.State, r.UpdatedAt, r.EndedAt = state, now, &now
	r.Failure = &Failure{Kind: kind, Message: message}
}

// fail makes r end with err: cancelled when err is a cancel (a stop that
// came before the turn could record its own end), else in error.
func (r *Record) fail(err error) {
	state := StateError
	if failure.KindOf(err) == failure.Cancelled {
		state = StateCancelled
	}
	r.end(state, failure.KindOf(err), err.Error())
}
