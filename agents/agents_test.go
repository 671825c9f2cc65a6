package agents_test

import (
	"context"
	"encoding/json/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

func TestMain(m *testing.M) {
	testkit.RunIfChild()
	// The real CLIs start this test binary as the MCP bridge program
	// (realbridge_test.go): mcpbridge.Bridge.Server's Command is it.
	mcpbridge.RunIfBridge()
	goleak.VerifyTestMain(m)
}

// waitLong bounds what must happen (Wine starts processes slowly).
const waitLong = 60 * time.Second

func TestLookup(t *testing.T) {
	for _, name := range agents.Names() {
		a, err := agents.Lookup(name)
		require.NoError(t, err)
		assert.Equal(t, name, a.Name)
		assert.NotEmpty(t, a.Provider)
		assert.NotEmpty(t, a.Command)
		assert.NotEmpty(t, a.EnvBinary)
		assert.NotEmpty(t, a.InstallHint)
	}
	assert.Equal(t, "cursor", agents.Names()[0], "cursor is listed first")
	_, err := agents.Lookup("aider\n")
	require.Error(t, err)
	assert.Equal(t, failure.Input, failure.KindOf(err))
	assert.Contains(t, err.Error(), strings.Join(agents.Names(), ", "))
}

// installed is an agent's binary: the simulator, found through the
// agent's environment variable as Find finds it.
type installed struct {
	agent  agents.Agent
	res    discovery.Resolution
	record string
	env    []string
}

func install(t *testing.T, name string, env ...string) installed {
	t.Helper()
	a, err := agents.Lookup(name)
	require.NoError(t, err)
	dir := testkit.TempDir(t)
	bin := testkit.Install(t, dir, a.Command, testkit.Simulator)
	record := filepath.Join(dir, "record.jsonl")
	getenv := func(k string) string {
		if k == a.EnvBinary {
			return bin
		}
		return ""
	}
	res, err := a.Find(context.Background(), "", getenv, discovery.EnvFromOS(), discovery.OSFS())
	require.NoError(t, err)
	assert.Equal(t, discovery.SourceEnv, res.Source)
	return installed{agent: a, res: res, record: record,
		env: testkit.ChildEnv(testkit.Simulator, append([]string{agentsim.EnvRecord + "=" + record}, env...)...)}
}

func (in installed) records(t *testing.T) []agentsim.Record {
	t.Helper()
	data, err := os.ReadFile(in.record)
	require.NoError(t, err)
	var out []agentsim.Record
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r agentsim.Record
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		out = append(out, r)
	}
	return out
}

func TestFind(t *testing.T) {
	for _, a := range agents.All() {
		t.Run(a.Name, func(t *testing.T) {
			empty := discovery.EnvFromOS()
			empty.Path = testkit.TempDir(t) // nothing there
			_, err := a.Find(context.Background(), "", func(string) string { return "" }, empty, discovery.OSFS())
			require.Error(t, err)
			assert.Equal(t, failure.MissingCLI, failure.KindOf(err))
			assert.Contains(t, err.Error(), a.Name+" was not found")
			assert.Contains(t, err.Error(), a.InstallHint)
		})
	}
}

func TestVersion(t *testing.T) {
	in := install(t, "cursor")
	v, err := in.agent.Version(context.Background(), in.res, in.env, waitLong)
	require.NoError(t, err)
	assert.NotEmpty(t, v)

	failing := install(t, "cursor", agentsim.Scenario(agentsim.ScenarioVersionKeychainLocked))
	_, err = failing.agent.Version(context.Background(), failing.res, failing.env, waitLong)
	require.Error(t, err)
	assert.Equal(t, failure.Auth, failure.KindOf(err), "the agent's own words decide the kind: %v", err)

	slow := install(t, "cursor", agentsim.Scenario(agentsim.ScenarioSlowVersion), agentsim.EnvDelay+"=1h")
	w := testkit.NewWatch(t)
	_, err = slow.agent.Version(context.Background(), slow.res, append(slow.env, agentsim.EnvPIDDir+"="+w.PIDDir()), 300*time.Millisecond)
	require.Error(t, err)
	assert.Equal(t, failure.Timeout, failure.KindOf(err))
	w.RequireGone(waitLong)
}

func TestSessionResumesAndKeepsHistory(t *testing.T) {
	in := install(t, "cursor")
	var events []event.Event
	opts := in.agent.TurnDefaults()
	opts.Env = in.env
	opts.FirstLineTimeout = waitLong
	opts.OnEvent = func(e event.Event) { events = append(events, e) }
	s := agents.NewSession(in.agent, in.res, true, agents.Turn{Mode: turn.ModeAsk}, opts)
	defer s.Close()

	o1, err := s.Prompt(context.Background(), "first question")
	require.NoError(t, err)
	require.NotEmpty(t, o1.SessionID)
	assert.Equal(t, o1.SessionID, s.SessionID())
	_, err = s.Prompt(context.Background(), "second question")
	require.NoError(t, err)

	recs := in.records(t)
	require.Len(t, recs, 2)
	assert.NotContains(t, recs[0].Args, "--resume", "the first turn starts a session")
	assert.Contains(t, strings.Join(recs[1].Args, " "), "--resume "+o1.SessionID, "the second turn resumes it")
	assert.Equal(t, "second question", recs[1].Stdin)

	h := s.History()
	require.Len(t, h, 4)
	assert.Equal(t, "user", h[0].Role)
	assert.Equal(t, "first question", h[0].Text)
	assert.Equal(t, "assistant", h[1].Role)
	assert.NotEmpty(t, h[1].Text)
	assert.Equal(t, "second question", h[2].Text)
	assert.NotEmpty(t, events)
}

func TestSessionHistoryLeavesOutErrorResults(t *testing.T) {
	in := install(t, "cursor", agentsim.Scenario(agentsim.ScenarioAuthError))
	opts := in.agent.TurnDefaults()
	opts.Env = in.env
	opts.FirstLineTimeout = waitLong
	s := agents.NewSession(in.agent, in.res, true, agents.Turn{}, opts)
	defer s.Close()
	_, err := s.Prompt(context.Background(), "the failed prompt")
	require.Error(t, err)
	assert.Equal(t, failure.Auth, failure.KindOf(err))
	for _, m := range s.History() {
		assert.NotEqual(t, "the failed prompt", m.Text, "a failed turn's prompt is sent again by whoever retries it")
	}
}

func TestSessionCloseStopsTheTurn(t *testing.T) {
	w := testkit.NewWatch(t)
	in := install(t, "cursor", agentsim.Scenario(agentsim.ScenarioHangMidStream), agentsim.EnvPIDDir+"="+w.PIDDir())
	opts := in.agent.TurnDefaults()
	opts.Env = in.env
	opts.FirstLineTimeout = waitLong
	started := make(chan struct{}, 1)
	opts.OnEvent = func(e event.Event) {
		if e.Type == event.TypeInit {
			started <- struct{}{}
		}
	}
	s := agents.NewSession(in.agent, in.res, true, agents.Turn{}, opts)
	type result struct {
		o   turn.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := s.Prompt(context.Background(), "p")
		done <- result{o, err}
	}()
	select {
	case <-started:
	case <-time.After(waitLong):
		t.Fatal("the turn did not start")
	}
	require.NoError(t, s.Close())
	var r result
	select {
	case r = <-done:
	case <-time.After(waitLong):
		t.Fatal("Close did not stop the turn")
	}
	assert.Equal(t, failure.Cancelled, failure.KindOf(r.err))
	assert.Equal(t, turn.StatusCancelled, r.o.Status)
	w.RequireGone(waitLong)

	_, err := s.Prompt(context.Background(), "again")
	require.Error(t, err)
	assert.Equal(t, failure.Input, failure.KindOf(err), "a closed session refuses prompts")
}

func TestSessionHistoryIsBounded(t *testing.T) {
	in := install(t, "cursor", agentsim.Scenario(agentsim.ScenarioBigLine))
	opts := in.agent.TurnDefaults()
	opts.Env = in.env
	opts.FirstLineTimeout = waitLong
	s := agents.NewSession(in.agent, in.res, true, agents.Turn{}, opts)
	defer s.Close()
	for i := 0; i < 6; i++ {
		_, err := s.Prompt(context.Background(), strings.Repeat("q", 20<<10))
		require.NoError(t, err)
	}
	h := s.History()
	assert.Len(t, h, fallback.MaxTurns, "only the messages a transcript can carry")
	for _, m := range h {
		assert.LessOrEqual(t, len(m.Text), (fallback.MaxTurnChars+1)*4, "%s: only the start a transcript can carry", m.Role)
		assert.Greater(t, len(m.Text), fallback.MaxTurnChars, "%s: enough to be cut with a marker", m.Role)
	}
}

func TestInspectAll(t *testing.T) {
	in := install(t, "cursor")
	t.Setenv("PATH", testkit.TempDir(t)) // no other agent
	getenv := func(k string) string {
		if k == in.agent.EnvBinary {
			return in.res.Path
		}
		return ""
	}
	reports := agents.InspectAll(context.Background(), "", getenv, in.env, waitLong)
	require.Len(t, reports, len(agents.All()))
	for i, r := range reports {
		a := agents.All()[i]
		assert.Equal(t, a.Name, r.Name, "All's order")
		assert.Equal(t, a.Provider, r.Provider)
		if a.Name != "cursor" {
			assert.False(t, r.Found, r.Name)
			assert.Equal(t, a.InstallHint, r.Install, "how to install a missing agent")
			assert.Nil(t, r.Error, "a missing agent is no failure")
			continue
		}
		require.True(t, r.Found)
		assert.Nil(t, r.Error)
		assert.Equal(t, in.res.Path, r.Path)
		assert.Equal(t, string(discovery.SourceEnv), r.Source)
		assert.NotEmpty(t, r.Version)
		require.NotNil(t, r.Launch)
		assert.Contains(t, r.Launch.CommandLine, "--mode plan", "a plan-mode turn's launch")
	}

	broken := install(t, "cursor", agentsim.Scenario(agentsim.ScenarioVersionKeychainLocked))
	r := agents.Inspect(broken.agent, context.Background(), broken.res.Path, nil, broken.env, waitLong)
	assert.True(t, r.Found)
	require.NotNil(t, r.Error, "a found agent whose --version fails is unusable")
	assert.Equal(t, failure.Auth, r.Error.Kind)
}
