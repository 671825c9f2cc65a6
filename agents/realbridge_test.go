package agents_test

import (
	"cmp"
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/modelapi"
	"github.com/cursorkit/cursorkit/internal/realcli"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// The bridged tool of the real-CLI bridge tests, and what it answers.
const (
	bridgeWord       = "ossify"
	bridgeDefinition = "ossify: to turn into bone (DEF-7c1)"
	bridgeFailure    = "the dictionary has no entry for ossify (ERR-3d2)"
)

// bridgeCall is the model's call of the tool name (fn_NAME) of the
// bridge's server, in cli's own spelling: Claude Code's
// mcp__SERVER__fn_NAME, Gemini CLI's mcp_SERVER_fn_NAME, and for Codex a
// call of its code-mode exec tool that awaits tools.mcp__SERVER__fn_NAME
// (the only way Codex 0.171 offers MCP tools to the model) and returns
// the result.
func bridgeCall(cli, server, name string) modelapi.Call {
	input := `{"word":"` + bridgeWord + `"}`
	switch cli {
	case realcli.Claude:
		return modelapi.Call{Name: "mcp__" + server + "__" + name, Input: jsontext.Value(input)}
	case realcli.Codex:
		return modelapi.Call{Name: "exec", Code: "const r = await tools.mcp__" + server + "__" + name + "(" + input + ");\ntext(JSON.stringify(r));"}
	}
	return modelapi.Call{Name: "mcp_" + server + "_" + name, Input: jsontext.Value(input)}
}

// oddDir is a new directory whose name holds what every CLI's config
// must quote (a quote, a backslash, a space): the bridge's paths are in
// it, and the bridge program finds its session file only if the CLI read
// the path back exactly.
func oddDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testkit.TempDir(t), `q"b\s 1`)
	if runtime.GOOS == "windows" {
		dir = filepath.Join(testkit.TempDir(t), "q b 1") // Windows names hold no '"', and '\\' separates
	}
	require.NoError(t, os.Mkdir(dir, 0o700))
	return dir
}

// TestRealBridge runs a turn of every real CLI with an MCP tool bridge
// publishing one Go tool, lookup_word, the CLI starting this test binary
// as the bridge program (TestMain runs mcpbridge.RunIfBridge), against the
// model-API stand-in scripted to call it. The CLI must list the tool to
// the model, call it with the model's input, and carry its result back to
// the model; the turn is done and its events show the call by the tool's
// own name with its input and result, in ask, write and plan mode (Gemini
// refuses plan: it offers no MCP tool there); a handler's error is the
// call's error, and the turn goes on. A call of a tool the bridge does
// not publish never reaches the handler: Claude Code's and Gemini CLI's
// turn fails as a policy failure at the call; Codex's code mode has no
// such function, which the model is told, and no MCP call is made.
func TestRealBridge(t *testing.T) {
	tests := []struct {
		name  string
		mode  turn.Mode // ask when ""
		tool  string    // the agent-facing name the model calls
		ok    bool
		fails bool // the handler returns an error: a tool error, the turn goes on
	}{
		{name: "call", tool: "fn_lookup_word", ok: true},
		{name: "call-write", mode: turn.ModeWrite, tool: "fn_lookup_word", ok: true},
		{name: "call-plan", mode: turn.ModePlan, tool: "fn_lookup_word", ok: true},
		{name: "tool-error", tool: "fn_lookup_word", ok: true, fails: true},
		{name: "unpublished", tool: "fn_forget_word"},
	}
	for _, cli := range realcli.CLIs() {
		for _, tt := range tests {
			t.Run(cli+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				testkit.SkipIfWine(t, realcli.WineLacks)
				bin := realcli.Bin(t, cli)

				var mu sync.Mutex
				var inputs []string
				b, err := mcpbridge.Open(context.Background(), []mcpbridge.Tool{{
					Name: "lookup_word", Description: "Looks a word up in the dictionary.",
					InputSchema: jsontext.Value(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`),
					Handle: func(_ context.Context, input jsontext.Value) (string, error) {
						mu.Lock()
						defer mu.Unlock()
						inputs = append(inputs, string(input))
						if tt.fails {
							return "", errors.New(bridgeFailure)
						}
						return bridgeDefinition, nil
					},
				}}, mcpbridge.Options{Dir: oddDir(t)})
				require.NoError(t, err)
				t.Cleanup(func() { assert.NoError(t, b.Close()) })
				server := b.Server()

				// The tool as the model sees it. Codex 0.171 names only the
				// server, among the "deferred tool namespaces" of its code
				// mode's text: its exec tool finds the server's tools when
				// the code runs (a tool the server did not list is "not a
				// function" there, as the unpublished case shows).
				offered := map[string]string{realcli.Claude: "mcp__" + server.Name + "__fn_lookup_word",
					realcli.Codex: "mcp__" + server.Name, realcli.Gemini: "mcp_" + server.Name + "_fn_lookup_word"}[cli]
				script := modelapi.Script{Replies: []modelapi.Reply{{Calls: []modelapi.Call{bridgeCall(cli, server.Name, tt.tool)}},
					{Text: []string{"It means to turn into bone."}}}, Watch: []string{offered}}
				ws := realcli.Workspace(t, testkit.TempDir(t))
				api, err := modelapi.Start(script, map[string]string{"workspace": ws})
				require.NoError(t, err)
				t.Cleanup(func() { assert.NoError(t, api.Close()) })
				home := testkit.TempDir(t)

				a, err := agents.Lookup(cli)
				require.NoError(t, err)
				res, err := a.Find(context.Background(), bin, nil, discovery.EnvFromOS(), discovery.OSFS())
				require.NoError(t, err)
				opts := a.TurnDefaults()
				opts.Env, opts.Dir = realcli.Env(t, cli, api.URL(), home), ws
				opts.TotalTimeout, opts.FirstLineTimeout = 3*time.Minute, realcli.FirstLine
				req := agents.Turn{Prompt: realcli.Prompt, Mode: cmp.Or(tt.mode, turn.ModeAsk), Bridge: &server}
				if cli == realcli.Gemini && tt.mode == turn.ModePlan {
					// Gemini's plan mode offers no MCP tool: refused.
					_, _, err := runAndWrite(t, a, res, req, opts)
					assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
					assert.Empty(t, api.Requests(), "gemini never started")
					return
				}

				stream, o, err := runAndWrite(t, a, res, req, opts)
				run := realcli.Observe(t, []byte(stream))
				t.Cleanup(func() {
					if t.Failed() {
						t.Logf("the stream:\n%s\nthe stand-in's requests:", run)
						for _, r := range api.Requests() {
							t.Logf("  %s %s reply %d status %d tools %q mentioned %q results %q", r.API, r.Path, r.Reply, r.Status, r.Tools, r.Mentioned, r.ToolResults)
						}
					}
				})
				assert.NotContains(t, stream, realcli.PromptMark, "the stream quotes the prompt")
				for _, l := range run.Lines {
					if strings.Contains(l, `"tool_`) {
						t.Logf("%s: %s", cli, l)
					}
				}
				mu.Lock()
				ran := slices.Clone(inputs)
				mu.Unlock()
				// The model's requests: those the script answered.
				reqs := slices.DeleteFunc(api.Requests(), func(r modelapi.Request) bool { return r.Reply < 0 })
				if !tt.ok {
					assert.Empty(t, ran, "the handler ran for a tool the bridge does not publish")
					if cli == realcli.Codex {
						// Codex's code mode offers the model only the tools the
						// server listed: the call is a script error that
						// Codex hands the model, and no MCP call is made.
						require.NoError(t, err)
						assert.Empty(t, run.Started, "tools started")
						require.Len(t, reqs, 2)
						if assert.Len(t, reqs[1].ToolResults, 1) {
							t.Logf("%s: the model got %q", cli, reqs[1].ToolResults[0])
							assert.Contains(t, reqs[1].ToolResults[0], "tools.mcp__"+server.Name+"__"+tt.tool+" is not a function")
						}
						return
					}
					require.Error(t, err)
					t.Logf("%s: %v", cli, err)
					assert.Equal(t, failure.Policy, failure.KindOf(err), "%v", err)
					assert.Contains(t, err.Error(), tt.tool)
					return
				}
				require.NoError(t, err, "outcome %+v", o)
				assert.Equal(t, "done", run.Outcome.Status)
				if assert.Len(t, ran, 1, "the handler's calls") {
					assert.JSONEq(t, `{"word":"`+bridgeWord+`"}`, ran[0])
				}
				assert.Equal(t, []string{"lookup_word"}, realcli.Names(run.Started), "tools started")
				assert.Equal(t, []string{"lookup_word"}, realcli.Names(run.Completed), "tools completed")
				want, status := bridgeDefinition, map[string]string{realcli.Claude: "success", realcli.Codex: "completed", realcli.Gemini: "success"}[cli]
				if tt.fails {
					want, status = bridgeFailure, map[string]string{realcli.Claude: "error", realcli.Codex: "failed", realcli.Gemini: "error"}[cli]
				}
				if len(run.Started) == 1 && len(run.Completed) == 1 {
					assert.JSONEq(t, `{"word":"`+bridgeWord+`"}`, string(run.Started[0].Args))
					var text string
					require.NoError(t, json.Unmarshal(run.Completed[0].Result, &text), "the result is the tool's text: %s", run.Completed[0].Result)
					assert.Equal(t, want, text)
					if assert.NotNil(t, run.Completed[0].Status) {
						assert.Equal(t, status, *run.Completed[0].Status, "the call's status as the CLI reports it")
					}
				}
				require.Len(t, reqs, 2, "the model's requests: the call, then the answer")
				assert.Equal(t, []string{offered}, reqs[0].Mentioned, "the tool offered to the model")
				if cli != realcli.Codex {
					assert.Contains(t, reqs[0].Tools, offered, "the tool offered to the model as a tool")
				}
				last := reqs[1]
				if assert.Len(t, last.ToolResults, 1, "the tool results the model got") {
					assert.Contains(t, last.ToolResults[0], want, "the tool's result reached the model")
				}
			})
		}
	}
}
