package task_test

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
	"github.com/cursorkit/cursorkit/task"
	"github.com/cursorkit/cursorkit/turn"
)

func TestMain(m *testing.M) {
	testkit.RunIfChild()
	os.Exit(m.Run())
}

// fixture is one task's world: a workspace, a data directory, the
// simulator as cursor-agent, its invocation record and a survivor watch.
type fixture struct {
	store     jobs.Store
	workspace string
	record    string
	bin       cursor.Binary
	watch     *testkit.Watch
	env       []string
}

func newFixture(t testing.TB, scenarios ...string) *fixture {
	t.Helper()
	f := &fixture{store: jobs.Store{Dir: testkit.TempDir(t)}, workspace: testkit.TempDir(t)}
	f.record = filepath.Join(testkit.TempDir(t), "record.jsonl")
	path := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	f.bin = cursor.Binary{Resolution: discovery.Resolution{Path: path}}
	f.watch = testkit.NewWatch(t)
	f.env = append(os.Environ(), agentsim.EnvRecord+"="+f.record, agentsim.EnvPIDDir+"="+f.watch.PIDDir(),
		cursor.EnvAPIKey+"=test-key-123", "XDG_CONFIG_HOME=/should/not/pass")
	if len(scenarios) > 0 {
		f.env = append(f.env, agentsim.Scenario(scenarios...))
	}
	return f
}

func (f *fixture) spec(mode jobs.Mode, prompt string) task.Spec {
	return task.Spec{Role: jobs.RoleTask, Mode: mode, Prompt: prompt, Workspace: f.workspace, Binary: f.bin, Version: "2026.10.15-abc1234"}
}

func (f *fixture) options() task.Options {
	o := task.Options{Env: f.env, Turn: task.Defaults()}
	o.Turn.FirstLineTimeout, o.Turn.IdleTimeout, o.Turn.TotalTimeout = 20*time.Second, 20*time.Second, time.Minute
	return o
}

func TestConsultTask(t *testing.T) {
	f := newFixture(t)
	const prompt = "secret-prompt-51c2: explain the layout"
	opts := f.options()
	owner := &jobs.ProcessRef{PID: os.Getpid(), Created: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	opts.Owner = owner
	var seenRunning bool
	var text strings.Builder
	opts.Turn.OnEvent = func(e event.Event) {
		if e.Type == event.TypeInit {
			// The record is on disk, running, before the agent's first event.
			recs := listRecords(t, f.store)
			require.Len(t, recs, 1)
			seenRunning = recs[0].State == jobs.StateRunning
		}
		if e.Type == event.TypeText {
			text.WriteString(e.Text)
		}
	}
	rec, o, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeConsult, prompt), opts)
	require.NoError(t, err)
	assert.True(t, seenRunning)
	assert.Equal(t, turn.StatusDone, o.Status)
	assert.NotEmpty(t, text.String())

	assert.Equal(t, jobs.StateDone, rec.State)
	assert.Nil(t, rec.Failure)
	assert.Equal(t, "cursor", rec.Engine)
	assert.Equal(t, task.PolicyReadOnly, rec.Sandbox)
	assert.Equal(t, "foreground", rec.Delivery)
	assert.Equal(t, jobs.ModeConsult, rec.Mode)
	assert.Equal(t, cursor.SandboxedTools(turn.ModeAsk), rec.AllowedTools)
	assert.NotEmpty(t, rec.SessionID)
	assert.NotEmpty(t, rec.RequestID)
	assert.NotEmpty(t, rec.ObservedModel)
	assert.Equal(t, f.bin.Resolution.Path, rec.CursorBuildPath)
	assert.Equal(t, "2026.10.15-abc1234", rec.CursorVersion)
	assert.True(t, rec.Usage.Reported)
	require.NotNil(t, rec.EndedAt)
	assert.Equal(t, f.store.HomeDir(rec.ID), rec.HomeDir)

	saved, err := f.store.Find(f.workspace, rec.ID)
	require.NoError(t, err)
	assert.Equal(t, rec.State, saved.State)
	assert.Equal(t, rec.SessionID, saved.SessionID)
	// The owner and the agent's process, for jobs cancel and the died
	// judgement.
	assert.Equal(t, owner, saved.Worker)
	require.NotNil(t, saved.Agent)
	assert.Positive(t, saved.Agent.PID)
	assert.NotEqual(t, os.Getpid(), saved.Agent.PID)
	assert.False(t, saved.Agent.Created.IsZero())

	// What the agent saw: the private home, the profile's flags, the
	// prompt on stdin only, the key passed through, XDG config gone.
	inv := lastInvocation(t, f.record)
	assert.Contains(t, inv.Env, "HOME="+rec.HomeDir)
	assert.Contains(t, inv.Env, cursor.EnvAPIKey+"=test-key-123")
	for _, kv := range inv.Env {
		assert.False(t, strings.HasPrefix(kv, "XDG_CONFIG_HOME="), kv)
		assert.NotContains(t, kv, "secret-prompt")
	}
	assert.Equal(t, prompt, inv.Stdin)
	assert.Subset(t, inv.Args, []string{"--sandbox", "enabled", "--disable-project-configs", "--single-turn", "--disable-auto-update", "--mode", "ask"})
	assert.NotContains(t, inv.Args, "--force")
	for _, a := range inv.Args {
		assert.NotContains(t, a, "secret-prompt")
	}
	assert.True(t, samePath(t, f.workspace, inv.Cwd))
	_, err = os.Stat(filepath.Join(rec.HomeDir, ".cursor", "cli-config.json"))
	assert.NoError(t, err)
	f.watch.RequireGone(10 * time.Second)
}

func TestWriteTask(t *testing.T) {
	f := newFixture(t)
	rec, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeWrite, "fix it"), f.options())
	require.NoError(t, err)
	assert.Equal(t, task.PolicyReadWrite, rec.Sandbox)
	assert.Equal(t, jobs.ModeWrite, rec.Mode)
	assert.Equal(t, cursor.SandboxedTools(turn.ModeWrite), rec.AllowedTools)
	inv := lastInvocation(t, f.record)
	assert.NotContains(t, inv.Args, "--force")
	assert.NotContains(t, inv.Args, "ask")
}

func TestTaskFailuresAreRecorded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scenario string
		kind     failure.Kind
		state    jobs.State
		model    string
		pool     string
		write    bool
	}{
		{name: "a tool outside the allowlist", scenario: agentsim.ScenarioDisallowedTool, kind: failure.Policy, state: jobs.StateError},
		{name: "quota carries the billing pool", scenario: agentsim.ScenarioUsageLimit, kind: failure.Quota, state: jobs.StateError, model: "composer-2.5", pool: cursor.PoolFirstParty},
		{name: "rate limit carries the billing pool", scenario: agentsim.ScenarioRateLimited, kind: failure.RateLimited, state: jobs.StateError, model: "gpt-5-high", pool: cursor.PoolAPI},
		{name: "protocol", scenario: agentsim.ScenarioNoResult, kind: failure.Protocol, state: jobs.StateError},
		{name: "network", scenario: agentsim.ScenarioNetworkError, kind: failure.Network, state: jobs.StateError},
		{name: "a tool outside the write allowlist", scenario: agentsim.ScenarioDisallowedTool, kind: failure.Policy, state: jobs.StateError, write: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.scenario)
			mode := jobs.ModeConsult
			if tc.write {
				mode = jobs.ModeWrite
			}
			spec := f.spec(mode, "go")
			spec.ResolvedModel = tc.model
			rec, _, err := task.Run(context.Background(), f.store, spec, f.options())
			require.Error(t, err)
			assert.Equal(t, tc.kind, failure.KindOf(err))
			require.NotNil(t, rec)
			assert.Equal(t, tc.state, rec.State)
			require.NotNil(t, rec.Failure)
			assert.Equal(t, tc.kind, rec.Failure.Kind)
			assert.Equal(t, tc.pool, rec.Failure.BillingPool)
			saved, err := f.store.Find(f.workspace, rec.ID)
			require.NoError(t, err)
			assert.Equal(t, tc.state, saved.State)
			f.watch.RequireGone(10 * time.Second)
		})
	}
}

func TestCancelledTaskIsRecordedAndLeavesNothing(t *testing.T) {
	f := newFixture(t, agentsim.ScenarioHangMidStream)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := f.options()
	opts.Turn.OnEvent = func(e event.Event) {
		if e.Type == event.TypeText {
			cancel()
		}
	}
	rec, o, err := task.Run(ctx, f.store, f.spec(jobs.ModeConsult, "go"), opts)
	assert.Equal(t, failure.Cancelled, failure.KindOf(err))
	assert.Equal(t, turn.StatusCancelled, o.Status)
	require.NotNil(t, rec)
	assert.Equal(t, jobs.StateCancelled, rec.State)
	saved, err := f.store.Find(f.workspace, rec.ID)
	require.NoError(t, err)
	assert.Equal(t, jobs.StateCancelled, saved.State)
	f.watch.RequireGone(10 * time.Second)
}

func TestCheckFailsADoneTurn(t *testing.T) {
	f := newFixture(t)
	opts := f.options()
	opts.Check = func(string) (jsontext.Value, error) { return nil, failure.New(failure.Unclassified, "no verdict") }
	spec := f.spec(jobs.ModeConsult, "review")
	spec.Role = jobs.RoleReview
	rec, o, err := task.Run(context.Background(), f.store, spec, opts)
	assert.Equal(t, failure.Unclassified, failure.KindOf(err))
	assert.Equal(t, turn.StatusError, o.Status)
	assert.Equal(t, jobs.StateError, rec.State)
	assert.Equal(t, jobs.RoleReview, rec.Role)
	assert.Empty(t, rec.Review)
}

func TestPreflightFailuresMakeNothing(t *testing.T) {
	f := newFixture(t)
	if runtime.GOOS == "linux" {
		t.Run("no CURSOR_API_KEY on Linux", func(t *testing.T) {
			opts := f.options()
			opts.Env = slices.DeleteFunc(slices.Clone(opts.Env), func(kv string) bool { return strings.HasPrefix(kv, cursor.EnvAPIKey+"=") })
			rec, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeConsult, "go"), opts)
			assert.Nil(t, rec)
			assert.Equal(t, failure.Auth, failure.KindOf(err))
			assert.Contains(t, err.Error(), cursor.EnvAPIKey)
		})
	}
	t.Run("unknown mode", func(t *testing.T) {
		rec, _, err := task.Run(context.Background(), f.store, f.spec("plan", "go"), f.options())
		assert.Nil(t, rec)
		assert.Equal(t, failure.Input, failure.KindOf(err))
	})
	entries, _ := os.ReadDir(f.store.Dir)
	assert.Empty(t, entries, "no home, no record")
	_, err := os.Stat(f.record)
	assert.ErrorIs(t, err, os.ErrNotExist, "the agent never ran")
}

func TestProjectHooksAreWarnedAbout(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.MkdirAll(filepath.Join(f.workspace, ".cursor"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.workspace, ".cursor", "hooks.json"), []byte(`{"version":1,"hooks":{"afterFileEdit":[{"command":"./x.sh"}]}}`), 0o644))
	rec, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeConsult, "go"), f.options())
	require.NoError(t, err)
	var codes []string
	for _, w := range rec.Warnings {
		codes = append(codes, w.Code)
		if w.Code == task.WarnProjectHooks {
			assert.Contains(t, w.Message, "hooks.json")
		}
	}
	assert.Contains(t, codes, task.WarnProjectHooks)
}

func listRecords(t *testing.T, s jobs.Store) []*jobs.Record {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(s.Dir, "state", "*", "jobs", "*.json"))
	require.NoError(t, err)
	var out []*jobs.Record
	for _, p := range paths {
		id := strings.TrimSuffix(filepath.Base(p), ".json")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		var r jobs.Record
		require.NoError(t, jsonUnmarshal(data, &r), id)
		out = append(out, &r)
	}
	return out
}

func lastInvocation(t *testing.T, path string) agentsim.Record {
	t.Helper()
	recs, err := agentsim.ReadRecords(path)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	return recs[len(recs)-1]
}

func samePath(t *testing.T, a, b string) bool {
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// TestThePrivateHomeIsAllTheAgentSees: the agent's HOME holds the
// generated configuration and nothing of the user's.
func TestThePrivateHomeIsAllTheAgentSees(t *testing.T) {
	f := newFixture(t)
	rec, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeConsult, "go"), f.options())
	require.NoError(t, err)
	inv := lastInvocation(t, f.record)
	assert.True(t, samePath(t, rec.HomeDir, inv.Home), "%s != %s", inv.Home, rec.HomeDir)
	var files []string
	for _, hf := range inv.HomeFiles {
		files = append(files, filepath.ToSlash(hf.Path))
	}
	assert.Contains(t, files, ".cursor/cli-config.json")
	assert.Contains(t, files, ".cursor/sandbox.json")
	for _, p := range files {
		assert.True(t, strings.HasPrefix(p, ".cursor") || strings.HasPrefix(p, ".agents") || strings.HasPrefix(p, "Library"), "unexpected %s in the private home", p)
	}
	assert.Equal(t, "enabled", inv.Sandbox)
	assert.NotEmpty(t, inv.AllowedTools)
}

// TestTheSandboxDecidesWrites: in write mode the simulator's sandbox,
// reading the private home's sandbox.json, lets an edit inside the
// workspace through and rejects one outside; in consult mode both are
// rejected.
func TestTheSandboxDecidesWrites(t *testing.T) {
	for _, tc := range []struct {
		mode          jobs.Mode
		inside, outer string
	}{
		{mode: jobs.ModeWrite, inside: "success", outer: "rejected"},
		{mode: jobs.ModeConsult, inside: "rejected", outer: "rejected"},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			f := newFixture(t, agentsim.ScenarioSandboxWriteOutside)
			opts := f.options()
			status := map[string]string{}
			opts.Turn.OnEvent = func(e event.Event) {
				if e.Type == event.TypeToolCompleted {
					status[e.Tool.CallID] = e.Tool.Status
				}
			}
			_, _, err := task.Run(context.Background(), f.store, f.spec(tc.mode, "edit"), opts)
			if tc.mode == jobs.ModeConsult {
				// editToolCall is outside the consult allowlist: the
				// local check stops the turn first.
				assert.Equal(t, failure.Policy, failure.KindOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.inside, status["toolu_edit_in"])
			assert.Equal(t, tc.outer, status["toolu_edit_out"])
		})
	}
}

func TestAnUnavailableSandboxFailsTheTask(t *testing.T) {
	f := newFixture(t, agentsim.ScenarioSandboxUnavailable)
	rec, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeWrite, "go"), f.options())
	assert.Equal(t, failure.Sandbox, failure.KindOf(err), "%v", err)
	require.NotNil(t, rec)
	assert.Equal(t, jobs.StateError, rec.State)
	assert.Equal(t, failure.Sandbox, rec.Failure.Kind)
}

// TestPreflightRefusalsLeaveNothing: a workspace sandbox.json that could
// widen the policy, and a data directory inside the workspace, fail the
// task before its home or record exist.
func TestPreflightRefusalsLeaveNothing(t *testing.T) {
	t.Run("a widening workspace sandbox.json is sandbox", func(t *testing.T) {
		f := newFixture(t)
		require.NoError(t, os.MkdirAll(filepath.Join(f.workspace, ".cursor"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(f.workspace, ".cursor", "sandbox.json"), []byte(`{"type":"insecure_none"}`), 0o644))
		rec, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeWrite, "go"), f.options())
		assert.Nil(t, rec)
		assert.Equal(t, failure.Sandbox, failure.KindOf(err))
		entries, _ := os.ReadDir(f.store.Dir)
		assert.Empty(t, entries)
	})
	t.Run("a strict workspace sandbox.json runs", func(t *testing.T) {
		f := newFixture(t)
		require.NoError(t, os.MkdirAll(filepath.Join(f.workspace, ".cursor"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(f.workspace, ".cursor", "sandbox.json"), []byte(`{"type":"workspace_readonly"}`), 0o644))
		_, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeConsult, "go"), f.options())
		assert.NoError(t, err)
	})
	for _, inside := range []bool{true, false} {
		t.Run(fmt.Sprintf("data directory and workspace overlap (data inside: %v)", inside), func(t *testing.T) {
			f := newFixture(t)
			if inside {
				f.store.Dir = filepath.Join(f.workspace, ".cursorkit-data")
			} else {
				f.workspace = filepath.Join(f.store.Dir, "ws")
				require.NoError(t, os.MkdirAll(f.workspace, 0o755))
			}
			rec, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeWrite, "go"), f.options())
			assert.Nil(t, rec)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			_, err = os.Stat(filepath.Join(f.store.Dir, "runs"))
			assert.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

// TestOnStartSeesTheRunningRecord: OnStart runs once, after the record is
// saved running and before the agent's first event.
func TestOnStartSeesTheRunningRecord(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, os.MkdirAll(filepath.Join(f.workspace, ".claude"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.workspace, ".claude", "settings.json"), []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}`), 0o644))
	opts := f.options()
	var order []string
	opts.OnStart = func(r *jobs.Record) {
		order = append(order, "start:"+string(r.State))
		saved, err := f.store.Find(f.workspace, r.ID)
		require.NoError(t, err)
		assert.Equal(t, jobs.StateRunning, saved.State)
		assert.True(t, slices.ContainsFunc(r.Warnings, func(w event.Warning) bool { return w.Code == task.WarnProjectHooks }))
	}
	opts.Turn.OnEvent = func(e event.Event) {
		if e.Type == event.TypeInit {
			order = append(order, "init")
		}
	}
	_, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeConsult, "go"), opts)
	require.NoError(t, err)
	assert.Equal(t, []string{"start:running", "init"}, order)
}

// TestTaskSupervision: the task's deadlines and graces hold: a total
// deadline fails it as timeout with nothing left; an agent that lingers
// after its result is stopped after the exit grace with a late_close
// warning, and the task stays done.
func TestTaskSupervision(t *testing.T) {
	t.Run("total deadline", func(t *testing.T) {
		f := newFixture(t, agentsim.ScenarioHangMidStream)
		opts := f.options()
		opts.Turn.TotalTimeout = 300 * time.Millisecond
		rec, _, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeConsult, "go"), opts)
		assert.Equal(t, failure.Timeout, failure.KindOf(err))
		assert.Equal(t, jobs.StateError, rec.State)
		assert.Equal(t, failure.Timeout, rec.Failure.Kind)
		f.watch.RequireGone(10 * time.Second)
	})
	t.Run("late close", func(t *testing.T) {
		f := newFixture(t, agentsim.ScenarioLinger)
		opts := f.options()
		opts.Turn.ExitGrace = 200 * time.Millisecond
		rec, o, err := task.Run(context.Background(), f.store, f.spec(jobs.ModeConsult, "go"), opts)
		require.NoError(t, err)
		assert.Equal(t, turn.StatusDone, o.Status)
		assert.Equal(t, jobs.StateDone, rec.State)
		assert.True(t, slices.ContainsFunc(rec.Warnings, func(w event.Warning) bool { return w.Code == event.WarnLateClose }), "%v", rec.Warnings)
		f.watch.RequireGone(10 * time.Second)
	})
	t.Run("defaults", func(t *testing.T) {
		d := task.Defaults()
		assert.Equal(t, 30*time.Second, d.FirstLineTimeout)
		assert.Equal(t, 120*time.Second, d.IdleTimeout)
		assert.Equal(t, 540*time.Second, d.TotalTimeout)
		assert.Equal(t, 15*time.Second, d.ExitGrace)
		assert.Equal(t, 5*time.Second, d.StopGrace)
	})
}

// TestRecordNamesTheResolvedBuild: a Cursor CLI found through a symbolic
// link (the installer's PATH entry) is recorded as the file it leads to,
// the build that runs, so a later update of the link does not change
// which build a job names.
func TestRecordNamesTheResolvedBuild(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a Windows resolution records no link chain")
	}
	f := newFixture(t)
	link := filepath.Join(testkit.TempDir(t), "cursor-agent")
	testkit.Symlink(t, f.bin.Resolution.Path, link)
	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: link, Source: discovery.SourceOverride},
		discovery.EnvFromOS(), discovery.OSFS())
	require.NoError(t, err)
	require.Equal(t, link, res.Path)
	spec := f.spec(jobs.ModeConsult, "go")
	spec.Binary = cursor.Binary{Resolution: res, Configured: true}
	rec, err := task.Prepare(context.Background(), f.store, spec, f.options())
	require.NoError(t, err)
	assert.Equal(t, f.bin.Resolution.Path, rec.CursorBuildPath)
}

// TestTaskCarriesTheUserModelChoice: without --model a task's private
// config holds the model the user chose in the Cursor CLI's own config
// (the private home hides that file); with --model it holds none.
func TestTaskCarriesTheUserModelChoice(t *testing.T) {
	const chosen = `{"modelId":"gpt-5","displayName":"GPT-5"}`
	for _, resolved := range []string{"", "composer-2"} {
		t.Run("resolved model "+resolved, func(t *testing.T) {
			f := newFixture(t)
			config := testkit.TempDir(t)
			require.NoError(t, os.WriteFile(filepath.Join(config, "cli-config.json"),
				[]byte(`{"version":1,"model":`+chosen+`,"hasChangedDefaultModel":true,"permissions":{"allow":["Shell(**)"],"deny":[]}}`), 0o600))
			opts := f.options()
			opts.Env = append(opts.Env, "CURSOR_CONFIG_DIR="+config)
			spec := f.spec(jobs.ModeConsult, "go")
			spec.ResolvedModel = resolved
			rec, err := task.Prepare(context.Background(), f.store, spec, opts)
			require.NoError(t, err)
			data, err := os.ReadFile(filepath.Join(rec.HomeDir, ".cursor", "cli-config.json"))
			require.NoError(t, err)
			var doc struct {
				Model       jsontext.Value      `json:"model"`
				Permissions map[string][]string `json:"permissions"`
			}
			require.NoError(t, json.Unmarshal(data, &doc))
			assert.Equal(t, []string{"Read(**)"}, doc.Permissions["allow"], "the user's permissions never come along")
			if resolved == "" {
				assert.JSONEq(t, chosen, string(doc.Model))
			} else {
				assert.Nil(t, doc.Model)
			}
		})
	}
}
