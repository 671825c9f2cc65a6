package mcpbridge

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// envEmbedder makes this test binary an embedding program: it opens a
// bridge with one tool, fn_block, that marks the directory the variable
// names when called and then never answers, and writes its Server there.
const envEmbedder = "CURSORKIT_TEST_MCP_EMBEDDER"

// envIdle makes this test binary a process that does nothing until its
// stdin ends.
const envIdle = "CURSORKIT_TEST_MCP_IDLE"

// startIdle starts an idle process and returns its PID; it ends with t.
func startIdle(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envIdle+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	return cmd.Process.Pid
}

func TestMain(m *testing.M) {
	// This test binary is also the bridge program its bridges name.
	RunIfBridge()
	if dir := os.Getenv(envEmbedder); dir != "" {
		os.Exit(embed(dir))
	}
	if os.Getenv(envEveryServer) != "" {
		os.Exit(listEveryServer())
	}
	if os.Getenv(envIdle) != "" {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func embed(dir string) int {
	block := Tool{Name: "block", InputSchema: jsontext.Value(`{"type":"object"}`),
		Handle: func(ctx context.Context, _ jsontext.Value) (string, error) {
			os.WriteFile(filepath.Join(dir, "called"), nil, 0o600)
			select {}
		}}
	b, err := Open(context.Background(), []Tool{block}, Options{})
	if err != nil {
		return 1
	}
	b.Admit(os.Getppid()) // the test, which starts the bridge program
	data, err := json.Marshal(b.Server())
	if err != nil {
		return 1
	}
	if err := os.WriteFile(filepath.Join(dir, "server.json.tmp"), data, 0o600); err != nil {
		return 1
	}
	if err := os.Rename(filepath.Join(dir, "server.json.tmp"), filepath.Join(dir, "server.json")); err != nil {
		return 1
	}
	select {}
}

// TestAKilledEmbedderLeavesNoBridgeProgram: the embedder is killed (kill
// -9, TerminateProcess) while a call is in its handler; the bridge program
// the CLI started exits at once, and the call ends with an error.
func TestAKilledEmbedderLeavesNoBridgeProgram(t *testing.T) {
	dir := testkit.TempDir(t)
	embedder := exec.Command(os.Args[0], "-test.run=^$")
	embedder.Env = append(os.Environ(), envEmbedder+"="+dir)
	require.NoError(t, embedder.Start())
	embedderGone := make(chan struct{})
	go func() { embedder.Wait(); close(embedderGone) }()
	t.Cleanup(func() { embedder.Process.Kill(); <-embedderGone })

	var server Server
	testkit.Eventually(t, "the embedder to open its bridge", 20*time.Second, func() bool {
		data, err := os.ReadFile(filepath.Join(dir, "server.json"))
		return err == nil && json.Unmarshal(data, &server) == nil
	})

	// The bridge program, started as a CLI starts an MCP server.
	bridge := exec.Command(server.Command, server.Args...)
	bridge.Env = os.Environ()
	for k, v := range server.Env {
		bridge.Env = append(bridge.Env, k+"="+v)
	}
	stdin, err := bridge.StdinPipe()
	require.NoError(t, err)
	stdout, err := bridge.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, bridge.Start())
	bridgeGone := make(chan struct{})
	go func() { bridge.Wait(); close(bridgeGone) }()
	t.Cleanup(func() { bridge.Process.Kill(); <-bridgeGone })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	require.NoError(t, err)
	defer cs.Close()
	callErr := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fn_block", Arguments: map[string]any{}})
		callErr <- err
	}()
	testkit.Eventually(t, "the call to reach the handler", 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, "called"))
		return err == nil
	})

	require.NoError(t, embedder.Process.Kill())
	select {
	case <-bridgeGone:
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge program outlived its embedder")
	}
	select {
	case err := <-callErr:
		assert.Error(t, err, "the call in flight ends with an error")
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight never ended")
	}
}
