package claude_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/claude"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

// TestMain makes the test binary the replay stand-in when started as one.
func TestMain(m *testing.M) {
	testkit.RunIfChild()
	os.Exit(m.Run())
}

// turnResult is what one supervised turn through the stand-in gave.
type turnResult struct {
	outcome turn.Outcome
	err     error
	events  []event.Event
	records []agentsim.Record
}

// runTurn runs turn through turn.Run on the stand-in installed as claude
// on a PATH of its own, replaying stream with env's extra settings.
func runTurn(t *testing.T, req claude.Turn, stream string, w *testkit.Watch, opts func(*turn.Options), env ...string) turnResult {
	t.Helper()
	dir := testkit.TempDir(t)
	testkit.Install(t, dir, claude.Command, testkit.Simulator)
	denv := discovery.EnvFromOS()
	denv.Path = dir
	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: claude.Command, Source: discovery.SourcePath}, denv, discovery.OSFS())
	require.NoError(t, err)
	args, err := claude.Args(req)
	require.NoError(t, err)
	plan, err := shim.Build(res, args, shim.OptionsFromOS())
	require.NoError(t, err)
	dec, err := claude.NewDecoder(req)
	require.NoError(t, err)

	abs, err := filepath.Abs(filepath.Join("testdata", stream))
	require.NoError(t, err)
	record := filepath.Join(testkit.TempDir(t), "record.jsonl")
	o := claude.TurnDefaults()
	o.Env = testkit.ChildEnv(testkit.Simulator, append([]string{agentsim.EnvReplay + "=" + abs,
		agentsim.EnvRecord + "=" + record, agentsim.EnvPIDDir + "=" + w.PIDDir()}, env...)...)
	var r turnResult
	o.OnEvent = func(e event.Event) { r.events = append(r.events, e) }
	if opts != nil {
		opts(&o)
	}
	r.outcome, r.err = turn.Run(context.Background(), plan, req.Prompt, dec, o)
	r.records, _ = agentsim.ReadRecords(record)
	return r
}

func TestRun(t *testing.T) {
	const prompt = "Summarise README.md, SECRET PROMPT"
	tests := []struct {
		name   string
		req    claude.Turn
		stream string
		env    []string
		opts   func(*turn.Options)
		kind   failure.Kind
		check  func(t *testing.T, r turnResult)
	}{
		{name: "a good turn", req: claude.Turn{Prompt: prompt, Mode: turn.ModeWrite, Model: "sonnet"}, stream: "good-turn.jsonl",
			check: func(t *testing.T, r turnResult) {
				require.Len(t, r.records, 1)
				assert.Equal(t, prompt, r.records[0].Stdin, "the prompt travels on stdin")
				argv := strings.Join(r.records[0].Args, " ")
				assert.Contains(t, argv, "-p --output-format stream-json --verbose --permission-mode acceptEdits")
				assert.Contains(t, argv, "--model sonnet")
				assert.NotContains(t, argv, "SECRET")
				assert.Equal(t, turn.StatusDone, r.outcome.Status)
				assert.Equal(t, "11111111-2222-3333-4444-555555555555", r.outcome.SessionID)
				assert.Equal(t, "claude-sonnet-4-5", r.outcome.Model)
				assert.Equal(t, int64(36), *r.outcome.Usage.InputTokens)
				assert.Equal(t, event.TypeResult, r.events[len(r.events)-1].Type)
			}},
		{name: "an error result: not logged in (recorded)", req: claude.Turn{Prompt: prompt}, stream: "not-logged-in.jsonl",
			env: []string{agentsim.EnvReplayExit + "=1"}, kind: failure.Auth,
			check: func(t *testing.T, r turnResult) {
				assert.Contains(t, r.outcome.Message, "Not logged in")
				assert.NotContains(t, r.outcome.Message, "SECRET")
			}},
		{name: "a missing session: a result alone, stderr", req: claude.Turn{Prompt: prompt, Resume: "43367082-969f-4ff0-ae35-0bfcf4c259a1"},
			stream: "resume-missing.jsonl", env: []string{agentsim.EnvReplayExit + "=1",
				agentsim.EnvReplayStderr + "=No conversation found with session ID: 43367082-969f-4ff0-ae35-0bfcf4c259a1"}, kind: failure.Input,
			check: func(t *testing.T, r turnResult) {
				require.Len(t, r.records, 1)
				assert.Contains(t, strings.Join(r.records[0].Args, " "), "--resume 43367082-969f-4ff0-ae35-0bfcf4c259a1")
			}},
		{name: "a hang after the result: exit grace, the turn stands", req: claude.Turn{Prompt: prompt, Mode: turn.ModeWrite}, stream: "good-turn.jsonl",
			env:  []string{agentsim.EnvReplayHang + "=worker"},
			opts: func(o *turn.Options) { o.ExitGrace = 300 * time.Millisecond },
			check: func(t *testing.T, r turnResult) {
				assert.Equal(t, turn.StatusDone, r.outcome.Status)
				var codes []string
				for _, w := range r.outcome.Warnings {
					codes = append(codes, w.Code)
				}
				assert.Contains(t, codes, event.WarnLateClose)
			}},
		{name: "a policy kill: Bash in plan mode stops the tree", req: claude.Turn{Prompt: prompt}, stream: "good-turn.jsonl",
			env: []string{agentsim.EnvReplayHang + "=worker"}, kind: failure.Policy,
			check: func(t *testing.T, r turnResult) {
				assert.NotEqual(t, supervise.Exited, r.outcome.Process.Ending, "stopped, not exited")
				assert.Contains(t, r.outcome.Message, `"Bash"`)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testkit.NewWatch(t)
			r := runTurn(t, tt.req, tt.stream, w, tt.opts, tt.env...)
			assert.Equal(t, tt.kind, failure.KindOf(r.err), "%v", r.err)
			assert.Equal(t, tt.kind, r.outcome.Kind)
			assert.NotContains(t, r.outcome.Message, "SECRET PROMPT")
			if tt.check != nil {
				tt.check(t, r)
			}
			w.RequireGone(10 * time.Second)
		})
	}
}
