package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResume: --resume SESSION and --resume-last continue a finished task
// of the same workspace and mode: its chat is copied into the new private
// home and the agent gets --resume; anything else is input.
func TestResume(t *testing.T) {
	flags, env, data, ws := jobEnv(t, "")
	code, stdout, stderr := runCLI(t, env, "first", append(flags, "task", "--json", "--cwd", ws)...)
	require.Equal(t, 0, code, stderr)
	first := outcomeLine(t, stdout)["job"].(map[string]any)
	session := first["sessionId"].(string)
	require.NotEmpty(t, session)
	// A chat as Cursor keeps it, in the first job's private home.
	chat := filepath.Join(first["homeDir"].(string), ".cursor", "chats", "0123456789abcdef0123456789abcdef", session)
	require.NoError(t, os.MkdirAll(chat, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(chat, "store.db"), []byte("chat"), 0o600))

	// --resume picks the newest finished job that recorded the session
	// (the first); --resume-last the newest finished job of all (then the
	// one --resume made).
	newest := first["id"]
	for _, args := range [][]string{{"--resume", session}, {"--resume-last"}} {
		t.Run(args[0], func(t *testing.T) {
			code, stdout, stderr := runCLI(t, env, "again", append(append(flags, "task", "--json", "--cwd", ws), args...)...)
			require.Equal(t, 0, code, stderr)
			job := outcomeLine(t, stdout)["job"].(map[string]any)
			assert.Equal(t, newest, job["parentJob"])
			newest = job["id"]
			assert.Equal(t, session, job["resumedSession"])
			copied := filepath.Join(job["homeDir"].(string), ".cursor", "chats", "0123456789abcdef0123456789abcdef", session, "store.db")
			data, err := os.ReadFile(copied)
			require.NoError(t, err)
			assert.Equal(t, "chat", string(data))
			assert.Contains(t, lastSimRecord(t).Args, "--resume")
			assert.Contains(t, lastSimRecord(t).Args, session)
		})
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{name: "an unknown session", args: []string{"--resume", "no-such-session"}},
		{name: "another mode", args: []string{"--write", "--resume", session}},
		{name: "two alternatives", args: []string{"--resume-last", "--fresh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadDir(filepath.Join(data, "runs"))
			code, stdout, _ := runCLI(t, env, "x", append(append(flags, "task", "--json", "--cwd", ws), tc.args...)...)
			assert.Equal(t, 2, code)
			obj := decodeObject(t, stdout)["error"].(map[string]any)
			assert.Equal(t, "input", obj["kind"])
			after, _ := os.ReadDir(filepath.Join(data, "runs"))
			assert.Len(t, after, len(before), "nothing made")
		})
	}
	t.Run("the unknown session's error lists the resumable ones", func(t *testing.T) {
		_, stdout, _ := runCLI(t, env, "x", append(flags, "task", "--json", "--cwd", ws, "--resume", "nope")...)
		assert.Contains(t, decodeObject(t, stdout)["error"].(map[string]any)["message"], session)
	})
}
