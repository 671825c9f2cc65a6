package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/internal/modelapi"
	"github.com/cursorkit/cursorkit/internal/realcli"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestRealTurnsThroughTheCommand plays every scenario with every real CLI
// through `cursorkit run --agent CLI --json`, a cursorkit process of its
// own whose whole environment is the CLI's private one (realcli.Env) and
// which finds the CLI through CURSORKIT_<NAME>_BIN: the same turns as the
// library's TestRealTurns (package agents), read off the command's stdout.
func TestRealTurnsThroughTheCommand(t *testing.T) {
	realcli.EachScenario(t, func(t *testing.T, cli string, sc realcli.Scenario) {
		want := sc.WantFor(cli)
		r := runRealCommand(t, cli, sc, nil, nil)
		if want.Status == "done" {
			assert.NoError(t, r.err, "stderr: %s", r.stderr)
		} else {
			assert.Error(t, r.err, "a failed turn's exit code")
		}
		if want.Stalled {
			realcli.AwaitLeave(t, r.api)
		}
		realcli.Check(t, want, realcli.Run{Observed: realcli.Observe(t, r.stdout), Requests: r.api.Requests(), Workspace: r.ws})
		if t.Failed() {
			t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
	})
}

// TestFallbackAfterRetriesWithRealCLIs: a real CLI whose model API
// answers 429 with retry-after forever retries on its own; with
// --fallback cursor --fallback-after-retries 1, cursorkit stops it at its
// first retry notice (Claude Code's api_retry event, Codex's
// "Reconnecting... 1/1", Gemini CLI's "Attempt 1 failed" on stderr) and
// Cursor answers the prompt, the engaged event saying so.
func TestFallbackAfterRetriesWithRealCLIs(t *testing.T) {
	for _, cli := range realcli.CLIs() {
		t.Run(cli, func(t *testing.T) {
			t.Parallel()
			testkit.SkipIfWine(t, realcli.WineLacks)
			sc := realcli.ScenarioNamed(t, "rate-limit-exhausted")
			// A long retry-after: the stop must come before the CLI's retry
			// reaches the stand-in, however slow this machine is.
			sc.Script = func(string) modelapi.Script {
				return modelapi.Script{Replies: []modelapi.Reply{{Error: modelapi.ErrRateLimit, RetryAfter: 20, Times: 100}}}
			}
			dir := testkit.TempDir(t)
			cursorBin := testkit.Install(t, dir, "cursor-agent", testkit.Simulator)
			r := runRealCommand(t, cli, sc, []string{"--fallback", "cursor", "--fallback-after-retries", "1"},
				[]string{"CURSOR_AGENT_BIN=" + cursorBin, "XDG_CACHE_HOME=" + testkit.TempDir(t)})
			require.NoError(t, r.err, "stderr: %s", r.stderr)
			o := realcli.Observe(t, r.stdout)
			require.Len(t, o.Engaged, 1, "%s", o)
			e := o.Engaged[0]
			assert.Equal(t, "retry", e["triggerPoint"])
			assert.Equal(t, "rate-limit", e["failureCategory"])
			assert.Equal(t, cli, e["primaryAgent"])
			assert.Equal(t, "cursor", e["fallbackAgent"])
			assert.Equal(t, "done", o.Outcome.Status, "Cursor answered")
			assert.NotEmpty(t, o.Text, "Cursor's answer")
			if assert.Len(t, o.Retries(), 1, "the primary's one retry notice") {
				assert.Equal(t, 429, o.Retries()[0].Retry.Status)
			}
			turns := 0
			for _, req := range r.api.Requests() {
				if req.Reply >= 0 {
					turns++
				}
			}
			assert.Equal(t, 1, turns, "the primary was stopped before its retry reached the API")
		})
	}
}

// realCommandRun is one `cursorkit run --agent CLI --json` of a real CLI.
type realCommandRun struct {
	stdout []byte
	stderr string
	err    error
	api    *modelapi.Server
	ws     string
}

// runRealCommand runs sc's turn of the real cli through `cursorkit run
// --agent CLI --json ... extraArgs -` in a process of its own whose whole
// environment is the CLI's private one (realcli.Env), CURSORKIT_<NAME>_BIN
// and extraEnv, and checks what every such run must hold: the prompt in
// no output, no process of the CLI's left.
func runRealCommand(t *testing.T, cli string, sc realcli.Scenario, extraArgs, extraEnv []string) realCommandRun {
	t.Helper()
	bin := realcli.Bin(t, cli)
	r := realCommandRun{ws: realcli.Workspace(t, testkit.TempDir(t))}
	var err error
	r.api, err = modelapi.Start(sc.Script(cli), map[string]string{"workspace": r.ws})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, r.api.Close()) })
	home := testkit.TempDir(t)
	a, err := agents.Lookup(cli)
	require.NoError(t, err)
	env := append(realcli.Env(t, cli, r.api.URL(), home), a.EnvBinary+"="+bin,
		testkit.RoleEnv+"="+cliRole, "GORACE=atexit_sleep_ms=0")
	env = append(env, extraEnv...)

	args := []string{"run", "--agent", cli, "--json", "--cwd", r.ws, "--timeout", "3m", "--first-line-timeout", realcli.FirstLine.String()}
	if sc.Write {
		args = append(args, "--write")
	} else {
		args = append(args, "--mode", "ask")
	}
	if m := sc.Model[cli]; m != "" {
		args = append(args, "--model", m)
	}
	if sc.Idle > 0 {
		args = append(args, "--idle-timeout", sc.Idle.String())
	}
	cmd := exec.Command(testBinary(t), append(append(args, extraArgs...), "-")...)
	var stdout, stderr bytes.Buffer
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, r.ws, &stdout, &stderr
	cmd.Stdin = strings.NewReader(realcli.Prompt)
	r.err = cmd.Run()
	r.stdout, r.stderr = stdout.Bytes(), stderr.String()
	assert.NotContains(t, stdout.String()+r.stderr, realcli.PromptMark, "the output quotes the prompt")
	if pids, ok := realcli.Survivors(home); ok {
		assert.Empty(t, pids, "processes of the turn outlived cursorkit")
	}
	return r
}
