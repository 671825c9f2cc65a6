package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

// runCLI runs cursorkit in-process with the given environment.
func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(k string) string { return env[k] }
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errOut, getenv)
	return code, out.String(), errOut.String()
}

func TestTopLevelUsage(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{"no command", nil, failure.ExitInput, "usage: cursorkit", ""},
		{"help", []string{"--help"}, failure.ExitOK, "commands:", ""},
		{"unknown command", []string{"frobnicate"}, failure.ExitInput, "", `unknown command "frobnicate"`},
		{"unknown global flag", []string{"--nope", "version"}, failure.ExitInput, "", "unknown flag: --nope"},
		{"version", []string{"version"}, failure.ExitOK, "cursorkit dev", ""},
		{"version help", []string{"version", "--help"}, failure.ExitOK, "usage: cursorkit version", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, nil, "", tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, stdout, tt.wantStdout)
			assert.Contains(t, stderr, tt.wantStderr)
		})
	}
}

func TestFailJSONShape(t *testing.T) {
	var out, errOut bytes.Buffer
	a := &app{stdout: &out, stderr: &errOut}
	code := a.fail(true, failure.New(failure.MissingCLI, "no Cursor CLI found"))
	assert.Equal(t, 3, code)
	var body map[string]map[string]string
	require.NoError(t, json.Unmarshal(out.Bytes(), &body))
	assert.Equal(t, map[string]string{"kind": "missing_cli", "message": "no Cursor CLI found"}, body["error"])
	assert.Empty(t, errOut.String())
}

func TestSettingsPathPrecedence(t *testing.T) {
	p, inCwd := defaultSettingsPath(func(k string) string {
		if k == "CURSORKIT_SETTINGS" {
			return " /x/s.json "
		}
		return ""
	})
	assert.Equal(t, "/x/s.json", p)
	assert.False(t, inCwd)
	p, _ = defaultSettingsPath(func(string) string { return "" })
	assert.True(t, strings.HasSuffix(p, "settings.json"))
}
