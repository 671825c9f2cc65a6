package agents_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/turn"
)

// wineGuard is the part of the last line of cmd-shim's node shims that
// Wine's cmd.exe cannot run: it ends a batch file at a goto to an
// undefined label, so the line's command never runs there (the shim
// package's TestNpmCmdShims says the same). Under Wine the test runs the
// shim without it; everything else is npm's text.
const wineGuard = "goto #_undefined_# 2>NUL || "

// npmShim is an agent as npm installs it on Windows: NAME.cmd in
// node_modules\.bin, written by npm's cmd-shim, and what it starts.
type npmShim struct {
	agent  string
	stream string // the stand-in's recorded stream (the agent's testdata)
	// target is the native program the shim starts, relative to
	// node_modules (claude); "" for a node shim, which starts node.exe
	// next to it with script (relative to node_modules) first.
	target, script string
	mode           turn.Mode // the mode whose tools the stream uses
}

func npmShims() []npmShim {
	return []npmShim{
		{agent: "claude", stream: "claude/testdata/good-turn.jsonl", target: `@anthropic-ai\claude-code\bin\claude.exe`, mode: turn.ModeWrite},
		{agent: "codex", stream: "codex/testdata/success.jsonl", script: `@openai\codex\bin\codex.js`},
		{agent: "gemini", stream: "gemini/testdata/turn-tools.jsonl", script: `@google\gemini-cli\bundle\gemini.js`},
	}
}

// layOut writes the shim and its target under an awkward directory (spaces
// and parentheses, as under Program Files) and returns node_modules\.bin
// and the name of the program the simulator stands in for.
func (s npmShim) layOut(t *testing.T) (binDir, standIn string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "npmshims", s.agent+".cmd"))
	require.NoError(t, err)
	modules := filepath.Join(testkit.TempDir(t), "Program Files (x86)", "npm (global)", "node_modules")
	binDir = filepath.Join(modules, ".bin")
	require.NoError(t, os.MkdirAll(binDir, 0o755))
	shim := string(text)
	if s.target == "" && testkit.UnderWine() {
		shim = strings.Replace(shim, wineGuard, "", 1)
	}
	require.NoError(t, os.WriteFile(filepath.Join(binDir, s.agent+".cmd"), []byte(shim), 0o644))
	if s.target != "" {
		testkit.Install(t, filepath.Dir(filepath.Join(modules, s.target)), filepath.Base(s.target), testkit.Simulator)
		return binDir, strings.TrimSuffix(filepath.Base(s.target), ".exe")
	}
	script := filepath.Join(modules, s.script)
	require.NoError(t, os.MkdirAll(filepath.Dir(script), 0o755))
	require.NoError(t, os.WriteFile(script, []byte("#!/usr/bin/env node\n"), 0o644))
	testkit.Install(t, binDir, "node.exe", testkit.Simulator)
	return binDir, "node"
}

// TestTurnsThroughNpmShims runs each agent's turn as npm installs it on
// Windows: found on PATH as NAME.cmd (PATHEXT), started through cmd.exe
// with a command line no argument can break out of, the prompt on stdin,
// and the whole tree (cmd.exe, the stand-in, its helper) killed by a stop.
func TestTurnsThroughNpmShims(t *testing.T) {
	for _, s := range npmShims() {
		t.Run(s.agent, func(t *testing.T) {
			a, err := agents.Lookup(s.agent)
			require.NoError(t, err)
			binDir, standIn := s.layOut(t)
			env := discovery.EnvFromOS()
			env.Path = binDir
			res, err := a.Find(context.Background(), "", func(string) string { return "" }, env, discovery.OSFS())
			require.NoError(t, err)
			assert.Equal(t, discovery.CmdShim, res.Kind)
			assert.Equal(t, s.agent+".cmd", strings.ToLower(res.Name))

			stream, err := filepath.Abs(s.stream)
			require.NoError(t, err)
			record := filepath.Join(testkit.TempDir(t), "record.jsonl")
			w := testkit.NewWatch(t)
			base := testkit.ChildEnv(testkit.Simulator, agentsim.EnvReplay+"="+stream, agentsim.EnvReplayFor+"="+standIn,
				agentsim.EnvRecord+"="+record, agentsim.EnvPIDDir+"="+w.PIDDir())
			opts := a.TurnDefaults()
			opts.Env = base
			opts.FirstLineTimeout = waitLong

			// Values cmd.exe would act on (BatBadBut) are refused before
			// anything starts: nothing can be injected through a model id.
			for _, model := range []string{`m"&echo INJECTED&"`, `m%PATH%`, `m&echo`, `m|x`, `m^x`, `m<x`, `m>x`, `m(x)`} {
				_, err := a.Run(context.Background(), res, false, agents.Turn{Prompt: "p", Model: model}, opts)
				require.Error(t, err, model)
				assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
			}
			// A plain model id arrives as planned, and a prompt that would
			// be a second command on a command line is data on stdin.
			const model = "gpt-5.1-codex-max"
			const prompt = "p\" & echo INJECTED & \"\r\nsecond line %PATH%"
			req := agents.Turn{Prompt: prompt, Mode: turn.ModeAsk, Model: model}
			if s.mode != "" {
				req.Mode = s.mode
			}
			want, err := a.Args(req)
			require.NoError(t, err)
			o, err := a.Run(context.Background(), res, false, req, opts)
			require.NoError(t, err)
			assert.Equal(t, turn.StatusDone, o.Status)
			records, err := agentsim.ReadRecords(record)
			require.NoError(t, err)
			require.Len(t, records, 1)
			got := records[0].Args
			if s.target == "" {
				require.NotEmpty(t, got)
				assert.True(t, strings.HasSuffix(got[0], filepath.Base(s.script)), "node gets the script first: %q", got[0])
				got = got[1:]
			}
			assert.Equal(t, want, got, "every argument arrives as it was planned")
			assert.Equal(t, prompt, records[0].Stdin, "the prompt travels on stdin only")

			// A stop kills the whole tree: cmd.exe, the stand-in and the
			// helper it leaves holding stdout.
			hang := append(append([]string(nil), base...), agentsim.EnvReplayHang+"=worker")
			opts.Env = hang
			opts.TotalTimeout = 2 * time.Second
			opts.ExitGrace = time.Second
			req.Model = ""
			o, _ = a.Run(context.Background(), res, false, req, opts)
			assert.NotEqual(t, "", string(o.Process.Ending))
			w.RequireGone(waitLong)
		})
	}
}
