package main

import (
	"encoding/json/v2"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
)

// jobEnv prepares a task or review against the simulator: the binary, a
// data directory, an API key, and a workspace; it returns the global
// flags, the getenv map and the workspace.
func jobEnv(t *testing.T, scenario string) (flags []string, env map[string]string, data, workspace string) {
	t.Helper()
	// PATH holds no cursor-agent, but git when the machine has it (a
	// review runs git through discovery, on PATH).
	gitPath, _ := exec.LookPath("git")
	settings := cursorEnv(t, "", scenario)
	if gitPath != "" {
		t.Setenv("PATH", os.Getenv("PATH")+string(os.PathListSeparator)+filepath.Dir(gitPath))
	}
	bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	t.Setenv(cursor.EnvAPIKey, "test-key")
	t.Setenv(agentsim.EnvRecord, filepath.Join(testkit.TempDir(t), "sim-record.jsonl"))
	data = testkit.TempDir(t)
	workspace = testkit.TempDir(t)
	return []string{"--settings", settings, "--binary", bin}, map[string]string{jobs.EnvData: data}, data, workspace
}

// outcomeLine is the last NDJSON line of a --json job.
func outcomeLine(t *testing.T, stdout string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.NotEmpty(t, lines)
	for _, l := range lines[:len(lines)-1] {
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &obj), "every line is one JSON object: %q", l)
	}
	obj := decodeObject(t, lines[len(lines)-1])
	require.Equal(t, "outcome", obj["type"])
	return obj
}

func footer(stdout string) map[string]string {
	f := map[string]string{}
	for _, l := range strings.Split(stdout, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && !strings.Contains(k, " ") {
			f[k] = v
		}
	}
	return f
}

func TestTaskCommand(t *testing.T) {
	t.Run("consult, human", func(t *testing.T) {
		flags, env, data, ws := jobEnv(t, "")
		code, stdout, stderr := runCLI(t, env, "explain the layout", append(flags, "task", "--cwd", ws)...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "The README says hello.")
		f := footer(stdout)
		assert.NotEmpty(t, f["cursor-session"])
		assert.Regexp(t, `^task-\d{8}T\d{6}Z-[0-9a-f]{8}$`, f["job"])
		assert.Equal(t, "workspace_readonly", f["sandbox"])
		assert.Equal(t, "foreground", f["delivery"])
		assert.Equal(t, "consult", f["semantic"])
		assert.Equal(t, "done", f["state"])
		assert.NotContains(t, f, "failure")
		// The footer is the block at the end, in the contract's order.
		assert.Regexp(t, `(?s)\ncursor-session: .*\njob: .*\nsandbox: .*\ndelivery: foreground\nsemantic: consult\nstate: done\n$`, stdout)
		rec, err := jobs.Store{Dir: data}.Find(ws, f["job"])
		require.NoError(t, err)
		assert.Equal(t, jobs.StateDone, rec.State)
		assert.Equal(t, f["cursor-session"], rec.SessionID)
	})
	t.Run("write, json", func(t *testing.T) {
		flags, env, _, ws := jobEnv(t, "")
		code, stdout, stderr := runCLI(t, env, "", append(flags, "task", "--write", "--json", "--cwd", ws, "--", "fix the bug")...)
		require.Equal(t, 0, code, stderr)
		out := outcomeLine(t, stdout)
		assert.Equal(t, "done", out["status"])
		job := out["job"].(map[string]any)
		assert.Equal(t, "cursor", job["engine"])
		assert.Equal(t, "write", job["mode"])
		assert.Equal(t, "task", job["role"])
		assert.Equal(t, "workspace_readwrite", job["sandbox"])
		assert.Equal(t, "done", job["state"])
		assert.Equal(t, out["sessionId"], job["sessionId"])
		assert.NotContains(t, out, "review")
	})
	t.Run("a tool outside the allowlist fails as policy, footer says so", func(t *testing.T) {
		flags, env, _, ws := jobEnv(t, agentsim.ScenarioDisallowedTool)
		w := testkit.NewWatch(t)
		t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
		code, stdout, _ := runCLI(t, env, "go", append(flags, "task", "--cwd", ws)...)
		assert.Equal(t, failure.ExitCode(failure.Policy), code)
		f := footer(stdout)
		assert.Equal(t, "error", f["state"])
		assert.True(t, strings.HasPrefix(f["failure"], "policy: "), f["failure"])
		w.RequireGone(execWait)
	})
	t.Run("an unavailable sandbox fails as sandbox, exit 8", func(t *testing.T) {
		flags, env, _, ws := jobEnv(t, agentsim.ScenarioSandboxUnavailable)
		code, stdout, _ := runCLI(t, env, "go", append(flags, "task", "--write", "--cwd", ws)...)
		assert.Equal(t, failure.ExitCode(failure.Sandbox), code)
		assert.Equal(t, 8, code)
		f := footer(stdout)
		assert.Equal(t, "error", f["state"])
		assert.True(t, strings.HasPrefix(f["failure"], "sandbox: "), f["failure"])
	})
	t.Run("a tool outside the write allowlist stops the tree, exit 8", func(t *testing.T) {
		flags, env, _, ws := jobEnv(t, agentsim.ScenarioDisallowedTool)
		w := testkit.NewWatch(t)
		t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
		code, stdout, _ := runCLI(t, env, "go", append(flags, "task", "--write", "--cwd", ws)...)
		assert.Equal(t, 8, code)
		assert.True(t, strings.HasPrefix(footer(stdout)["failure"], "policy: "))
		w.RequireGone(execWait)
	})
	t.Run("options come first: the rest of the line is the prompt, flags in it included", func(t *testing.T) {
		flags, env, _, ws := jobEnv(t, "")
		code, stdout, stderr := runCLI(t, env, "", append(flags, "task", "--json", "--cwd", ws, "fix", "the", "--write", "test", "--", "-x")...)
		require.Equal(t, failure.ExitOK, code, stderr)
		assert.Equal(t, "consult", outcomeLine(t, stdout)["job"].(map[string]any)["mode"], "--write inside the prompt is prompt text")
		turn := turnRecord(t, os.Getenv(agentsim.EnvRecord))
		require.NotNil(t, turn)
		assert.Equal(t, "fix the --write test -- -x", turn.Stdin)
	})
	t.Run("CURSORKIT_TASK_TIMEOUT stops the task when --timeout is not given", func(t *testing.T) {
		flags, env, _, ws := jobEnv(t, agentsim.ScenarioHangMidStream)
		w := testkit.NewWatch(t)
		t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
		env[envTaskTimeout] = "500ms"
		code, stdout, _ := runCLI(t, env, "go", append(flags, "task", "--cwd", ws)...)
		assert.Equal(t, failure.ExitCode(failure.Timeout), code)
		assert.True(t, strings.HasPrefix(footer(stdout)["failure"], "timeout: "), footer(stdout)["failure"])
		w.RequireGone(execWait)
	})
	t.Run("--timeout stops the task", func(t *testing.T) {
		flags, env, _, ws := jobEnv(t, agentsim.ScenarioHangMidStream)
		w := testkit.NewWatch(t)
		t.Setenv(agentsim.EnvPIDDir, w.PIDDir())
		code, stdout, _ := runCLI(t, env, "go", append(flags, "task", "--timeout", "500ms", "--cwd", ws)...)
		assert.Equal(t, failure.ExitCode(failure.Timeout), code)
		assert.True(t, strings.HasPrefix(footer(stdout)["failure"], "timeout: "), footer(stdout)["failure"])
		w.RequireGone(execWait)
	})
	t.Run("hook warnings before launch and in the footer", func(t *testing.T) {
		flags, env, _, ws := jobEnv(t, "")
		require.NoError(t, os.MkdirAll(filepath.Join(ws, ".cursor"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".cursor", "hooks.json"), []byte(`{"version":1,"hooks":{"stop":[{"command":"./x"}]}}`), 0o644))
		code, stdout, stderr := runCLI(t, env, "go", append(flags, "task", "--cwd", ws)...)
		require.Equal(t, 0, code, stderr)
		assert.Regexp(t, `(?m)^warning: project_hooks: .*hooks\.json`, stderr)
		// Before the agent's first activity line.
		assert.Less(t, strings.Index(stderr, "warning: project_hooks"), strings.Index(stderr, "· session"))
		assert.Regexp(t, `(?m)^warning: project_hooks: .*hooks\.json.*\nstate: done\n$`, stdout)
		code, stdout, _ = runCLI(t, env, "go", append(flags, "task", "--json", "--cwd", ws)...)
		require.Equal(t, 0, code)
		out := outcomeLine(t, stdout)
		assert.Equal(t, "project_hooks", out["warnings"].([]any)[0].(map[string]any)["code"], "the outcome's warnings are the job's")
	})
	t.Run("quota", func(t *testing.T) {
		flags, env, _, ws := jobEnv(t, agentsim.ScenarioUsageLimit)
		code, stdout, _ := runCLI(t, env, "", append(flags, "task", "--json", "--cwd", ws, "go")...)
		assert.Equal(t, failure.ExitCode(failure.Quota), code)
		job := outcomeLine(t, stdout)["job"].(map[string]any)
		assert.Equal(t, "error", job["state"])
		assert.Equal(t, "quota", job["failure"].(map[string]any)["kind"])
	})
}

// TestTaskModels: --model and --effort resolve through the catalog as for
// run, and the record says what was asked, what it resolved to and which
// billing pool it draws on.
func TestTaskModels(t *testing.T) {
	for _, tc := range []struct {
		model, effort  string
		resolved, pool string
		effortApplied  bool
	}{
		{model: "gpt-5.1-codex", effort: "high", resolved: "gpt-5.1-codex-high", pool: "api", effortApplied: true},
		{model: "gpt-5.1-codex", effort: "xhigh", resolved: "gpt-5.1-codex-extra-high", pool: "api", effortApplied: true},
		{model: "composer-1", effort: "high", resolved: "composer-1", pool: "first-party"},
		{model: "claude-opus-4-8[effort=high]", resolved: "claude-opus-4-8[effort=high]", pool: "api"},
	} {
		t.Run(tc.model+" "+tc.effort, func(t *testing.T) {
			flags, env, _, ws := jobEnv(t, "")
			args := append(flags, "task", "--json", "--cwd", ws, "--model", tc.model)
			if tc.effort != "" {
				args = append(args, "--effort", tc.effort)
			}
			code, stdout, stderr := runCLI(t, env, "", append(args, "go")...)
			require.Equal(t, 0, code, stderr)
			job := outcomeLine(t, stdout)["job"].(map[string]any)
			assert.Equal(t, tc.model, job["requestedModel"])
			assert.Equal(t, tc.effort, job["requestedEffort"])
			assert.Equal(t, tc.resolved, job["resolvedModel"])
			assert.Equal(t, tc.effortApplied, job["effortApplied"])
			assert.Equal(t, tc.pool, job["billingPool"])
			assert.NotEmpty(t, job["observedModel"])
		})
	}
	t.Run("an unknown model is input before anything is made", func(t *testing.T) {
		flags, env, data, ws := jobEnv(t, "")
		code, stdout, _ := runCLI(t, env, "", append(flags, "task", "--json", "--cwd", ws, "--model", "no-such-model", "go")...)
		assert.Equal(t, failure.ExitInput, code)
		assert.Equal(t, "input", decodeObject(t, stdout)["error"].(map[string]any)["kind"])
		entries, _ := os.ReadDir(data)
		assert.Empty(t, entries)
	})
}

func TestTaskRefusesBeforeAnythingIsMade(t *testing.T) {
	flags, env, data, ws := jobEnv(t, "")
	require.NoError(t, os.Mkdir(filepath.Join(ws, ".git"), 0o755))
	sub := filepath.Join(ws, "pkg")
	require.NoError(t, os.Mkdir(sub, 0o755))
	for _, tc := range []struct {
		name string
		args []string
		cwd  string
		env  map[string]string
		code int
	}{
		{name: "a bad task timeout variable", args: []string{"task", "--cwd", ws, "go"}, env: map[string]string{envTaskTimeout: "later"}, code: failure.ExitInput},
		{name: "a bad task timeout variable, review", args: []string{"review", "--cwd", ws}, env: map[string]string{envTaskTimeout: "later"}, code: failure.ExitInput},
		{name: "a bad exit grace variable", args: []string{"task", "--cwd", ws, "go"}, env: map[string]string{envExitGrace: "-1m"}, code: failure.ExitInput},
		{name: "implicit workspace below the repository root", args: []string{"task", "go"}, cwd: sub, code: failure.ExitInput},
		{name: "missing --cwd", args: []string{"task", "--cwd", filepath.Join(ws, "nope"), "go"}, code: failure.ExitInput},
		{name: "empty prompt", args: []string{"task", "--cwd", ws, " "}, code: failure.ExitInput},
		{name: "effort without model", args: []string{"task", "--cwd", ws, "--effort", "high", "go"}, code: failure.ExitInput},
		{name: "zero timeout", args: []string{"task", "--cwd", ws, "--timeout", "0s", "go"}, code: failure.ExitInput},
		{name: "review with an argument", args: []string{"review", "--cwd", ws, "extra"}, code: failure.ExitInput},
		{name: "review with a bad scope", args: []string{"review", "--cwd", ws, "--scope", "everything"}, code: failure.ExitInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cwd != "" {
				t.Chdir(tc.cwd)
			}
			caseEnv := maps.Clone(env)
			maps.Copy(caseEnv, tc.env)
			code, stdout, _ := runCLI(t, caseEnv, "", append(append(append([]string{}, flags...), tc.args[0], "--json"), tc.args[1:]...)...)
			assert.Equal(t, tc.code, code)
			e := decodeObject(t, stdout)["error"].(map[string]any)
			assert.Equal(t, "input", e["kind"])
			for name := range tc.env {
				assert.Contains(t, e["message"], name)
			}
		})
	}
	if runtime.GOOS == "linux" {
		t.Run("no CURSOR_API_KEY is auth", func(t *testing.T) {
			t.Setenv(cursor.EnvAPIKey, "")
			code, _, stderr := runCLI(t, env, "", append(flags, "task", "--cwd", ws, "go")...)
			assert.Equal(t, failure.ExitCode(failure.Auth), code)
			assert.Contains(t, stderr, cursor.EnvAPIKey)
		})
	}
	entries, err := os.ReadDir(data)
	require.NoError(t, err)
	assert.Empty(t, entries, "no private home, no record")
}

// gitRepo makes a repository with one commit and returns it.
func gitRepo(t *testing.T) string {
	t.Helper()
	testkit.SkipIfWine(t, "the Wine prefix has no git.exe")
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := testkit.TempDir(t)
	gitRun(t, dir, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644))
	gitRun(t, dir, "add", ".")
	gitRun(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "one")
	return dir
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

func TestReviewCommand(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		code     int
		verdict  string
	}{
		{scenario: agentsim.ScenarioReviewJSON, code: 0, verdict: "request_changes"},
		{scenario: agentsim.ScenarioReviewProseJSON, code: 0, verdict: "approve"},
		{scenario: agentsim.ScenarioReviewInvalidJSON, code: failure.ExitCode(failure.Unclassified)},
		{scenario: agentsim.ScenarioReviewNoJSON, code: failure.ExitCode(failure.Unclassified)},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			flags, env, _, _ := jobEnv(t, tc.scenario)
			repo := gitRepo(t)
			require.NoError(t, os.WriteFile(filepath.Join(repo, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644))

			code, stdout, stderr := runCLI(t, env, "", append(flags, "review", "--cwd", repo, "--json")...)
			require.Equal(t, tc.code, code, stderr)
			out := outcomeLine(t, stdout)
			job := out["job"].(map[string]any)
			assert.Equal(t, "review", job["role"])
			assert.Equal(t, "consult", job["mode"])
			assert.Equal(t, "workspace_readonly", job["sandbox"])
			if tc.verdict == "" {
				assert.Equal(t, "error", out["status"])
				assert.Equal(t, "error", job["state"])
				assert.NotContains(t, out, "review")
				return
			}
			assert.Equal(t, tc.verdict, out["review"].(map[string]any)["verdict"])
			assert.Equal(t, tc.verdict, job["review"].(map[string]any)["verdict"])

			// Human output: the verdict, not the raw reply.
			code, stdout, _ = runCLI(t, env, "", append(flags, "review", "--cwd", repo)...)
			require.Equal(t, 0, code)
			assert.Contains(t, stdout, "verdict: "+tc.verdict)
			assert.Contains(t, stdout, "summary: ")
			assert.NotContains(t, stdout, `"verdict"`)
			f := footer(stdout)
			assert.Equal(t, "review", f["semantic"])
			assert.Equal(t, "done", f["state"])
		})
	}
	t.Run("a clean tree with no branch commits is input", func(t *testing.T) {
		flags, env, data, _ := jobEnv(t, agentsim.ScenarioReviewJSON)
		repo := gitRepo(t)
		code, stdout, _ := runCLI(t, env, "", append(flags, "review", "--cwd", repo, "--scope", "working-tree", "--json")...)
		assert.Equal(t, failure.ExitInput, code)
		assert.Equal(t, "input", decodeObject(t, stdout)["error"].(map[string]any)["kind"])
		entries, _ := os.ReadDir(data)
		assert.Empty(t, entries)
	})
}

func TestJobFooter(t *testing.T) {
	var b strings.Builder
	printJobFooter(&b, &jobs.Record{ID: "task-20261201T180512Z-3f9a1c0b", Mode: jobs.ModeWrite, Role: jobs.RoleTask,
		Sandbox: "workspace_readwrite", Delivery: "foreground", State: jobs.StateCancelled,
		Warnings: []event.Warning{{Code: "late_close", Message: "two\nlines"}},
		Failure:  &jobs.Failure{Kind: failure.Cancelled, Message: "stopped by SIGINT"}})
	assert.Equal(t, "job: task-20261201T180512Z-3f9a1c0b\nsandbox: workspace_readwrite\ndelivery: foreground\nsemantic: write\n"+
		"warning: late_close: two lines\nstate: cancelled\nfailure: cancelled: stopped by SIGINT\n", b.String())
}

func TestReviewDiffs(t *testing.T) {
	t.Run("a diff too large for a prompt is cut with a warning", func(t *testing.T) {
		flags, env, _, _ := jobEnv(t, agentsim.ScenarioReviewJSON)
		repo := gitRepo(t)
		big := strings.Repeat("line of a generated file that is far too long to review whole\n", 6000)
		require.NoError(t, os.WriteFile(filepath.Join(repo, "big.txt"), []byte(big), 0o644))
		code, stdout, stderr := runCLI(t, env, "", append(flags, "review", "--cwd", repo, "--json")...)
		require.Equal(t, 0, code, stderr)
		out := outcomeLine(t, stdout)
		var codes []any
		for _, w := range out["job"].(map[string]any)["warnings"].([]any) {
			codes = append(codes, w.(map[string]any)["code"])
		}
		assert.Contains(t, codes, "diff_cut")
		rec := lastSimRecord(t)
		assert.Contains(t, rec.Stdin, "[diff cut: ")
	})
	t.Run("the branch against --base", func(t *testing.T) {
		flags, env, _, _ := jobEnv(t, agentsim.ScenarioReviewJSON)
		repo := gitRepo(t)
		gitRun(t, repo, "checkout", "-q", "-b", "feature")
		require.NoError(t, os.WriteFile(filepath.Join(repo, "b.go"), []byte("package a\n\nvar B = 1\n"), 0o644))
		gitRun(t, repo, "add", ".")
		gitRun(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "two")
		code, stdout, stderr := runCLI(t, env, "", append(flags, "review", "--cwd", repo, "--scope", "branch", "--base", "main", "--json")...)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, "request_changes", outcomeLine(t, stdout)["review"].(map[string]any)["verdict"])
		assert.Contains(t, lastSimRecord(t).Stdin, "b.go")
	})
	t.Run("an implicit directory below the repository root is input", func(t *testing.T) {
		flags, env, data, _ := jobEnv(t, agentsim.ScenarioReviewJSON)
		repo := gitRepo(t)
		sub := filepath.Join(repo, "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		t.Chdir(sub)
		code, stdout, _ := runCLI(t, env, "", append(flags, "review", "--json")...)
		assert.Equal(t, failure.ExitInput, code)
		assert.Equal(t, "input", decodeObject(t, stdout)["error"].(map[string]any)["kind"])
		entries, _ := os.ReadDir(data)
		assert.Empty(t, entries)
	})
	t.Run("an explicit --cwd below the root reviews from the root", func(t *testing.T) {
		flags, env, _, _ := jobEnv(t, agentsim.ScenarioReviewJSON)
		repo := gitRepo(t)
		sub := filepath.Join(repo, "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644))
		code, stdout, stderr := runCLI(t, env, "", append(flags, "review", "--cwd", sub, "--json")...)
		require.Equal(t, 0, code, stderr)
		job := outcomeLine(t, stdout)["job"].(map[string]any)
		assert.True(t, sameDir(t, repo, job["workspace"].(string)))
		assert.True(t, sameDir(t, repo, lastSimRecord(t).Cwd))
	})
}

// lastSimRecord is the simulator's record of its last invocation (jobEnv
// names the record file).
func lastSimRecord(t *testing.T) agentsim.Record {
	t.Helper()
	recs, err := agentsim.ReadRecords(os.Getenv(agentsim.EnvRecord))
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	return recs[len(recs)-1]
}

func sameDir(t *testing.T, a, b string) bool {
	t.Helper()
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// TestCursorUnavailable: a task or review that cannot use the Cursor CLI
// says so in one line an orchestrator's circuit breaker reads, and the
// typed error under --json.
func TestCursorUnavailable(t *testing.T) {
	flags, env, _, ws := jobEnv(t, "")
	flags[len(flags)-1] = filepath.Join(testkit.TempDir(t), "no-cursor-agent")
	for _, tc := range []struct {
		name   string
		args   []string
		asJSON bool
	}{
		{name: "task", args: []string{"task", "--cwd", ws, "go"}},
		{name: "task --json", args: []string{"task", "--json", "--cwd", ws, "go"}, asJSON: true},
		{name: "review --json", args: []string{"review", "--json"}, asJSON: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.args[0] == "review" {
				repo := gitRepo(t)
				require.NoError(t, os.WriteFile(filepath.Join(repo, "a.go"), []byte("package a // changed\n"), 0o644))
				tc.args = append(tc.args, "--cwd", repo)
			}
			code, stdout, stderr := runCLI(t, env, "", append(append([]string{}, flags...), tc.args...)...)
			assert.Equal(t, failure.ExitCode(failure.MissingCLI), code)
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			require.Len(t, lines, 1, "one line: %q", stderr)
			assert.True(t, strings.HasPrefix(lines[0], "cursor unavailable: missing_cli: "), lines[0])
			if tc.asJSON {
				assert.Equal(t, "missing_cli", decodeObject(t, stdout)["error"].(map[string]any)["kind"])
			} else {
				assert.Empty(t, stdout)
			}
		})
	}
}
