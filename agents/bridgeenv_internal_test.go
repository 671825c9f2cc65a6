package agents

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

func TestBridgeEnv(t *testing.T) {
	server := func(dir string) *mcpbridge.Server {
		return &mcpbridge.Server{Name: "cursorkitfa33fb33", Command: "/opt/app/bin/app", Args: []string{"__cursorkit-mcp-bridge"},
			Env: map[string]string{mcpbridge.EnvSession: filepath.Join(dir, "session.json")}, Tools: []string{"fn_x"},
			ConfigFile: filepath.Join(dir, "mcp.json"), Dir: dir}
	}
	t.Run("only gemini's turn with a bridge changes", func(t *testing.T) {
		for _, a := range All() {
			env := []string{"A=1"}
			got, err := a.bridgeEnv(Turn{Mode: turn.ModeAsk}, env)
			require.NoError(t, err)
			assert.Equal(t, env, got, "%s without a bridge", a.Name)
			if a.Name == gemini.Name {
				continue
			}
			got, err = a.bridgeEnv(Turn{Mode: turn.ModeAsk, Bridge: server(testkit.TempDir(t))}, nil)
			require.NoError(t, err)
			assert.Nil(t, got, "%s keeps this process's environment", a.Name)
		}
	})
	t.Run("gemini gets its own home, the user's read from the turn's", func(t *testing.T) {
		a, err := Lookup(gemini.Name)
		require.NoError(t, err)
		user := testkit.TempDir(t)
		require.NoError(t, os.MkdirAll(filepath.Join(user, ".gemini"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(user, ".gemini", "oauth_creds.json"), []byte("{}"), 0o600))
		dir := testkit.TempDir(t)
		env := []string{"HOME=/nowhere", gemini.EnvHome + "=" + user, "A=1"}
		got, err := a.bridgeEnv(Turn{Mode: turn.ModeAsk, Bridge: server(dir)}, env)
		require.NoError(t, err)
		home := filepath.Join(dir, "gemini-home")
		assert.Equal(t, []string{"HOME=/nowhere", "A=1", gemini.EnvHome + "=" + home}, got)
		assert.Equal(t, []string{"HOME=/nowhere", gemini.EnvHome + "=" + user, "A=1"}, env, "the caller's slice is not changed")
		_, err = os.Stat(filepath.Join(home, ".gemini", "oauth_creds.json"))
		assert.NoError(t, err, "the user's credentials, from the turn's GEMINI_CLI_HOME")
	})
	t.Run("gemini with this process's environment", func(t *testing.T) {
		a, err := Lookup(gemini.Name)
		require.NoError(t, err)
		// Not the user's home: a test reads no file of theirs.
		home := testkit.TempDir(t)
		t.Setenv("HOME", home)
		t.Setenv("USERPROFILE", home)
		t.Setenv(gemini.EnvHome, "")
		got, err := a.bridgeEnv(Turn{Mode: turn.ModeWrite, Bridge: server(testkit.TempDir(t))}, nil)
		require.NoError(t, err)
		assert.Greater(t, len(got), 1)
		assert.Equal(t, 1, len(slices.DeleteFunc(slices.Clone(got), func(kv string) bool { return !strings.HasPrefix(kv, gemini.EnvHome+"=") })))
	})
	t.Run("gemini's plan turn with a bridge is refused before anything starts", func(t *testing.T) {
		a, err := Lookup(gemini.Name)
		require.NoError(t, err)
		dir := testkit.TempDir(t)
		o, err := a.Run(t.Context(), discovery.Resolution{}, true, Turn{Mode: turn.ModePlan, Bridge: server(dir)}, a.TurnDefaults())
		assert.Equal(t, failure.Input, failure.KindOf(err), "%v", err)
		assert.Equal(t, turn.StatusError, o.Status)
		_, err = os.Stat(filepath.Join(dir, "gemini-home"))
		assert.ErrorIs(t, err, os.ErrNotExist, "no home is made for a refused turn")
	})
}
