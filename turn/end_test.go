package turn_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

func TestUnfinishedVerdict(t *testing.T) {
	classify := func(s string) failure.Kind {
		if strings.Contains(s, "401") {
			return failure.Auth
		}
		return failure.Unclassified
	}
	tests := []struct {
		name     string
		sawFirst bool
		exit     int
		stderr   string
		kind     failure.Kind
		err      string
	}{
		{name: "exit 0, nothing", exit: 0, kind: failure.Protocol, err: "x exited 0 without a start event (3 lines read)"},
		{name: "exit 0 after the first", sawFirst: true, exit: 0, stderr: "401", kind: failure.Protocol,
			err: "x exited 0 without an end event (3 lines read)"},
		{name: "before the first", exit: 2, kind: failure.Process, err: "x exited with code 2 before its first event"},
		{name: "without the final", sawFirst: true, exit: 1, stderr: " \n", kind: failure.Process,
			err: "x exited with code 1 without an end event"},
		{name: "classified tail", exit: 1, stderr: "\nHTTP 401\n", kind: failure.Auth,
			err: "x exited with code 1 before its first event: stderr: HTTP 401"},
		{name: "tail cut at its start", exit: 1, stderr: strings.Repeat("é", 300) + "end", kind: failure.Process,
			err: "x exited with code 1 before its first event: stderr: …" + strings.Repeat("é", 248) + "end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := turn.Unfinished{
				Agent: "x", First: "a start event", Final: "an end event",
				SawFirst: tt.sawFirst, Lines: 3, ExitCode: tt.exit, StderrTail: tt.stderr, Classify: classify,
			}.Verdict()
			assert.Equal(t, tt.kind, err.Kind)
			assert.Equal(t, tt.err, err.Error())
		})
	}
}
