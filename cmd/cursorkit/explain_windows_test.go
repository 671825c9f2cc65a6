package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/turn"
)

// TestShimExplainPowerShellTurn: `shim explain` of a cursor-agent.ps1 with
// a turn's arguments, every one of which starts with a dash or follows
// one, shows the PowerShell plan; only what -File would change is refused
// (docs/contract.md, "Launch plans").
func TestShimExplainPowerShellTurn(t *testing.T) {
	settings := cursorEnv(t, "", "")
	script := filepath.Join(testkit.TempDir(t), "cursor-agent.ps1")
	require.NoError(t, os.WriteFile(script, []byte("& \"$PSScriptRoot\\node.exe\" \"$PSScriptRoot\\index.js\" $args\r\n"), 0o644))
	turns := []cursor.Turn{
		{},
		{Mode: turn.ModeAsk, Model: "gpt-5"},
		{Mode: turn.ModeWrite, PartialOutput: true, Model: "claude-4.5[thinking=true]", Resume: "4f1c-9e"},
	}
	for _, req := range turns {
		args, err := cursor.Args(req)
		require.NoError(t, err)
		code, stdout, stderr := runCLI(t, map[string]string{}, "",
			append([]string{"--settings", settings, "shim", "explain", "--json", script, "--"}, args...)...)
		require.Equal(t, 0, code, "%s%s", stdout, stderr)
		obj := decodeObject(t, stdout)
		assert.NotContains(t, obj, "refusal")
		plan := obj["plan"].(map[string]any)
		assert.Equal(t, "powershell", plan["kind"])
		assert.Equal(t, script, plan["target"])
		got := plan["args"].([]any)
		want := make([]any, len(args))
		for i, a := range args {
			want[i] = a
		}
		assert.Equal(t, want, got[len(got)-len(args):])
	}

	code, stdout, _ := runCLI(t, map[string]string{}, "", "--settings", settings, "shim", "explain", "--json", script,
		"--", "--print", "--model:", "secret-model")
	assert.Equal(t, 2, code)
	assert.NotContains(t, stdout, "secret-model")
	failed := decodeObject(t, stdout)
	assert.Equal(t, "input", failed["error"].(map[string]any)["kind"])
	refusal := failed["explain"].(map[string]any)["refusal"].(map[string]any)
	assert.Equal(t, "input", refusal["kind"])
	assert.EqualValues(t, 1, refusal["index"])
	assert.Equal(t, "U+003A ':'", refusal["char"])
}
