package cursor_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
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
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/probe"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

// TestMain makes the test binary an MCP bridge program or the
// cursor-agent simulator when started as one, and, for ExampleRun,
// installs it as the Cursor CLI that CURSOR_AGENT_BIN names, with its
// caches in a scratch directory. The bridge check comes first: the
// simulator starts the bridge program with its own environment, which
// names the simulator's role too.
func TestMain(m *testing.M) {
	mcpbridge.RunIfBridge()
	testkit.RunIfChild()
	scratch, err := os.MkdirTemp("", "cursor-test-")
	if err != nil {
		log.Fatal(err)
	}
	bin, err := testkit.InstallFile(filepath.Join(scratch, "bin"), "cursor-agent", testkit.Simulator)
	if err != nil {
		log.Fatal(err)
	}
	os.Setenv(cursor.EnvBinary, bin)
	os.Setenv("XDG_CACHE_HOME", filepath.Join(scratch, "cache"))
	os.Setenv("LOCALAPPDATA", filepath.Join(scratch, "cache"))
	code := m.Run()
	_ = os.RemoveAll(scratch) // best effort: Wine cannot remove trees this way
	os.Exit(code)
}

// An orchestrator's supervised Cursor turn: find and check the CLI once,
// then run turns. The prompt travels on the agent's stdin only, and the
// whole process tree is gone when Run returns.
func ExampleRun() {
	ctx := context.Background()
	report, err := probe.Probe(ctx, probe.Config{Override: ""}) // "": CURSOR_AGENT_BIN, then PATH
	if err != nil {
		log.Fatalf("%s: %v", failure.KindOf(err), err) // missing_cli, setup (an old build), ...
	}
	opts := cursor.TurnDefaults() // first line 30s, inactivity 120s, graces 5s and 15s
	opts.OnEvent = func(e event.Event) {
		if e.Type == event.TypeText {
			fmt.Print(e.Text)
		}
	}
	req := cursor.Turn{Prompt: "Summarise README.md", Mode: turn.ModeAsk}
	outcome, err := cursor.Run(ctx, report.Binary, req, opts)
	if err != nil {
		log.Fatalf("%s: %v", failure.KindOf(err), err) // timeout, policy, auth, quota, ...
	}
	fmt.Println("\nstatus:", outcome.Status, "- resumable:", outcome.SessionID != "")
	// Output:
	// I'll read the README first.
	//
	// The README says hello.
	// status: done - resumable: true
}

// simBinary installs the simulator as cursor-agent in a new directory.
func simBinary(t *testing.T) cursor.Binary {
	t.Helper()
	path := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
	return cursor.Binary{Resolution: discovery.Resolution{Path: path, Name: filepath.Base(path), Kind: kindOf(), Source: discovery.SourceOverride, Candidate: path}, Configured: true}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		scenario string
		req      cursor.Turn
		opts     func(*turn.Options)
		kind     failure.Kind
		check    func(t *testing.T, o turn.Outcome, events []event.Event, record []agentsim.Record)
	}{
		{name: "a turn in each mode sends the mode's flags", req: cursor.Turn{Prompt: "p", Mode: turn.ModeWrite, Model: "gpt-5"},
			check: func(t *testing.T, o turn.Outcome, _ []event.Event, record []agentsim.Record) {
				require.NotEmpty(t, record)
				argv := strings.Join(record[len(record)-1].Args, " ")
				assert.Contains(t, argv, "--print --output-format stream-json --force --trust --model gpt-5")
				assert.Equal(t, "p", record[len(record)-1].Stdin, "the prompt travels on stdin only")
				assert.True(t, o.Usage.Reported)
			}},
		{name: "a sandboxed consult turn sends the task profile", req: cursor.Turn{Prompt: "p", Mode: turn.ModeAsk, Sandboxed: true},
			check: func(t *testing.T, o turn.Outcome, _ []event.Event, record []agentsim.Record) {
				require.NotEmpty(t, record)
				r := record[len(record)-1]
				assert.Contains(t, strings.Join(r.Args, " "), "--sandbox enabled --disable-project-configs --single-turn --disable-auto-update --allowed-tools read_tool_call,grep_tool_call,glob_tool_call,ls_tool_call --mode ask --trust")
				assert.Equal(t, "enabled", r.Sandbox)
				assert.Equal(t, cursor.SandboxedTools(turn.ModeAsk), r.AllowedTools)
			}},
		{name: "an unavailable sandbox is the sandbox kind", scenario: agentsim.ScenarioSandboxUnavailable,
			req: cursor.Turn{Prompt: "p", Mode: turn.ModeWrite, Sandboxed: true}, kind: failure.Sandbox},
		{name: "a write outside the workspace is rejected by the sandbox, the turn goes on", scenario: agentsim.ScenarioSandboxWriteOutside,
			req: cursor.Turn{Prompt: "p", Mode: turn.ModeWrite, Sandboxed: true},
			check: func(t *testing.T, o turn.Outcome, events []event.Event, _ []agentsim.Record) {
				var statuses []string
				for _, e := range events {
					if e.Type == event.TypeToolCompleted && e.Tool.Name == "edit" {
						statuses = append(statuses, e.Tool.Status)
					}
				}
				assert.Equal(t, []string{"success", "rejected"}, statuses)
			}},
		{name: "a sandboxed consult turn refuses an edit as policy", scenario: agentsim.ScenarioSandboxWriteOutside,
			req: cursor.Turn{Prompt: "p", Mode: turn.ModeAsk, Sandboxed: true}, kind: failure.Policy},
		{name: "the MCP servers' tools run, approved with --approve-mcps", scenario: agentsim.ScenarioMCPTool,
			req:  cursor.Turn{Prompt: "p", Mode: turn.ModeWrite, MCPServers: []string{"cursorkit-tools-1"}},
			opts: func(o *turn.Options) { o.Env = append(o.Env, agentsim.EnvMCPServer+"=cursorkit-tools-1") },
			check: func(t *testing.T, o turn.Outcome, events []event.Event, record []agentsim.Record) {
				require.NotEmpty(t, record)
				r := record[len(record)-1]
				assert.Contains(t, strings.Join(r.Args, " "), "--force --trust --approve-mcps")
				assert.True(t, r.ApproveMCPs)
				var mcp []event.Event
				for _, e := range events {
					if (e.Type == event.TypeToolStarted || e.Type == event.TypeToolCompleted) && e.Tool.Name == "mcp" {
						mcp = append(mcp, e)
					}
				}
				require.Len(t, mcp, 2)
				assert.Equal(t, event.TypeToolCompleted, mcp[1].Type)
				assert.Equal(t, "success", mcp[1].Tool.Status)
				assert.Contains(t, string(mcp[1].Tool.Args), `"providerIdentifier":"cursorkit-tools-1"`, "the completed call keeps the started call's args")
			}},
		{name: "another MCP server's call stops the tree as policy", scenario: agentsim.ScenarioMCPTool,
			req:  cursor.Turn{Prompt: "p", Mode: turn.ModeWrite, MCPServers: []string{"cursorkit-tools-1"}},
			opts: func(o *turn.Options) { o.Env = append(o.Env, agentsim.EnvMCPServer+"=github") }, kind: failure.Policy},
		{name: "without MCP servers nothing is approved", scenario: agentsim.ScenarioMCPTool,
			req:  cursor.Turn{Prompt: "p", Mode: turn.ModeWrite},
			opts: func(o *turn.Options) { o.Env = append(o.Env, agentsim.EnvMCPServer+"=github") },
			check: func(t *testing.T, o turn.Outcome, _ []event.Event, record []agentsim.Record) {
				require.NotEmpty(t, record)
				assert.NotContains(t, record[len(record)-1].Args, "--approve-mcps")
				assert.False(t, record[len(record)-1].ApproveMCPs)
			}},
		{name: "a tool outside the mode stops the tree as policy", scenario: agentsim.ScenarioDisallowedTool, req: cursor.Turn{Prompt: "p"}, kind: failure.Policy},
		{name: "an error result is the agent's failure", scenario: agentsim.ScenarioUsageLimit, req: cursor.Turn{Prompt: "p"}, kind: failure.Quota},
		{name: "a hung agent hits the first-line deadline", scenario: agentsim.ScenarioHangBeforeOutput, req: cursor.Turn{Prompt: "p"},
			opts: func(o *turn.Options) { o.FirstLineTimeout = 300 * time.Millisecond }, kind: failure.Timeout},
		{name: "a refused model starts nothing", req: cursor.Turn{Prompt: "p", Model: "auto"}, kind: failure.Input,
			check: func(t *testing.T, o turn.Outcome, events []event.Event, record []agentsim.Record) {
				assert.Empty(t, events)
				assert.Empty(t, record)
				assert.Equal(t, supervise.SpawnFailed, o.Process.Ending)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := simBinary(t)
			w := testkit.NewWatch(t)
			record := filepath.Join(testkit.TempDir(t), "record.ndjson")
			opts := cursor.TurnDefaults()
			opts.Env = testkit.ChildEnv(testkit.Simulator, agentsim.Scenario(tt.scenario),
				agentsim.EnvPIDDir+"="+w.PIDDir(), agentsim.EnvRecord+"="+record)
			var events []event.Event
			opts.OnEvent = func(e event.Event) { events = append(events, e) }
			if tt.opts != nil {
				tt.opts(&opts)
			}
			o, err := cursor.Run(context.Background(), bin, tt.req, opts)
			assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
			assert.Equal(t, tt.kind, o.Kind)
			if tt.check != nil {
				recs, _ := agentsim.ReadRecords(record)
				tt.check(t, o, events, recs)
			}
			w.RequireGone(10 * time.Second)
		})
	}
}

// TestRunRetriesAVanishedCursorAgent: cursor-agent found on PATH but gone
// at start, nothing configured: the cursor candidate runs the turn, once,
// with a fell_back warning.
func TestRunRetriesAVanishedCursorAgent(t *testing.T) {
	pathDir := testkit.TempDir(t)
	testkit.Install(t, pathDir, "cursor", testkit.Simulator)
	t.Setenv("PATH", pathDir)
	gone := filepath.Join(testkit.TempDir(t), "cursor-agent")
	if kindOf() == discovery.Native {
		gone += ".exe"
	}
	bin := cursor.Binary{Resolution: discovery.Resolution{Path: gone, Name: filepath.Base(gone), Kind: kindOf(), Source: discovery.SourcePath, Candidate: "cursor-agent"}}
	w := testkit.NewWatch(t)
	opts := cursor.TurnDefaults()
	opts.Env = testkit.ChildEnv(testkit.Simulator, agentsim.EnvPIDDir+"="+w.PIDDir())
	var warned []string
	opts.OnEvent = func(e event.Event) {
		if e.Type == event.TypeWarning {
			warned = append(warned, e.Warning.Code)
		}
	}
	o, err := cursor.Run(context.Background(), bin, cursor.Turn{Prompt: "p"}, opts)
	require.NoError(t, err)
	assert.Equal(t, turn.StatusDone, o.Status)
	require.NotEmpty(t, o.Warnings)
	assert.Equal(t, cursor.WarnFellBack, o.Warnings[0].Code)
	assert.Contains(t, warned, cursor.WarnFellBack)

	bin.Configured = true
	_, err = cursor.Run(context.Background(), bin, cursor.Turn{Prompt: "p"}, opts)
	assert.Equal(t, failure.MissingCLI, failure.KindOf(err), "a configured binary is never replaced")
	w.RequireGone(10 * time.Second)
}

// kindOf is how a test binary installed here is launched.
func kindOf() discovery.Kind {
	if runtime.GOOS == "windows" {
		return discovery.Native
	}
	return discovery.POSIX
}
