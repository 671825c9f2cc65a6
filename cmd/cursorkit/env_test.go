package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
)

// TestBadDurationVariables: a duration variable that is set but is not a
// positive duration is an input error naming it, never a silent default,
// and its value is not echoed.
func TestBadDurationVariables(t *testing.T) {
	data := testkit.TempDir(t)
	tests := []struct {
		name     string
		variable string
		value    string
		args     []string
	}{
		{name: "the start grace, for jobs status", variable: envStartGrace, value: "soon-ish", args: []string{"jobs", "status"}},
		{name: "the start grace, for jobs cancel", variable: envStartGrace, value: "0h", args: []string{"jobs", "cancel", "task-x"}},
		{name: "the wait budget", variable: envWaitTimeout, value: "soon-ish", args: []string{"jobs", "result", "--wait", "task-x"}},
		{name: "the wait poll", variable: envWaitPoll, value: "-1s", args: []string{"jobs", "result", "--wait", "task-x"}},
		{name: "the probe bound", variable: envProbeTimeout, value: "soon-ish", args: []string{"probe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{jobs.EnvData: data, tt.variable: tt.value}
			code, stdout, stderr := runCLI(t, env, "", append([]string{"--json"}, tt.args...)...)
			assert.Equal(t, failure.ExitInput, code, stderr)
			obj := decodeObject(t, stdout)
			require.Contains(t, obj, "error")
			e := obj["error"].(map[string]any)
			assert.Equal(t, "input", e["kind"])
			assert.Contains(t, e["message"], tt.variable)
			assert.NotContains(t, stdout+stderr, tt.value)
		})
	}
}
