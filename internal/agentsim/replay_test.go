package agentsim_test

import (
	"bytes"
	"encoding/json/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

func TestReplay(t *testing.T) {
	dir := testkit.TempDir(t)
	stream := filepath.Join(dir, "stream.jsonl")
	require.NoError(t, os.WriteFile(stream, []byte("{\"type\":\"a\"}\n{\"type\":\"b\"}"), 0o644))
	record := filepath.Join(dir, "record.jsonl")
	stderrFile := filepath.Join(dir, "stderr.txt")
	require.NoError(t, os.WriteFile(stderrFile, []byte("line 1\nline 2\n"), 0o644))
	env := map[string]string{agentsim.EnvReplay: stream, agentsim.EnvReplayVersion: "9.9.9 (Stand-in)",
		agentsim.EnvReplayStderr: "boom", agentsim.EnvReplayStderrFile: stderrFile, agentsim.EnvReplayExit: "41", agentsim.EnvRecord: record}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "version", args: []string{"--version"}, wantStdout: "9.9.9 (Stand-in)\n"},
		{name: "turn", args: []string{"-p", "--output-format", "stream-json"}, stdin: "the prompt", wantCode: 41,
			wantStdout: "{\"type\":\"a\"}\n{\"type\":\"b\"}", wantStderr: "boom\nline 1\nline 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := agentsim.Main(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr, getenv)
			assert.Equal(t, tt.wantCode, code)
			assert.Equal(t, tt.wantStdout, stdout.String())
			assert.Equal(t, tt.wantStderr, stderr.String())
		})
	}
	data, err := os.ReadFile(record)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 2)
	var rec agentsim.Record
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &rec))
	assert.Equal(t, []string{"-p", "--output-format", "stream-json"}, rec.Args)
	assert.Equal(t, "the prompt", rec.Stdin)
}
