package cursor_test

import (
	"context"
	"encoding/json/jsontext"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/mcpstage"
	"github.com/cursorkit/cursorkit/turn"
)

// TestRunWithBridge is a turn with an embedder's tool, end to end: a
// bridge of one Go tool, its program (this test binary, through TestMain's
// mcpbridge.RunIfBridge) staged into a worktree's .cursor/mcp.json with
// mcpstage, and the Cursor simulator, which starts what is staged and
// calls the tool over MCP as the real CLI does.
func TestRunWithBridge(t *testing.T) {
	ctx := context.Background()
	ws := testkit.TempDir(t)
	inputs := make(chan jsontext.Value, 1)
	var refusedMu sync.Mutex
	var refused []error
	b, err := mcpbridge.Open(ctx, []mcpbridge.Tool{{
		Name:        "lookup_word",
		Description: "What a word means.",
		InputSchema: jsontext.Value(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`),
		Handle: func(_ context.Context, input jsontext.Value) (string, error) {
			select {
			case inputs <- input:
			default: // a second call: the assertions below count one
			}
			return "ossify: to turn into bone", nil
		},
	}}, mcpbridge.Options{Dir: testkit.TempDir(t), OnRefused: func(err error) {
		refusedMu.Lock()
		defer refusedMu.Unlock()
		refused = append(refused, err)
	}})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	srv := b.Server()

	bin := simBinary(t)
	w := testkit.NewWatch(t)
	scratch := testkit.TempDir(t)
	record, mcpLog := filepath.Join(scratch, "record.ndjson"), filepath.Join(scratch, "mcp.ndjson")
	opts := cursor.TurnDefaults()
	opts.Dir = ws
	opts.Env = testkit.ChildEnv(testkit.Simulator, agentsim.Scenario(agentsim.ScenarioMCPCall),
		agentsim.EnvMCPArgs+`={"word":"ossify"}`, agentsim.EnvMCPLog+"="+mcpLog,
		agentsim.EnvPIDDir+"="+w.PIDDir(), agentsim.EnvRecord+"="+record)
	var events []event.Event
	opts.OnEvent = func(e event.Event) { events = append(events, e) }

	var o turn.Outcome
	var key string
	entry := mcpstage.Entry{Command: srv.Command, Args: srv.Args, Env: srv.Env}
	warnings, err := mcpstage.Run(ctx, ws, []mcpstage.Entry{entry}, mcpstage.RunOptions{}, func(ctx context.Context, leases []mcpstage.Lease) error {
		lease := leases[0]
		key = lease.Key
		bridge := srv
		bridge.Name = lease.Key // the server Cursor names in each call
		var err error
		o, err = cursor.Run(ctx, bin, cursor.Turn{Prompt: "What does ossify mean?", Mode: turn.ModeAsk, Bridge: &bridge}, opts)
		return err
	})
	require.NoError(t, err)
	assert.Empty(t, warnings)
	assert.Equal(t, turn.StatusDone, o.Status, "the turn is done")
	w.RequireGone(10 * time.Second) // the simulator and the bridge program it started

	recs, err := agentsim.ReadRecords(record)
	require.NoError(t, err)
	require.Equal(t, 1, len(recs), "one invocation of the simulator")
	assert.True(t, recs[0].ApproveMCPs, "the turn approves the staged servers")
	require.NotNil(t, recs[0].ProjectMCPConfig, "the simulator saw the staged entry")
	assert.Contains(t, *recs[0].ProjectMCPConfig, key)

	runs, err := agentsim.ReadMCPRuns(mcpLog)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	run := runs[0]
	assert.Empty(t, run.Error)
	assert.Equal(t, key, run.Server)
	assert.Equal(t, srv.Command, run.Command, "the simulator started the bridge program")
	assert.Equal(t, srv.Args, run.Args)
	assert.Equal(t, []string{mcpbridge.EnvSession}, run.EnvNames, "the entry's env carries the session file's path only")
	assert.NotZero(t, run.PID)
	assert.Equal(t, []string{"fn_lookup_word"}, run.Tools, "the session's tools, exactly")
	assert.Equal(t, "fn_lookup_word", run.Tool)
	assert.Equal(t, "ossify: to turn into bone", run.Result)
	assert.False(t, run.IsError)
	assert.Empty(t, run.StopError, "the bridge program exits once the simulator closes its stdin")

	select {
	case input := <-inputs:
		assert.JSONEq(t, `{"word":"ossify"}`, string(input), "the handler got the call's input")
	default:
		t.Fatal("the tool's handler was never called")
	}
	refusedMu.Lock()
	assert.Empty(t, refused, "the bridge refused nothing")
	refusedMu.Unlock()

	var tools []event.Tool
	for _, e := range events {
		if e.Type == event.TypeToolStarted || e.Type == event.TypeToolCompleted {
			if e.Tool.Name == "lookup_word" {
				tools = append(tools, *e.Tool)
			}
			assert.NotEqual(t, "mcp", e.Tool.Name, "a bridged call is the tool's own")
		}
	}
	require.Len(t, tools, 2)
	assert.Equal(t, event.Tool{CallID: agentsim.CallIDMCP, Name: "lookup_word", Args: jsontext.Value(`{"word":"ossify"}`)}, tools[0])
	assert.Equal(t, event.Tool{CallID: agentsim.CallIDMCP, Name: "lookup_word", Args: jsontext.Value(`{"word":"ossify"}`),
		Status: "success", Result: jsontext.Value(`"ossify: to turn into bone"`)}, tools[1])
	assert.Equal(t, event.TypeResult, events[len(events)-1].Type)

	config, err := os.ReadFile(filepath.Join(ws, ".cursor", "mcp.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		require.NoError(t, err)
		assert.NotContains(t, string(config), key, "the staged entry is gone after the turn")
	}
}
