package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// TestSettingsFlagMustNameAFile: an empty --settings is a usage error, not
// a silent fall back to the default file.
func TestSettingsFlagMustNameAFile(t *testing.T) {
	const msg = "--settings names no file; give a file, or leave the flag out for the default settings file"
	for _, tc := range []struct {
		args []string
		json bool
	}{
		{args: []string{"--settings", "", "probe"}},
		{args: []string{"--settings", "  ", "status"}},
		{args: []string{"probe", "--settings", ""}},
		{args: []string{"--settings", "a.json", "doctor", "--settings="}},
		{args: []string{"--settings=", "probe", "--json"}, json: true},
		{args: []string{"models", "--json", "--settings", " "}, json: true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, "", tc.args...)
			assert.Equal(t, failure.ExitInput, code)
			if tc.json {
				obj := decodeObject(t, stdout)["error"].(map[string]any)
				assert.Equal(t, "input", obj["kind"])
				assert.Equal(t, msg, obj["message"])
				assert.NotContains(t, stderr, msg)
			} else {
				assert.Empty(t, stdout)
				assert.True(t, strings.HasPrefix(stderr, "cursorkit: "+msg+"\nusage: cursorkit "), "stderr: %q", stderr)
			}
		})
	}
}

// TestServeWithoutAConfigDirWritesNoTokenIntoTheCurrentDirectory: with no
// user config directory the default token file would land in the current
// directory; serve refuses instead, unless told where the token is.
func TestServeWithoutAConfigDirWritesNoTokenIntoTheCurrentDirectory(t *testing.T) {
	cwd := testkit.TempDir(t)
	t.Chdir(cwd)
	switch runtime.GOOS {
	case "windows":
		t.Setenv("AppData", "")
	case "darwin", "ios":
		t.Setenv("HOME", "")
	default:
		t.Setenv("HOME", "")
		t.Setenv("XDG_CONFIG_HOME", "")
	}
	_, err := os.UserConfigDir()
	require.Error(t, err, "the test needs a machine without a user config directory")

	t.Run("refused", func(t *testing.T) {
		// Before the fix serve started and ran until ctx ended; the
		// deadline ends such a run so the test can report it.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var errOut strings.Builder
		code := run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, &errOut,
			func(string) string { return "" })
		assert.Equal(t, failure.ExitSetup, code)
		assert.Contains(t, errOut.String(), "there is no user config directory")
		assert.Contains(t, errOut.String(), "pass --token-file FILE or set CURSORKIT_TOKEN")
		entries, err := os.ReadDir(cwd)
		require.NoError(t, err)
		assert.Empty(t, entries, "nothing is written into the current directory")
	})
	t.Run("CURSORKIT_TOKEN still works", func(t *testing.T) {
		token := strings.Repeat("h", 32)
		a := &app{stdin: strings.NewReader(""), stdout: io.Discard, getenv: func(k string) string {
			return map[string]string{"CURSORKIT_TOKEN": token}[k]
		}, settingsPath: filepath.Join(".", "cursorkit-settings.json"), settingsInCwd: true}
		got, where, err := a.serveToken("", false)
		require.NoError(t, err)
		assert.Equal(t, token, got)
		assert.Equal(t, "from CURSORKIT_TOKEN", where)
	})
	t.Run("--token-file still works", func(t *testing.T) {
		tf := filepath.Join(testkit.TempDir(t), "token")
		a := &app{getenv: func(string) string { return "" }, settingsPath: filepath.Join(".", "cursorkit-settings.json"), settingsInCwd: true}
		_, where, err := a.serveToken(tf, true)
		require.NoError(t, err)
		assert.Contains(t, where, tf)
	})
}
