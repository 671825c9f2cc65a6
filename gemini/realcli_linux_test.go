//go:build linux

package gemini_test

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
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/gemini"
	"github.com/cursorkit/cursorkit/shim"
)

// TestRealCLI runs the real gemini, when installed under
// CURSORKIT_REAL_CLIS (default <repo>/.cache/realclis/linux), with an
// empty HOME, no credentials and no trust settings, in a new git
// repository: its --version parses, and a turn fails the way it fails
// here, exit 41 with "Please set an Auth method...", as failure.Auth, with
// no prompt text in the outcome.
func TestRealCLI(t *testing.T) {
	root := os.Getenv("CURSORKIT_REAL_CLIS")
	if root == "" {
		root = filepath.Join("..", ".cache", "realclis", "linux")
	}
	bin, err := filepath.Abs(filepath.Join(root, "node_modules", ".bin", gemini.Command))
	require.NoError(t, err)
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the real gemini is not installed at %s (CI installs it): %v", bin, err)
		}
		t.Skipf("the real gemini is not installed at %s: %v", bin, err)
	}
	home, repo := t.TempDir(), t.TempDir()
	git := exec.Command("git", "init", "-q", repo)
	if out, err := git.CombinedOutput(); err != nil {
		t.Skipf("git init: %v: %s", err, out)
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "NO_COLOR=1"}

	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: bin, Source: discovery.SourceOverride},
		discovery.EnvFromOS(), discovery.OSFS())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env, cmd.Dir = env, repo
	out, err := cmd.Output()
	require.NoError(t, err)
	version, err := gemini.ParseVersion(string(out))
	require.NoError(t, err)
	t.Logf("gemini %s", version)

	const prompt = "SECRET-PROMPT-7f3a say hi"
	turn := gemini.Turn{Prompt: prompt, Mode: agent.ModeAsk}
	args, err := gemini.Args(turn)
	require.NoError(t, err)
	dec, err := gemini.NewDecoder(turn)
	require.NoError(t, err)
	plan, err := shim.Build(res, args, shim.OptionsFromOS())
	require.NoError(t, err)
	opts := gemini.TurnDefaults()
	opts.Dir, opts.Env, opts.TotalTimeout = repo, env, 90*time.Second
	o, err := agent.Run(ctx, plan, prompt, dec, opts)
	require.Error(t, err)
	t.Logf("outcome: kind %s, exit %d, message %q", o.Kind, o.Process.ExitCode, o.Message)
	assert.Equal(t, failure.Auth, failure.KindOf(err))
	assert.Equal(t, 41, o.Process.ExitCode)
	assert.Contains(t, o.Message, "Please set an Auth method")
	assert.NotContains(t, o.Message, "SECRET-PROMPT")
	assert.False(t, strings.Contains(err.Error(), "SECRET-PROMPT"))
}
