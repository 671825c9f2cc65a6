package turn

import (
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// maxStderrDetail bounds the stderr tail unfinished.verdict quotes.
const maxStderrDetail = 500

// unfinished is what a Decoder knows when its agent exited by itself
// before the turn's final event: the part of End that is the same for
// every agent.
type unfinished struct {
	// Agent names the agent in messages: "claude", "cursor-agent".
	Agent string
	// First and Final name the stream's first and final events in
	// messages, with their article: "a system/init event", "a result
	// event".
	First, Final string
	// SawFirst reports whether the first event arrived; Lines is how many
	// stdout lines were read.
	SawFirst bool
	Lines    int
	// ExitCode and StderrTail are End's arguments.
	ExitCode   int
	StderrTail string
	// Classify is the agent's ClassifyMessage: the failure kind its
	// message indicates, failure.Unclassified when it finds none.
	Classify func(string) failure.Kind
}

// verdict is the failure of the unfinished turn:
//
//   - exit 0 without the first event, or without the final event:
//     failure.Protocol, naming the missing event and how many lines were
//     read;
//   - a non-zero exit: failure.Process ("exited with code N before its
//     first event", or "without" the final event), or the kind Classify
//     finds in the stderr tail; the tail, trimmed, is the detail, cut to
//     its last 500 bytes.
//
// The agent's own cases (exit codes it documents, a fatal error event)
// go around it: the result is the caller's to amend.
func (u unfinished) verdict() *failure.Error {
	var err *failure.Error
	switch {
	case u.ExitCode == 0 && !u.SawFirst:
		return failure.New(failure.Protocol, "%s exited 0 without %s (%d lines read)", u.Agent, u.First, u.Lines)
	case u.ExitCode == 0:
		return failure.New(failure.Protocol, "%s exited 0 without %s (%d lines read)", u.Agent, u.Final, u.Lines)
	case !u.SawFirst:
		err = failure.New(failure.Process, "%s exited with code %d before its first event", u.Agent, u.ExitCode)
	default:
		err = failure.New(failure.Process, "%s exited with code %d without %s", u.Agent, u.ExitCode, u.Final)
	}
	if tail := strings.TrimSpace(u.StderrTail); tail != "" {
		if k := u.Classify(tail); k != failure.Unclassified {
			err.Kind = k
		}
		err.Detail = "stderr: " + detail.CutStart(tail, maxStderrDetail)
	}
	return err
}
