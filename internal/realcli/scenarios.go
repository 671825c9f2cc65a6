package realcli

import (
	"encoding/json/jsontext"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/modelapi"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// Scenario is one turn every real CLI plays against the stand-in: what
// the model says (its script, in each CLI's own tool names), how the turn
// runs, and what cursorkit must show for it.
type Scenario struct {
	Name  string
	Write bool              // write mode; ask otherwise
	Idle  time.Duration     // the inactivity deadline, unless 0
	Model map[string]string // each CLI's --model; none keeps its default
	// Script is what the model says to cli, Want what the turn must show.
	Script func(cli string) modelapi.Script
	Want   func(cli string) Want
}

// Want is what a scenario's turn must show.
type Want struct {
	Status string // the outcome's status: done, error
	Kind   string // the outcome's failure kind when the status is error
	// Text is what the agent said (the text events), and the result's
	// text when the turn is done.
	Text     string
	Thinking bool // the turn had thinking events
	// Tools are the tools started, by cursorkit's name, in order; each
	// must complete. ToolResults are texts the CLI's real tools gave the
	// model, in order, each in one tool result.
	Tools       []string
	ToolResults []string
	// Retries is the least number of retry warnings, each of RetryKind
	// and, when RetryStatus is set, that HTTP status.
	Retries     int
	RetryKind   string
	RetryStatus int
	FileA       string // a.txt after the turn; "" is FileA unchanged
	ModelNamed  bool   // the outcome names the model the stand-in was asked for
	// AnyUsage: usage is reported, its counts maybe not the model's
	// (Claude Code's answers without streaming count zero tokens).
	AnyUsage bool
	Stalled  bool // the stream stalled and the stand-in saw the stopped CLI leave
}

// The calls the scenarios make, in each CLI's tool names.
func readCall(cli string) modelapi.Call {
	switch cli {
	case Claude:
		return call("Read", `{"file_path":"{{workspace}}/a.txt"}`)
	case Codex:
		return modelapi.Call{Name: "exec", Code: execCommand("cat a.txt")}
	}
	return call("read_file", `{"file_path":"a.txt"}`)
}

func listCall(cli string) modelapi.Call {
	switch cli {
	case Claude:
		return call("Glob", `{"pattern":"sub/*.txt","path":"{{workspace}}"}`)
	case Codex:
		return modelapi.Call{Name: "exec", Code: execCommand("ls sub")}
	}
	return call("list_directory", `{"dir_path":"sub"}`)
}

func editCall(cli string) modelapi.Call {
	switch cli {
	case Claude:
		return call("Edit", `{"file_path":"{{workspace}}/a.txt","old_string":"alpha line one","new_string":"ALPHA LINE ONE"}`)
	case Codex:
		// Codex's apply_patch is a freeform tool, nested in exec.
		return modelapi.Call{Name: "exec", Code: "const r = await tools.apply_patch(" +
			jsString("*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha line one\n+ALPHA LINE ONE\n*** End Patch\n") + ");\ntext(r);"}
	}
	return call("replace", `{"file_path":"a.txt","instruction":"Upper-case the first line.","old_string":"alpha line one","new_string":"ALPHA LINE ONE"}`)
}

// The tool names cursorkit reports for the calls above.
func readTool(cli string) string {
	return map[string]string{Claude: "Read", Codex: "shell", Gemini: "read_file"}[cli]
}

func listTool(cli string) string {
	return map[string]string{Claude: "Glob", Codex: "shell", Gemini: "list_directory"}[cli]
}

func editTools(cli string) []string {
	return map[string][]string{Claude: {"Read", "Edit"}, Codex: {"file_change"}, Gemini: {"replace"}}[cli]
}

func call(name, input string) modelapi.Call {
	return modelapi.Call{Name: name, Input: jsontext.Value(input)}
}

// execCommand is a Codex exec call's code that returns cmd's output.
func execCommand(cmd string) string {
	return "const r = await tools.exec_command({cmd: " + jsString(cmd) + "});\ntext(r.output);"
}

func jsString(s string) string {
	b, _ := jsontext.AppendQuote(nil, s)
	return string(b)
}

func text(parts ...string) modelapi.Reply { return modelapi.Reply{Text: parts} }

func script(replies ...modelapi.Reply) func(string) modelapi.Script {
	return func(string) modelapi.Script { return modelapi.Script{Replies: replies} }
}

// perCLI is a script whose replies depend on the CLI.
func perCLI(replies func(cli string) []modelapi.Reply) func(string) modelapi.Script {
	return func(cli string) modelapi.Script { return modelapi.Script{Replies: replies(cli)} }
}

func same(w Want) func(string) Want { return func(string) Want { return w } }

// geminiModel is the error scenarios' model for Gemini CLI: with "auto",
// its default, its model policy makes three to ten attempts whatever the
// settings say (minutes of backoff); a named model takes the settings'
// two (Env).
func geminiModel() map[string]string { return map[string]string{Gemini: "gemini-2.5-flash"} }

// Scenarios returns every scenario, each a new value: the turns that
// answer, then those whose model API fails.
func Scenarios() []Scenario { return append(answering(), failing()...) }

// answering are the scenarios whose model API answers.
func answering() []Scenario {
	done := "done"
	return []Scenario{
		// Codex's stream names no model: the turn names one, which the
		// outcome reports.
		{Name: "text", Model: map[string]string{Codex: "gpt-5.5"}, Script: script(text("Hello from ", "the stand-in.")),
			Want: same(Want{Status: done, Text: "Hello from the stand-in."})},
		{Name: "thinking", Script: script(modelapi.Reply{Thinking: "The user wants a greeting.", Text: []string{"Hello, after some thought."}}),
			Want: func(cli string) Want {
				// Gemini CLI does not stream the model's thoughts.
				return Want{Status: done, Text: "Hello, after some thought.", Thinking: cli != Gemini}
			}},
		{Name: "read", Script: perCLI(func(cli string) []modelapi.Reply {
			return []modelapi.Reply{{Calls: []modelapi.Call{readCall(cli)}}, text("a.txt says alpha.")}
		}), Want: func(cli string) Want {
			return Want{Status: done, Text: "a.txt says alpha.", Tools: []string{readTool(cli)}, ToolResults: []string{"alpha line one"}}
		}},
		{Name: "list", Script: perCLI(func(cli string) []modelapi.Reply {
			return []modelapi.Reply{{Calls: []modelapi.Call{listCall(cli)}}, text("sub holds b.txt.")}
		}), Want: func(cli string) Want {
			return Want{Status: done, Text: "sub holds b.txt.", Tools: []string{listTool(cli)}, ToolResults: []string{"b.txt"}}
		}},
		{Name: "two-rounds", Script: perCLI(func(cli string) []modelapi.Reply {
			return []modelapi.Reply{{Calls: []modelapi.Call{readCall(cli)}}, {Calls: []modelapi.Call{listCall(cli)}}, text("Read and listed.")}
		}), Want: func(cli string) Want {
			return Want{Status: done, Text: "Read and listed.", Tools: []string{readTool(cli), listTool(cli)},
				ToolResults: []string{"alpha line one", "b.txt"}}
		}},
		{Name: "edit", Write: true, Script: perCLI(func(cli string) []modelapi.Reply {
			if cli == Claude {
				// Claude Code edits only a file it has read.
				return []modelapi.Reply{{Calls: []modelapi.Call{readCall(cli)}}, {Calls: []modelapi.Call{editCall(cli)}}, text("Edited a.txt.")}
			}
			return []modelapi.Reply{{Calls: []modelapi.Call{editCall(cli)}}, text("Edited a.txt.")}
		}), Want: func(cli string) Want {
			return Want{Status: done, Text: "Edited a.txt.", Tools: editTools(cli), FileA: "ALPHA LINE ONE\nalpha line two\n"}
		}},
	}
}

// failing are the scenarios whose model API fails: errors, a stall, a
// dropped connection, a malformed event.
func failing() []Scenario {
	done := "done"
	return []Scenario{
		{Name: "rate-limit", Model: geminiModel(),
			Script: script(modelapi.Reply{Error: modelapi.ErrRateLimit, RetryAfter: 1}, text("Answered after a retry.")),
			Want:   same(Want{Status: done, Text: "Answered after a retry.", Retries: 1, RetryKind: "rate_limited", RetryStatus: 429})},
		{Name: "rate-limit-exhausted", Model: geminiModel(),
			Script: script(modelapi.Reply{Error: modelapi.ErrRateLimit, RetryAfter: 1, Times: 100}),
			Want:   same(Want{Status: "error", Kind: "rate_limited", Retries: 1, RetryKind: "rate_limited", RetryStatus: 429})},
		{Name: "unauthorized", Model: geminiModel(),
			Script: script(modelapi.Reply{Error: modelapi.ErrUnauthorized, Times: 100}),
			Want: func(cli string) Want {
				if cli == Gemini {
					return Want{Status: "error", Kind: "auth"} // not retried
				}
				return Want{Status: "error", Kind: "auth", Retries: 1, RetryKind: "auth", RetryStatus: 401}
			}},
		{Name: "forbidden", Model: geminiModel(),
			Script: script(modelapi.Reply{Error: modelapi.ErrForbidden, Times: 100}),
			Want: func(cli string) Want {
				if cli == Codex {
					return Want{Status: "error", Kind: "auth", Retries: 1, RetryKind: "auth", RetryStatus: 403}
				}
				return Want{Status: "error", Kind: "auth"} // not retried
			}},
		{Name: "overloaded", Model: geminiModel(),
			Script: script(modelapi.Reply{Error: modelapi.ErrOverloaded, Times: 100}),
			Want: func(cli string) Want {
				w := Want{Status: "error", Kind: "rate_limited", Retries: 1, RetryKind: "rate_limited"}
				if cli == Codex {
					w.Retries = 0 // Codex retries a 503 without a notice
				}
				return w
			}},
		{Name: "stall", Idle: 4 * time.Second, Model: geminiModel(),
			Script: script(modelapi.Reply{Text: []string{"Starting to answer", " and then nothing."}, Fault: modelapi.FaultStall, Times: 100}),
			Want:   same(Want{Status: "error", Kind: "timeout", Stalled: true})},
		{Name: "drop", Model: geminiModel(),
			Script: script(modelapi.Reply{Text: []string{"Cut ", "off."}, Fault: modelapi.FaultDrop}, text("Answered after a dropped connection.")),
			Want: func(cli string) Want {
				switch cli {
				case Codex:
					// "Reconnecting... 1/1 (stream disconnected before completion: ...)"
					return Want{Status: "done", Text: "Answered after a dropped connection.", Retries: 1, RetryKind: "network"}
				case Gemini:
					// "[API Error: terminated]": a broken response is not retried.
					return Want{Status: "error", Kind: "network"}
				}
				// Claude Code asks again without streaming, and says nothing of it.
				return Want{Status: "done", Text: "Answered after a dropped connection.", AnyUsage: true}
			}},
		{Name: "malformed", Model: geminiModel(),
			Script: script(modelapi.Reply{Text: []string{"Garbled ", "answer."}, Fault: modelapi.FaultMalformed, Times: 100}),
			Want: func(cli string) Want {
				switch cli {
				case Codex:
					// Codex skips an event it cannot parse.
					return Want{Status: "done", Text: "Garbled answer."}
				case Gemini:
					// "[API Error: Incomplete JSON segment at the end]"
					return Want{Status: "error", Kind: "network"}
				}
				// Claude Code drops the stream and asks again without streaming.
				return Want{Status: "done", Text: "Garbled answer.", AnyUsage: true}
			}},
	}
}

// WantFor is what the scenario's turn of cli must show.
func (s Scenario) WantFor(cli string) Want {
	w := s.Want(cli)
	// Codex's stream names no model: cursorkit reports the one the turn
	// asked for, if any.
	w.ModelNamed = cli != Codex || s.Model[cli] != ""
	return w
}

// Prompt is every real turn's prompt: the script decides what the model
// does, so it only has to be recognisable where it must never appear.
const (
	Prompt     = "Follow the script. " + PromptMark + "-4f1e"
	PromptMark = "PROMPT-SECRET"
)

// FirstLine bounds the wait for a real CLI's first stdout line, beyond
// the agents' default 30 s: under the whole suite's load on two cores,
// Claude Code took longer to print its init event. It only ends a hung
// start; nothing is timed.
const FirstLine = 2 * time.Minute

// WineLacks is why the real CLIs' turns do not run under Wine 8 (package
// agents' TestRealCLIsUnderWine shows how far they get).
const WineLacks = "DiscardVirtualMemory, which claude.exe calls, and SQLite's file locks, on which codex.exe fails (TestRealCLIsUnderWine)"

// EachScenario runs play as a parallel subtest of t, named CLI/SCENARIO,
// for every CLI and scenario; under Wine each skips (WineLacks).
func EachScenario(t *testing.T, play func(t *testing.T, cli string, sc Scenario)) {
	for _, cli := range CLIs() {
		for _, sc := range Scenarios() {
			t.Run(cli+"/"+sc.Name, func(t *testing.T) {
				t.Parallel()
				testkit.SkipIfWine(t, WineLacks)
				play(t, cli, sc)
			})
		}
	}
}

// AwaitLeave waits until the stand-in recorded a request that took a
// reply: a stalled stream's request is recorded once the CLI left it.
func AwaitLeave(t testing.TB, api *modelapi.Server) {
	t.Helper()
	testkit.Eventually(t, "the stand-in to see the stalled CLI leave", 10*time.Second, func() bool {
		return slices.ContainsFunc(api.Requests(), func(r modelapi.Request) bool { return r.Reply >= 0 })
	})
}

// Run is one played scenario: what cursorkit showed, what the stand-in
// was asked, and the workspace.
type Run struct {
	Observed
	Requests  []modelapi.Request
	Workspace string
}

// Check asserts everything w says of run (the stand-in's records only
// when it has some: a golden stream's replay has none).
func Check(t *testing.T, w Want, run Run) {
	t.Helper()
	o := run.Observed
	assert.Equal(t, w.Status, o.Outcome.Status, "outcome; the stream:\n%s", o)
	assert.Equal(t, w.Kind, o.Outcome.Kind, "the failure kind: %s", o.Outcome.Message)
	assert.Len(t, o.Init, 1, "one init event")
	if w.Status == "done" {
		assert.Equal(t, w.Text, o.Text, "what the agent said")
		if assert.Len(t, o.Results, 1, "one result event") {
			assert.False(t, o.Results[0].IsError)
			assert.Equal(t, w.Text, o.Results[0].Text, "the result's text")
		}
		u := o.Outcome.Usage
		if assert.True(t, u.Reported, "the usage is reported") {
			assert.NotNil(t, u.InputTokens, "input tokens")
			if assert.NotNil(t, u.OutputTokens, "output tokens") && !w.AnyUsage {
				assert.GreaterOrEqual(t, *u.OutputTokens, int64(modelapi.OutputTokens))
			}
		}
	}
	if len(o.Init) == 1 && o.Outcome.SessionID != nil {
		assert.Equal(t, o.Init[0].SessionID, *o.Outcome.SessionID, "the session to resume")
	}
	if w.Thinking {
		assert.Positive(t, o.Thinking, "thinking events")
	} else {
		assert.Zero(t, o.Thinking, "thinking events")
	}
	assert.Equal(t, w.Tools, Names(o.Started), "tools started")
	assert.Equal(t, w.Tools, Names(o.Completed), "tools completed")
	for _, c := range o.Completed {
		if assert.NotNil(t, c.Status, "%s's status", c.Name) {
			assert.Contains(t, []string{"success", "completed"}, *c.Status, "%s's status", c.Name)
		}
	}
	retries := o.Retries()
	assert.GreaterOrEqual(t, len(retries), w.Retries, "retry warnings: %v", o.Warnings)
	for _, r := range retries {
		if w.RetryKind != "" {
			assert.Equal(t, w.RetryKind, r.Retry.Kind, "a retry's kind: %s", r.Message)
		}
		if w.RetryStatus != 0 {
			assert.Equal(t, w.RetryStatus, r.Retry.Status, "a retry's status: %s", r.Message)
		}
	}
	assert.Equal(t, len(retries) > 0, w.Retries > 0, "retry warnings: %v", o.Warnings)
	if run.Workspace != "" {
		want := w.FileA
		if want == "" {
			want = FileA
		}
		got, err := os.ReadFile(filepath.Join(run.Workspace, "a.txt"))
		require.NoError(t, err)
		assert.Equal(t, want, strings.ReplaceAll(string(got), "\r\n", "\n"), "a.txt after the turn")
	}
	if run.Requests != nil {
		checkRequests(t, w, run)
	}
}

// checkRequests asserts what the stand-in saw: the tool results, no
// request after the script's end, the model, a stalled CLI gone.
func checkRequests(t *testing.T, w Want, run Run) {
	t.Helper()
	var last modelapi.Request
	for _, r := range run.Requests {
		assert.False(t, r.Exhausted, "a request after the script's last reply: %s %s", r.Method, r.Path)
		if r.Reply >= 0 {
			last = r
		}
	}
	if len(w.ToolResults) > 0 {
		require.Len(t, last.ToolResults, len(w.ToolResults), "the tool results of the last model request")
		for i, want := range w.ToolResults {
			assert.Contains(t, last.ToolResults[i], want, "tool result %d", i)
		}
	}
	if w.Status == "done" && w.ModelNamed {
		assert.Equal(t, last.Model, run.Outcome.Model, "the outcome's model is the one that answered")
	}
	if w.Stalled {
		left := func(r modelapi.Request) bool { return r.Reply >= 0 && r.Status == 200 }
		assert.True(t, slices.ContainsFunc(run.Requests, left), "the stand-in saw the stalled CLI leave")
	}
}
