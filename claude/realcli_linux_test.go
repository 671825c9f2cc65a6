//go:build linux

package claude_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/claude"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

// TestRealCLI runs the real Claude Code installed under
// CURSORKIT_REAL_CLIS (default <repo>/.cache/realclis/linux) with an
// empty HOME and no credentials: --version parses, and a turn fails the
// way it really fails without a login (auth), the prompt in no message.
func TestRealCLI(t *testing.T) {
	root := os.Getenv("CURSORKIT_REAL_CLIS")
	if root == "" {
		root = filepath.Join("..", ".cache", "realclis", "linux")
	}
	bin, err := filepath.Abs(filepath.Join(root, "node_modules", ".bin", claude.Command))
	require.NoError(t, err)
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the real claude is not installed at %s (CI installs it): %v", bin, err)
		}
		t.Skipf("the real claude is not installed at %s: %v", bin, err)
	}
	home := t.TempDir()
	ws := t.TempDir()
	env := isolatedEnv(home)
	git := exec.Command("git", "init", "-q", ws)
	git.Env = env
	require.NoError(t, git.Run())

	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: bin, Source: discovery.SourceOverride}, discovery.EnvFromOS(), discovery.OSFS())
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	version := exec.CommandContext(ctx, bin, "--version")
	version.Env, version.Dir = env, ws
	out, err := version.Output()
	require.NoError(t, err)
	v, err := claude.ParseVersion(string(out))
	require.NoError(t, err, "%q", out)
	t.Logf("claude %s", v)

	const prompt = "Say hello. SECRET-PROMPT-7d1f"
	turn := claude.Turn{Prompt: prompt, Mode: agent.ModeAsk}
	args, err := claude.Args(turn)
	require.NoError(t, err)
	plan, err := shim.Build(res, args, shim.OptionsFromOS())
	require.NoError(t, err)
	dec, err := claude.NewDecoder(turn)
	require.NoError(t, err)
	opts := claude.TurnDefaults()
	opts.Env, opts.Dir, opts.TotalTimeout = env, ws, 60*time.Second
	o, err := agent.Run(ctx, plan, prompt, dec, opts)
	require.Error(t, err)
	assert.Equal(t, failure.Auth, failure.KindOf(err), "%v", err)
	assert.Equal(t, failure.Auth, o.Kind)
	assert.Contains(t, o.Message, "Not logged in")
	assert.NotContains(t, o.Message, "SECRET-PROMPT")
	assert.NotContains(t, err.Error(), "SECRET-PROMPT")
	assert.NotEmpty(t, o.SessionID)
	assert.Equal(t, 1, o.Process.ExitCode)
}

// isolatedEnv is this process's environment with HOME (and the XDG
// directories) at home and every credential dropped.
func isolatedEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		switch {
		case upper == "HOME" || strings.HasPrefix(upper, "XDG_"),
			strings.HasSuffix(upper, "_API_KEY"), strings.Contains(upper, "TOKEN"), strings.Contains(upper, "SECRET"),
			strings.HasPrefix(upper, "ANTHROPIC_"), strings.HasPrefix(upper, "CLAUDE"), strings.HasPrefix(upper, "AWS_"),
			strings.HasPrefix(upper, "GOOGLE_"), strings.HasPrefix(upper, "CURSORKIT_SIM"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"))
}
