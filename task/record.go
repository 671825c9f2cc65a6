package task

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

// State is where a job is. A foreground task is running from its first
// save until it ends done, error or cancelled.
type State string

const (
	StateRunning   State = "running"
	StateDone      State = "done"
	StateError     State = "error"
	StateCancelled State = "cancelled"
)

// Failure is why a job did not end done. BillingPool is set for quota and
// rate_limited failures: the pool that failed, not the engine.
type Failure struct {
	Kind        failure.Kind `json:"kind"`
	Message     string       `json:"message"`
	BillingPool string       `json:"billingPool,omitempty"`
}

// Record is a job's durable record (docs/contract.md, "Tasks and reviews"),
// written when the task starts and again when it ends. Its JSON member
// names are the contract's; Usage is exactly as the agent reported it
// ({"reported":false} when it did not), never a cost.
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
	// default model, as the private home hides the user's own
	// configuration, the model chosen there included); EffortApplied
	// whether the effort is part of it; ObservedModel the display name the
	// init event reported (it may differ from the catalog's for the same
	// model: no drift).
	RequestedModel  string `json:"requestedModel"`
	ResolvedModel   string `json:"resolvedModel"`
	ObservedModel   string `json:"observedModel"`
	RequestedEffort string `json:"requestedEffort"`
	EffortApplied   bool   `json:"effortApplied"`
	BillingPool     string `json:"billingPool"`

	Usage event.Usage `json:"usage"`

	// Sandbox is the sandbox policy the task ran under; Delivery is
	// "foreground" (the background jobs of a later issue say "background");
	// AllowedTools the allowlist sent to the agent and enforced locally.
	Sandbox      string   `json:"sandbox"`
	Delivery     string   `json:"delivery"`
	AllowedTools []string `json:"allowedTools"`
	HomeDir      string   `json:"homeDir"`

	Warnings []event.Warning `json:"warnings"`
	State    State           `json:"state"`
	Failure  *Failure        `json:"failure"`

	// Review is a review's validated verdict (package review), absent for
	// a task and for a review that failed.
	Review jsontext.Value `json:"review,omitempty"`

	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	EndedAt   *time.Time `json:"endedAt"`
}

// Semantic is the footer's word for the job: consult, write or review.
func (r *Record) Semantic() string {
	if r.Role == RoleReview {
		return string(RoleReview)
	}
	return string(r.Mode)
}
