package agents_test

import (
	"bytes"
	"context"
	"encoding/json/v2"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/modelapi"
	"github.com/cursorkit/cursorkit/internal/realcli"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

// TestRealTurns plays every scenario with every real CLI through the
// library's entry point (agents.Agent.Run), each CLI with a home of its
// own, against the model-API stand-in on the loopback: the CLI runs its
// real tools on the workspace's files, and what cursorkit reports must be
// what realcli's scenario wants.
func TestRealTurns(t *testing.T) {
	realcli.EachScenario(t, func(t *testing.T, cli string, sc realcli.Scenario) {
		realcli.Check(t, sc.WantFor(cli), playReal(t, newRealSetup(t, cli, sc)))
	})
}

// TestRealCLIsWithoutLogin: each real CLI with a home where nobody logged
// in and no API is configured (realcli.Env without an API) answers
// --version as its ParseVersion reads it, and fails a turn the way it
// really fails there, the prompt in no message: Claude Code "Not logged
// in" (auth), Codex outside a git repository (setup) and in one with no
// network (it would wait for the network forever: network), Gemini CLI
// "Please set an Auth method" (auth, exit 41).
func TestRealCLIsWithoutLogin(t *testing.T) {
	tests := []struct {
		cli     string
		noGit   bool
		kind    failure.Kind
		message string
	}{
		{cli: realcli.Claude, kind: failure.Auth, message: "Not logged in"},
		{cli: realcli.Codex, noGit: true, kind: failure.Setup, message: "git"},
		{cli: realcli.Codex, kind: failure.Network},
		{cli: realcli.Gemini, kind: failure.Auth, message: "Please set an Auth method"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/git=%v", tt.cli, !tt.noGit), func(t *testing.T) {
			t.Parallel()
			testkit.SkipIfWine(t, realcli.WineLacks)
			bin := realcli.Bin(t, tt.cli)
			home := testkit.TempDir(t)
			env := realcli.Env(t, tt.cli, "", home)
			ws := testkit.TempDir(t)
			if !tt.noGit {
				ws = realcli.Workspace(t, ws)
			}
			a, err := agents.Lookup(tt.cli)
			require.NoError(t, err)
			res, err := a.Find(context.Background(), bin, nil, discovery.EnvFromOS(), discovery.OSFS())
			require.NoError(t, err)
			v, err := a.Version(context.Background(), res, env, time.Minute)
			require.NoError(t, err)
			assert.Equal(t, realcli.Version(t, tt.cli), v)

			opts := a.TurnDefaults()
			opts.Env, opts.Dir, opts.TotalTimeout, opts.FirstLineTimeout = env, ws, 90*time.Second, realcli.FirstLine
			_, o, err := runAndWrite(t, a, res, agents.Turn{Prompt: realcli.Prompt, Mode: turn.ModeAsk}, opts)
			require.Error(t, err)
			assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
			assert.Contains(t, o.Message, tt.message)
			assert.NotContains(t, err.Error(), realcli.PromptMark)
			for _, w := range o.Warnings {
				assert.NotContains(t, w.Message, realcli.PromptMark)
			}
			if pids, ok := realcli.Survivors(home); ok {
				assert.Empty(t, pids, "processes of the turn outlived it")
			}
		})
	}
}

// realSetup is one real turn's machine: the installed CLI, a stand-in
// playing the scenario's script, the CLI's own home and a workspace, and
// the turn as cursorkit runs it.
type realSetup struct {
	cli   string
	sc    realcli.Scenario
	agent agents.Agent
	res   discovery.Resolution
	api   *modelapi.Server
	ws    string
	home  string
	req   agents.Turn
	opts  turn.Options
}

func newRealSetup(t *testing.T, cli string, sc realcli.Scenario) realSetup {
	t.Helper()
	s := realSetup{cli: cli, sc: sc}
	bin := realcli.Bin(t, cli)
	s.ws = realcli.Workspace(t, testkit.TempDir(t))
	var err error
	s.api, err = modelapi.Start(sc.Script(cli), map[string]string{"workspace": s.ws})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.api.Close()) })
	s.home = testkit.TempDir(t)
	env := realcli.Env(t, cli, s.api.URL(), s.home)

	s.agent, err = agents.Lookup(cli)
	require.NoError(t, err)
	s.res, err = s.agent.Find(context.Background(), bin, nil, discovery.EnvFromOS(), discovery.OSFS())
	require.NoError(t, err)
	s.req = agents.Turn{Prompt: realcli.Prompt, Mode: turn.ModeAsk, Model: sc.Model[cli]}
	if sc.Write {
		s.req.Mode = turn.ModeWrite
	}
	s.opts = s.agent.TurnDefaults()
	s.opts.Env, s.opts.Dir = env, s.ws
	s.opts.TotalTimeout = 3 * time.Minute
	s.opts.FirstLineTimeout = realcli.FirstLine
	if sc.Idle > 0 {
		s.opts.IdleTimeout = sc.Idle
	}
	return s
}

// playReal runs s's turn through agents.Agent.Run and returns what it
// showed, its events and outcome read as `run --json` writes them.
func playReal(t *testing.T, s realSetup) realcli.Run {
	t.Helper()
	stream, _, err := runAndWrite(t, s.agent, s.res, s.req, s.opts)
	if err != nil {
		assert.NotContains(t, err.Error(), realcli.PromptMark, "the error quotes the prompt")
	}
	assert.NotContains(t, stream, realcli.PromptMark, "the stream quotes the prompt")
	run := realcli.Run{Observed: realcli.Observe(t, []byte(stream)), Workspace: s.ws}
	if s.sc.WantFor(s.cli).Stalled {
		realcli.AwaitLeave(t, s.api)
	}
	run.Requests = s.api.Requests()
	if pids, ok := realcli.Survivors(s.home); ok {
		assert.Empty(t, pids, "processes of the turn outlived it")
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the stream:\n%s\nthe stand-in's requests:", run.Observed)
			for _, r := range run.Requests {
				t.Logf("  %s %s %s model %q reply %d status %d results %q", r.API, r.Method, r.Path, r.Model, r.Reply, r.Status, r.ToolResults)
			}
		}
	})
	return run
}

// runAndWrite runs one turn with agents.Agent.Run and returns its events
// and outcome as `run --json` writes them, its outcome and its error.
func runAndWrite(t *testing.T, a agents.Agent, res discovery.Resolution, req agents.Turn, opts turn.Options) (string, turn.Outcome, error) {
	t.Helper()
	var stream bytes.Buffer
	w := event.NewWriter(&stream)
	opts.OnEvent = func(e event.Event) { assert.NoError(t, w.Write(e)) } // on a reader goroutine: no FailNow
	o, err := a.Run(context.Background(), res, true, req, opts)
	require.NoError(t, json.MarshalEncode(w.Encoder(), o))
	return stream.String(), o, err
}

// TestRefreshRealStreams records what each real CLI prints for each
// scenario as the golden streams under testdata/real (realcli.Golden):
// the CLI run as cursorkit runs it (its argv, plan and supervision), its
// stdout and stderr kept whole. It runs only with CURSORKIT_REFRESH_REAL=1
// (scripts/real-streams), when a pinned version moves.
func TestRefreshRealStreams(t *testing.T) {
	if os.Getenv("CURSORKIT_REFRESH_REAL") != "1" {
		t.Skip("refreshes testdata/real only with CURSORKIT_REFRESH_REAL=1 (scripts/real-streams)")
	}
	for _, cli := range realcli.CLIs() {
		version := realcli.Version(t, cli)
		require.NotEmpty(t, version, "the installed %s's version", cli)
		for _, sc := range realcli.Scenarios() {
			t.Run(cli+"/"+sc.Name, func(t *testing.T) {
				t.Parallel()
				s := newRealSetup(t, cli, sc)
				args, err := s.agent.Args(s.req)
				require.NoError(t, err)
				plan, err := shim.Build(s.res, args, shim.OptionsFromOS())
				require.NoError(t, err)
				var stdout, stderr bytes.Buffer
				o, _ := supervise.Run(context.Background(), plan, supervise.Options{
					Dir: s.ws, Env: s.opts.Env, Stdin: strings.NewReader(s.req.Prompt),
					FirstLineTimeout: s.opts.FirstLineTimeout, IdleTimeout: s.opts.IdleTimeout, TotalTimeout: s.opts.TotalTimeout,
					StopGrace: s.opts.StopGrace, Lines: supervise.KeepEndings, MaxLineBytes: 16 << 20,
					OnLine: func(line []byte) error { stdout.Write(line); return nil },
					Stderr: &stderr,
				})
				install, err := filepath.Abs(filepath.Join(filepath.Dir(realcli.Bin(t, cli)), "..", ".."))
				require.NoError(t, err)
				// Claude Code names a project by its path, every character
				// but letters and digits as '-'.
				mangle := regexp.MustCompile(`[^A-Za-z0-9]`)
				norm := map[string]string{s.ws: realcli.NormWorkspace, s.home: realcli.NormHome,
					mangle.ReplaceAllString(s.ws, "-"):         mangle.ReplaceAllString(realcli.NormWorkspace, "-"),
					strings.TrimPrefix(s.api.URL(), "http://"): realcli.NormAPI, install: realcli.NormInstall}
				stable := func(s string) string { return realcli.Stabilize(realcli.Normalize(s, norm)) }
				g := realcli.Golden{CLI: cli, Version: version, Scenario: sc.Name, Args: args, Script: sc.Script(cli),
					ExitCode: o.ExitCode, Stopped: o.Ending != supervise.Exited, Stderr: stable(stderr.String())}
				realcli.WriteGolden(t, g, []byte(stable(stdout.String())))
			})
		}
	}
}

// TestRealStreams decodes every recorded real stream (testdata/real) as a
// turn of its CLI, with no CLI installed: the replay stand-in plays the
// recorded stdout, stderr and exit through the CLI's decoder, and the turn
// must show what its scenario wants, as it did when it was recorded.
func TestRealStreams(t *testing.T) {
	goldens := realcli.ReadGoldens(t)
	require.NotEmpty(t, goldens, "testdata/real holds the recorded real streams")
	for _, g := range goldens {
		t.Run(g.CLI+"/"+g.Version+"/"+g.Scenario, func(t *testing.T) {
			t.Parallel()
			sc := realcli.ScenarioNamed(t, g.Scenario)
			a, err := agents.Lookup(g.CLI)
			require.NoError(t, err)
			dir := testkit.TempDir(t)
			stderr := filepath.Join(dir, "stderr.txt")
			require.NoError(t, os.WriteFile(stderr, []byte(g.Stderr), 0o644))
			stdout, err := filepath.Abs(g.Stdout)
			require.NoError(t, err)
			env := []string{agentsim.EnvReplay + "=" + stdout, agentsim.EnvReplayStderrFile + "=" + stderr,
				agentsim.EnvReplayExit + "=" + strconv.Itoa(g.ExitCode)}
			if g.Stopped {
				env = append(env, agentsim.EnvReplayHang+"=1")
			}
			bin := testkit.Install(t, dir, a.Command, testkit.Simulator)
			res, err := a.Find(context.Background(), bin, nil, discovery.EnvFromOS(), discovery.OSFS())
			require.NoError(t, err)
			req := agents.Turn{Prompt: realcli.Prompt, Mode: turn.ModeAsk, Model: sc.Model[g.CLI]}
			if sc.Write {
				req.Mode = turn.ModeWrite
			}
			opts := a.TurnDefaults()
			opts.Env = testkit.ChildEnv(testkit.Simulator, env...)
			if sc.Idle > 0 {
				opts.IdleTimeout = sc.Idle
			}
			stream, _, _ := runAndWrite(t, a, res, req, opts)
			assert.NotContains(t, stream, realcli.PromptMark, "the recorded stream echoes the prompt; the turn must not")
			realcli.Check(t, sc.WantFor(g.CLI), realcli.Run{Observed: realcli.Observe(t, []byte(stream))})
		})
	}
}
