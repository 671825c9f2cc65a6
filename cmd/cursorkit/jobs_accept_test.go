package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/jobs"
)

func TestJobsAccept(t *testing.T) {
	const unknown = "task-20200101T000000Z-00000000"
	tests := []struct {
		name    string
		state   jobs.State
		args    []string // after `jobs accept`; ID stands for the job's id
		code    int
		wantErr string // the input error's message holds it; "" for success
		want    *jobs.Acceptance
	}{
		{name: "accepted with a note", state: jobs.StateDone, args: []string{"ID", "--acceptance", "accepted", "--note", "read the diff; tests pass"},
			want: &jobs.Acceptance{State: jobs.AcceptanceAccepted, Note: "read the diff; tests pass"}},
		{name: "rejected", state: jobs.StateError, args: []string{"--acceptance=rejected", "ID", "--note", "touched the wrong package"},
			want: &jobs.Acceptance{State: jobs.AcceptanceRejected, Note: "touched the wrong package"}},
		{name: "unverified, no note", state: jobs.StateDied, args: []string{"ID", "--acceptance", "unverified"},
			want: &jobs.Acceptance{State: jobs.AcceptanceUnverified}},
		{name: "a job not final", state: jobs.StateRunning, args: []string{"ID", "--acceptance", "accepted"}, code: 2, wantErr: "only a finished job"},
		{name: "a bad value", state: jobs.StateDone, args: []string{"ID", "--acceptance", "fine"}, code: 2,
			wantErr: `"fine" is not an acceptance: want accepted, rejected or unverified`},
		{name: "an unknown id", state: jobs.StateDone, args: []string{unknown, "--acceptance", "accepted"}, code: 2, wantErr: "no job " + unknown},
		{name: "a note with a newline", state: jobs.StateDone, args: []string{"ID", "--acceptance", "accepted", "--note", "line one\nline two"}, code: 2,
			wantErr: "control character"},
		{name: "a note over 4 KiB", state: jobs.StateDone, args: []string{"ID", "--acceptance", "accepted", "--note", strings.Repeat("n", 4097)}, code: 2,
			wantErr: "at most 4096"},
		{name: "no --acceptance", state: jobs.StateDone, args: []string{"ID", "--note", "x"}, code: 2, wantErr: "needs --acceptance accepted, rejected or unverified"},
		{name: "no id", state: jobs.StateDone, args: []string{"--acceptance", "accepted"}, code: 2, wantErr: "needs a job id"},
	}
	for _, tt := range tests {
		for _, asJSON := range []bool{false, true} {
			name := tt.name
			if asJSON {
				name += ", json"
			}
			t.Run(name, func(t *testing.T) {
				env, store, rec := recordedJob(t, tt.state, selfRef(t))
				args := []string{"jobs", "accept"}
				for _, a := range tt.args {
					args = append(args, strings.ReplaceAll(a, "ID", rec.ID))
				}
				if asJSON {
					args = append(args, "--json")
				}
				code, stdout, stderr := runCLI(t, env, "", args...)
				assert.Equal(t, tt.code, code, stderr)
				saved, err := store.Find(rec.Workspace, rec.ID)
				require.NoError(t, err)
				if tt.wantErr != "" {
					if asJSON {
						e := decodeObject(t, stdout)["error"].(map[string]any)
						assert.Equal(t, "input", e["kind"])
						assert.Contains(t, e["message"], tt.wantErr)
					} else {
						assert.Empty(t, stdout)
						assert.Contains(t, stderr, tt.wantErr)
					}
					assert.NotContains(t, stdout+stderr, "line two", "the note is never echoed")
					assert.Nil(t, saved.Acceptance, "nothing is saved")
					return
				}
				require.NotNil(t, saved.Acceptance)
				assert.Equal(t, tt.want.State, saved.Acceptance.State)
				assert.Equal(t, tt.want.Note, saved.Acceptance.Note)
				if asJSON {
					answer := decodeObject(t, stdout)
					assert.Equal(t, rec.ID, answer["id"])
					assert.Equal(t, string(tt.state), answer["state"])
					assertAcceptance(t, tt.want, answer["acceptance"])
				} else {
					f := footer(stdout)
					assert.Equal(t, rec.ID, f["job"])
					assert.Equal(t, string(tt.want.State), f["acceptance"])
					assert.Equal(t, tt.want.Note, f["acceptance-note"])
				}
				assertShown(t, env, rec.ID, tt.want)
			})
		}
	}
}

// assertAcceptance checks a decoded {"state","note","at"} against want.
func assertAcceptance(t *testing.T, want *jobs.Acceptance, got any) {
	t.Helper()
	m, ok := got.(map[string]any)
	require.True(t, ok, "acceptance is an object: %v", got)
	assert.Len(t, m, 3)
	assert.Equal(t, string(want.State), m["state"])
	assert.Equal(t, want.Note, m["note"])
	at, err := time.Parse(time.RFC3339Nano, m["at"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), at, time.Minute)
}

// assertShown checks that status and history, human and --json, show job
// id's acceptance.
func assertShown(t *testing.T, env map[string]string, id string, want *jobs.Acceptance) {
	t.Helper()
	code, stdout, stderr := runCLI(t, env, "", "jobs", "status", id)
	require.Equal(t, 0, code, stderr)
	f := footer(stdout)
	assert.Equal(t, string(want.State), f["acceptance"])
	assert.Equal(t, want.Note, f["acceptance-note"])
	assert.True(t, strings.HasSuffix(stdout, "acceptance: "+string(want.State)+"\n") ||
		strings.HasSuffix(stdout, "acceptance-note: "+want.Note+"\n"), "the footer ends with it: %q", stdout)

	code, stdout, stderr = runCLI(t, env, "", "jobs", "status", id, "--json")
	require.Equal(t, 0, code, stderr)
	assertAcceptance(t, want, decodeObject(t, stdout)["acceptance"])

	code, stdout, stderr = runCLI(t, env, "", "jobs", "history", "--all")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "acceptance: "+string(want.State))

	code, stdout, stderr = runCLI(t, env, "", "jobs", "history", "--all", "--json")
	require.Equal(t, 0, code, stderr)
	entries := decodeObject(t, stdout)["jobs"].([]any)
	require.Len(t, entries, 1)
	assertAcceptance(t, want, entries[0].(map[string]any)["acceptance"])
}

// TestJobsWithoutAcceptance: a job never accepted shows none, and history
// entries still carry the member; accept's flags are accept's alone.
func TestJobsWithoutAcceptance(t *testing.T) {
	env, _, rec := recordedJob(t, jobs.StateDone, nil)
	code, stdout, stderr := runCLI(t, env, "", "jobs", "status", rec.ID)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "acceptance")
	code, stdout, _ = runCLI(t, env, "", "jobs", "status", rec.ID, "--json")
	require.Equal(t, 0, code)
	assert.NotContains(t, decodeObject(t, stdout), "acceptance")
	code, stdout, _ = runCLI(t, env, "", "jobs", "history", "--all", "--json")
	require.Equal(t, 0, code)
	entry := decodeObject(t, stdout)["jobs"].([]any)[0].(map[string]any)
	assert.Contains(t, entry, "acceptance")
	assert.Nil(t, entry["acceptance"])

	for _, args := range [][]string{{"status", rec.ID, "--acceptance", "accepted"}, {"history", "--note", "x"}} {
		code, _, stderr = runCLI(t, env, "", append([]string{"jobs"}, args...)...)
		assert.Equal(t, 2, code, args)
		assert.Contains(t, stderr, "are accept's")
	}
	code, stdout, _ = runCLI(t, env, "", "jobs", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "accept ID --acceptance accepted|rejected|unverified [--note TEXT]")
	assert.Contains(t, stdout, "--acceptance STATE")
	assert.Contains(t, stdout, "--note TEXT")
}
