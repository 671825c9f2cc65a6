//go:build linux

package codex_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/codex"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

// realCodex returns the real codex installed under CURSORKIT_REAL_CLIS
// (default <repo root>/.cache/realclis/linux), skipping (or, under CI,
// failing) when it is not there.
func realCodex(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CURSORKIT_REAL_CLIS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", ".cache", "realclis", "linux")
	}
	bin := filepath.Join(dir, "node_modules", ".bin", codex.Command)
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the real codex CLI is not installed at %s (CI installs it): %v", bin, err)
		}
		t.Skipf("the real codex CLI is not installed at %s (set CURSORKIT_REAL_CLIS)", bin)
	}
	return bin
}

// isolatedEnv is an environment with an empty HOME and no credentials.
func isolatedEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		switch {
		case strings.HasSuffix(upper, "_API_KEY"), strings.Contains(upper, "TOKEN"), strings.HasPrefix(upper, "CODEX_"),
			strings.HasPrefix(upper, "OPENAI_"), upper == "HOME", strings.HasPrefix(upper, "XDG_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"))
}

// TestRealCLI runs the real codex without credentials or a reachable
// OpenAI: --version parses, a turn outside a git repository is refused
// as setup, and a turn in a git repository fails as network within
// seconds (Codex retries, then waits for the network forever: the decoder
// stops it).
func TestRealCLI(t *testing.T) {
	bin := realCodex(t)
	home := t.TempDir()
	env := isolatedEnv(home)
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".codex"), 0o755))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	v, err := codex.ParseVersion(string(out))
	require.NoError(t, err)
	assert.NotEmpty(t, v)
	t.Logf("codex %s", v)

	res, err := discovery.Resolve(context.Background(), discovery.Candidate{Value: bin, Source: discovery.SourceOverride, Origin: codex.EnvBinary},
		discovery.EnvFromOS(), discovery.OSFS())
	require.NoError(t, err)
	const prompt = "SECRET-PROMPT say hello"
	turn := func(t *testing.T, dir string) (agent.Outcome, error) {
		t.Helper()
		tu := codex.Turn{Prompt: prompt, Mode: agent.ModeAsk}
		args, err := codex.Args(tu)
		require.NoError(t, err)
		plan, err := shim.Build(res, args, shim.OptionsFromOS())
		require.NoError(t, err)
		dec, err := codex.NewDecoder(tu)
		require.NoError(t, err)
		opts := codex.TurnDefaults()
		opts.Dir, opts.Env, opts.TotalTimeout = dir, env, 90*time.Second
		return agent.Run(context.Background(), plan, prompt, dec, opts)
	}

	t.Run("outside a git repository", func(t *testing.T) {
		o, err := turn(t, t.TempDir())
		assert.Equal(t, failure.Setup, failure.KindOf(err), "%v", err)
		assert.Contains(t, o.Message, "git")
		assert.NotContains(t, o.Message, "SECRET")
	})
	t.Run("no credentials, no network", func(t *testing.T) {
		repo := t.TempDir()
		git := exec.Command("git", "init", "-q", repo)
		git.Env = env
		if out, err := git.CombinedOutput(); err != nil {
			t.Skipf("git init: %v: %s", err, out)
		}
		start := time.Now()
		o, err := turn(t, repo)
		t.Logf("after %v: %s: %s", time.Since(start).Round(time.Millisecond), o.Kind, o.Message)
		assert.Equal(t, failure.Network, failure.KindOf(err), "%v", err)
		assert.NotContains(t, o.Message, "SECRET")
		for _, w := range o.Warnings {
			assert.NotContains(t, w.Message, "SECRET")
		}
	})
}
