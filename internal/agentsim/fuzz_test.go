package agentsim

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParseArgs checks the argv parser's contract: it never panics, and
// whatever it accepts as a print turn is a stream-json print turn with a
// valid mode and no positional prompt.
func FuzzParseArgs(f *testing.F) {
	for _, seed := range []string{
		"--version",
		"status\x00--format\x00json",
		"whoami\x00--format=json",
		"models",
		"--print\x00--output-format\x00stream-json\x00--trust\x00--model\x00gpt-5\x00--mode\x00plan",
		"-p\x00--output-format=stream-json\x00--trust\x00--force\x00--resume\x00abc\x00--stream-partial-output",
		"--print\x00--output-format\x00stream-json\x00--trust\x00--\x00prompt",
		"--mode",
		"--model=",
		"--print\x00--output-format\x00stream-json\x00--sandbox\x00enabled\x00--disable-project-configs\x00--single-turn\x00--disable-auto-update\x00--allowed-tools\x00read_tool_call,ls_tool_call\x00--mode\x00ask\x00--trust",
		"--sandbox=maybe",
		"--allowed-tools=a,,b",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		var args []string
		if joined != "" {
			args = strings.Split(joined, "\x00")
		}
		inv, err := parseArgs(args)
		if err != nil {
			assert.NotEmpty(t, err.Error())
			return
		}
		assert.Contains(t, []string{"", "plan", "ask"}, inv.mode)
		assert.Contains(t, []string{"", "enabled", "disabled"}, inv.sandbox)
		for _, name := range inv.allowedTools {
			assert.NotEmpty(t, name)
			assert.NotContains(t, name, ",")
		}
		if inv.command == cmdPrint {
			assert.True(t, inv.print)
			assert.Equal(t, "stream-json", inv.outputFormat)
			for i, a := range args {
				if a == "--" {
					assert.Len(t, args, i+1, "nothing positional after --")
				}
			}
		}
	})
}

func TestParseArgs(t *testing.T) {
	inv, err := parseArgs([]string{"-p", "--output-format=stream-json", "--trust", "-m", "grok", "--mode=ask", "-f", "--resume", "s1", "--workspace", "/w", "--stream-partial-output"})
	require.NoError(t, err)
	assert.Equal(t, invocation{command: cmdPrint, print: true, outputFormat: "stream-json", model: "grok", mode: "ask",
		force: true, trust: true, resume: "s1", streamPartialOutput: true, workspace: "/w"}, inv)
	inv, err = parseArgs([]string{"-p", "--output-format", "stream-json", "--sandbox", "enabled", "--disable-project-configs",
		"--single-turn", "--disable-auto-update", "--allowed-tools", "a,b", "--allowed-tools=read_tool_call", "--trust"})
	require.NoError(t, err)
	assert.Equal(t, invocation{command: cmdPrint, print: true, outputFormat: "stream-json", trust: true, sandbox: "enabled",
		allowedTools: []string{"read_tool_call"}, disableProject: true, singleTurn: true, disableAutoUpdate: true}, inv,
		"a repeated --allowed-tools replaces the list")
	inv, err = parseArgs([]string{"--trust", "-v"})
	require.NoError(t, err)
	assert.Equal(t, cmdVersion, inv.command)
	_, err = parseArgs([]string{"--trust=yes"})
	assert.ErrorContains(t, err, "takes no argument")
	_, err = parseArgs([]string{"models", "extra"})
	assert.ErrorContains(t, err, "too many arguments")
}

// FuzzReadRecords checks that the record reader never panics and that what
// Record writes, it reads back.
func FuzzReadRecords(f *testing.F) {
	f.Add([]byte(`{"args":["--version"],"env":["A=b"],"stdin":"","cwd":"/","pid":1,"executable":"x"}` + "\n"))
	f.Add([]byte("{\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := tempFile(t)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		records, err := ReadRecords(path)
		if err == nil {
			assert.LessOrEqual(t, len(records), strings.Count(string(data), "\n")+1)
		}
	})
}

func TestRecordRoundTrip(t *testing.T) {
	path := tempFile(t)
	require.NoError(t, os.Remove(path), "record creates it")
	env := map[string]string{EnvRecord: path}
	s := &sim{args: []string{"--print", "x\ny"}, getenv: func(k string) string { return env[k] }}
	s.record("the prompt\r\n")
	s.record("")
	records, err := ReadRecords(path)
	require.NoError(t, err)
	require.Len(t, records, 2)
	assert.Equal(t, []string{"--print", "x\ny"}, records[0].Args)
	assert.Equal(t, "the prompt\r\n", records[0].Stdin)
	assert.Equal(t, os.Getpid(), records[1].PID)
}

func TestWorkerFlags(t *testing.T) {
	role, lifetime, daemon := workerFlags([]string{"--marker=m", "--role=linger", "--lifetime=1h2m"})
	assert.Equal(t, "linger", role)
	assert.Equal(t, time.Hour+2*time.Minute, lifetime)
	assert.False(t, daemon)
	role, lifetime, daemon = workerFlags([]string{"--lifetime=bogus", "--daemon"})
	assert.Empty(t, role)
	assert.Equal(t, time.Minute, lifetime)
	assert.True(t, daemon)
}

// tempFile returns a new empty file's path, removed at cleanup with
// os.Remove (t.TempDir's os.RemoveAll fails under Wine 8).
func tempFile(t *testing.T) string {
	t.Helper()
	f, err := os.CreateTemp("", "agentsim-*.jsonl")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	t.Cleanup(func() { os.Remove(f.Name()) })
	return f.Name()
}
