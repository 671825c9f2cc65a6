package codex_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/codex"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/turn"
)

// TestRunThroughTheSupervisor runs turns end to end: the replay stand-in
// installed as codex, launched through discovery, shim and turn.Run with
// this package's Args and Decoder.
func TestRunThroughTheSupervisor(t *testing.T) {
	const prompt = "SECRET prompt: summarise README.md"
	norepo := strings.TrimSpace(strings.Join(fileLines(t, "real-norepo.stderr"), "\n"))
	tests := []struct {
		name   string
		stream string
		req    codex.Turn
		env    []string
		opts   func(*turn.Options)
		kind   failure.Kind
		check  func(t *testing.T, o turn.Outcome, evs []event.Event, rec []agentsim.Record)
	}{
		{name: "a good turn", stream: "success.jsonl", req: codex.Turn{Mode: turn.ModeWrite, Model: "gpt-5.1-codex"},
			check: func(t *testing.T, o turn.Outcome, evs []event.Event, rec []agentsim.Record) {
				require.Len(t, rec, 1)
				assert.Equal(t, []string{"exec", "--json", "--color", "never", "--sandbox", "workspace-write", "--model", "gpt-5.1-codex", "-"}, rec[0].Args)
				assert.Equal(t, prompt, rec[0].Stdin, "the prompt travels on stdin only")
				assert.Equal(t, turn.StatusDone, o.Status)
				assert.Equal(t, "0199a213-81c0-7800-8aa1-bbab2a035a53", o.SessionID)
				assert.Equal(t, int64(315), *o.Usage.InputTokens)
				assert.Equal(t, event.TypeResult, evs[len(evs)-1].Type)
			}},
		{name: "a resumed turn", stream: "success.jsonl", req: codex.Turn{Resume: "0199a213-81c0-7800-8aa1-bbab2a035a53"},
			check: func(t *testing.T, _ turn.Outcome, _ []event.Event, rec []agentsim.Record) {
				require.Len(t, rec, 1)
				assert.Equal(t, "exec --json --color never --sandbox read-only resume 0199a213-81c0-7800-8aa1-bbab2a035a53 -", strings.Join(rec[0].Args, " "))
			}},
		{name: "an error result", stream: "failed.jsonl", env: []string{agentsim.EnvReplayExit + "=1"}, kind: failure.Quota},
		{name: "outside a git repository", stream: "empty.jsonl", env: []string{agentsim.EnvReplayExit + "=1", agentsim.EnvReplayStderr + "=" + norepo}, kind: failure.Setup},
		{name: "a hang after the result: the exit grace", stream: "success.jsonl", env: []string{agentsim.EnvReplayHang + "=worker"},
			opts: func(o *turn.Options) { o.ExitGrace = 200 * time.Millisecond },
			check: func(t *testing.T, o turn.Outcome, _ []event.Event, _ []agentsim.Record) {
				assert.Equal(t, turn.StatusDone, o.Status)
				var codes []string
				for _, w := range o.Warnings {
					codes = append(codes, w.Code)
				}
				assert.Contains(t, codes, event.WarnLateClose)
			}},
		{name: "a policy kill", stream: "disallowed.jsonl", req: codex.Turn{Mode: turn.ModeAsk}, env: []string{agentsim.EnvReplayHang + "=worker"}, kind: failure.Policy},
		{name: "waiting for the network forever", stream: "real-nonetwork.jsonl", env: []string{agentsim.EnvReplayHang + "=worker"}, kind: failure.Network,
			check: func(t *testing.T, o turn.Outcome, _ []event.Event, _ []agentsim.Record) {
				assert.NotContains(t, o.Message, "SECRET")
				assert.Equal(t, "01a233f7-8906-78b1-976c-e96fd9301087", o.SessionID)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testkit.TempDir(t)
			bin := testkit.Install(t, dir, codex.Command, testkit.Simulator)
			res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: bin, Source: discovery.SourceOverride, Origin: codex.EnvBinary},
				discovery.EnvFromOS(), discovery.OSFS())
			require.NoError(t, err)
			args, err := codex.Args(tt.req)
			require.NoError(t, err)
			plan, err := shim.Build(res, args, shim.OptionsFromOS())
			require.NoError(t, err)
			dec, err := codex.NewDecoder(tt.req)
			require.NoError(t, err)

			stream := filepath.Join(dir, "empty.jsonl")
			if tt.stream != "empty.jsonl" {
				stream, err = filepath.Abs(filepath.Join("testdata", tt.stream))
				require.NoError(t, err)
			} else {
				require.NoError(t, writeFile(stream, ""))
			}
			w := testkit.NewWatch(t)
			record := filepath.Join(dir, "record.ndjson")
			opts := codex.TurnDefaults()
			opts.Env = testkit.ChildEnv(testkit.Simulator, append([]string{agentsim.EnvReplay + "=" + stream,
				agentsim.EnvPIDDir + "=" + w.PIDDir(), agentsim.EnvRecord + "=" + record}, tt.env...)...)
			var evs []event.Event
			opts.OnEvent = func(e event.Event) { evs = append(evs, e) }
			if tt.opts != nil {
				tt.opts(&opts)
			}
			o, err := turn.Run(context.Background(), plan, prompt, dec, opts)
			assert.Equal(t, tt.kind, failure.KindOf(err), "%v", err)
			assert.Equal(t, tt.kind, o.Kind)
			assert.NotContains(t, o.Message, "SECRET")
			if tt.check != nil {
				recs, _ := agentsim.ReadRecords(record)
				tt.check(t, o, evs, recs)
			}
			w.RequireGone(10 * time.Second)
		})
	}
}
