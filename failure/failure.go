// Package failure defines the typed failures every cursorkit package returns.
//
// Each error a caller sees carries exactly one Kind (docs/contract.md,
// "Failure kinds and exit codes"). An *Error
// holds that kind, a message meant for people (never secrets, PATH, the
// environment or prompt text) and an optional bounded detail. Kind finds the
// kind of any error chain, and ExitCode maps a kind to the cursorkit CLI's
// documented exit code.
package failure

import (
	"errors"
	"fmt"
)

// Kind classifies a failure. The zero value is not a valid kind.
type Kind string

// The failure kinds, in the contract's order.
const (
	MissingCLI   Kind = "missing_cli" // no candidate binary could be found or started
	Setup        Kind = "setup"       // the installation or configuration is unusable
	Auth         Kind = "auth"        // the agent is not logged in or credentials were refused
	Quota        Kind = "quota"       // a usage limit was reached
	RateLimited  Kind = "rate_limited"
	Network      Kind = "network"
	Sandbox      Kind = "sandbox"
	Policy       Kind = "policy"   // the agent did something the caller's policy forbids
	Protocol     Kind = "protocol" // the agent's output broke the documented contract
	Timeout      Kind = "timeout"
	Process      Kind = "process" // the child exited non-zero or could not be managed
	Cancelled    Kind = "cancelled"
	Died         Kind = "died" // the child was killed by a signal nobody sent on purpose
	Input        Kind = "input"
	Resource     Kind = "resource"
	Unclassified Kind = "error" // anything that fits no other kind
)

var kinds = [...]Kind{MissingCLI, Setup, Auth, Quota, RateLimited, Network, Sandbox,
	Policy, Protocol, Timeout, Process, Cancelled, Died, Input, Resource, Unclassified}

// Kinds returns every failure kind, in the contract's order.
func Kinds() []Kind { return append([]Kind(nil), kinds[:]...) }

// Valid reports whether k is one of the contract's kinds.
func (k Kind) Valid() bool {
	for _, known := range kinds {
		if k == known {
			return true
		}
	}
	return false
}

// ParseKind returns the Kind named s, or false when s names no kind.
func ParseKind(s string) (Kind, bool) {
	k := Kind(s)
	return k, k.Valid()
}

// Exit codes of the cursor commands (probe, status, models, doctor, run).
const (
	ExitOK         = 0
	ExitError      = 1
	ExitInput      = 2
	ExitMissingCLI = 3
	ExitSetup      = 4
	ExitAuth       = 5
	ExitQuota      = 6
	ExitNetwork    = 7
	ExitPolicy     = 8
	ExitProtocol   = 9
	ExitTimeout    = 10
	ExitProcess    = 11
	ExitCancelled  = 130
)

// exitCodes is the contract's table for the cursor commands, in one place.
var exitCodes = map[Kind]int{
	MissingCLI:   ExitMissingCLI,
	Setup:        ExitSetup,
	Auth:         ExitAuth,
	Quota:        ExitQuota,
	RateLimited:  ExitQuota,
	Network:      ExitNetwork,
	Sandbox:      ExitPolicy,
	Policy:       ExitPolicy,
	Protocol:     ExitProtocol,
	Timeout:      ExitTimeout,
	Process:      ExitProcess,
	Died:         ExitProcess,
	Cancelled:    ExitCancelled,
	Input:        ExitInput,
	Resource:     ExitError,
	Unclassified: ExitError,
}

// ExitCode returns the exit code the cursor commands use for kind. An
// unknown or empty kind maps to ExitError.
func ExitCode(kind Kind) int {
	if code, ok := exitCodes[kind]; ok {
		return code
	}
	return ExitError
}

// ExitCodeOf returns the exit code for err: ExitOK for nil, otherwise the
// code of its kind.
func ExitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	return ExitCode(KindOf(err))
}

// Error is a failure with a kind. Message is a complete sentence-like text
// for people; Detail is optional bounded context (a candidate's stderr tail,
// for example); Err is the underlying cause, if any, exposed by Unwrap.
type Error struct {
	Kind    Kind
	Message string
	Detail  string
	Err     error
}

// Error returns "message: detail", or "message: cause" when there is no
// detail but a cause.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = string(e.Kind)
	}
	switch {
	case e.Detail != "":
		return msg + ": " + e.Detail
	case e.Err != nil:
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error of the same kind with no message,
// so errors.Is(err, &failure.Error{Kind: failure.Timeout}) tests the kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Message == "" && t.Detail == "" && t.Err == nil && t.Kind == e.Kind
}

// New returns an *Error of kind with a formatted message.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error of kind whose cause is err. It returns nil when err
// is nil, so it can wrap a call's result directly.
func Wrap(kind Kind, err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Err: err}
}

// WithDetail returns a copy of e carrying detail.
func (e *Error) WithDetail(detail string) *Error {
	c := *e
	c.Detail = detail
	return &c
}

// KindOf returns the kind of the first *Error in err's chain, or Unclassified when
// the chain holds none. It returns "" for a nil error.
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var fe *Error
	if errors.As(err, &fe) && fe.Kind.Valid() {
		return fe.Kind
	}
	return Unclassified
}

// Is reports whether err's kind is kind.
func Is(err error, kind Kind) bool { return err != nil && KindOf(err) == kind }
