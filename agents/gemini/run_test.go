package gemini_test

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

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

// TestRun runs turns end to end through the real supervisor: a stand-in
// gemini (the replay simulator, installed as `gemini`, gemini.exe on
// Windows) found by discovery, planned by shim, run by turn.Run with this
// package's Args and Decoder.
func TestRun(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		req    gemini.Turn
		env    []string
		opts   func(*turn.Options)
		kind   failure.Kind
		check  func(t *testing.T, o turn.Outcome, events []event.Event, rec agentsim.Record)
	}{
		{name: "a good turn", stream: "turn-tools.jsonl", req: gemini.Turn{Mode: turn.ModeAsk, Model: "gemini-2.5-pro"},
			check: func(t *testing.T, o turn.Outcome, events []event.Event, rec agentsim.Record) {
				assert.Equal(t, []string{"--output-format", "stream-json", "--skip-trust", "--approval-mode", "default",
					"--model", "gemini-2.5-pro", "-p", ""}, rec.Args, "an empty -p arrives as an empty argument")
				assert.Equal(t, "SECRET PROMPT", rec.Stdin, "the prompt travels on stdin only")
				assert.Equal(t, "5f0c7b7e-2a51-4f3e-9d0e-7f1f4b2d9a10", o.SessionID)
				assert.Equal(t, "gemini-2.5-pro", o.Model)
				assert.True(t, o.Usage.Reported)
				assert.Equal(t, "I'll read the README.The README says hello.", text(events))
			}},
		{name: "an error result", stream: "turn-error-result.jsonl", env: []string{agentsim.EnvReplayExit + "=1"}, kind: failure.Auth,
			check: func(t *testing.T, o turn.Outcome, _ []event.Event, _ agentsim.Record) {
				assert.Contains(t, o.Message, "API key not valid")
			}},
		{name: "no auth: exit 41 before any event", stream: "empty.jsonl",
			env: []string{agentsim.EnvReplayExit + "=41", agentsim.EnvReplayStderr + "=Please set an Auth method in your settings.json"}, kind: failure.Auth},
		{name: "a hang after the result is a late close", stream: "turn-tools.jsonl", env: []string{agentsim.EnvReplayHang + "=worker"},
			opts: func(o *turn.Options) { o.ExitGrace = 300 * time.Millisecond; o.StopGrace = time.Second },
			check: func(t *testing.T, o turn.Outcome, _ []event.Event, _ agentsim.Record) {
				var codes []string
				for _, w := range o.Warnings {
					codes = append(codes, w.Code)
				}
				assert.Contains(t, codes, event.WarnLateClose)
			}},
		{name: "a shell call in ask mode is killed as policy", stream: "turn-shell.jsonl", env: []string{agentsim.EnvReplayHang + "=worker"},
			req: gemini.Turn{Mode: turn.ModeAsk}, kind: failure.Policy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testkit.TempDir(t)
			bin := testkit.Install(t, filepath.Join(dir, "bin"), gemini.Command, testkit.Simulator)
			w := testkit.NewWatch(t)
			stream := filepath.Join("testdata", tt.stream)
			if tt.stream == "empty.jsonl" {
				stream = filepath.Join(dir, "empty.jsonl")
				require.NoError(t, os.WriteFile(stream, nil, 0o644))
			}
			stream, err := filepath.Abs(stream)
			require.NoError(t, err)
			record := filepath.Join(dir, "record.jsonl")
			req := tt.req
			req.Prompt = "SECRET PROMPT"
			args, err := gemini.Args(req)
			require.NoError(t, err)
			dec, err := gemini.NewDecoder(req)
			require.NoError(t, err)
			res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: bin, Source: discovery.SourceOverride},
				discovery.EnvFromOS(), discovery.OSFS())
			require.NoError(t, err)
			plan, err := shim.Build(res, args, shim.OptionsFromOS())
			require.NoError(t, err)
			opts := gemini.TurnDefaults()
			opts.Dir = dir
			opts.Env = testkit.ChildEnv(testkit.Simulator, append([]string{agentsim.EnvReplay + "=" + stream,
				agentsim.EnvRecord + "=" + record, agentsim.EnvPIDDir + "=" + w.PIDDir(), agentsim.EnvHangLimit + "=60s"}, tt.env...)...)
			opts.TotalTimeout = 60 * time.Second
			if tt.opts != nil {
				tt.opts(&opts)
			}
			var events []event.Event
			opts.OnEvent = func(e event.Event) { events = append(events, e) }
			o, err := turn.Run(context.Background(), plan, req.Prompt, dec, opts)
			w.RequireGone(15 * time.Second)
			if tt.kind != "" {
				require.Error(t, err)
				assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
				assert.Equal(t, tt.kind, o.Kind)
				assert.NotContains(t, o.Message, "SECRET", "the prompt never reaches the outcome's message")
			} else {
				require.NoError(t, err)
				assert.Equal(t, turn.StatusDone, o.Status)
			}
			if tt.kind == failure.Policy {
				assert.Equal(t, supervise.Exited != o.Process.Ending, true, "the tree was stopped, not left to exit")
			}
			if tt.check != nil {
				data, err := os.ReadFile(record)
				require.NoError(t, err)
				lines := strings.Split(strings.TrimSpace(string(data)), "\n")
				var rec agentsim.Record
				require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &rec))
				tt.check(t, o, events, rec)
			}
		})
	}
}
