package mcpbridge

import (
	"bufio"
	"context"
	"encoding/json/v2"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpstage"
)

// envEveryServer makes this test binary an agent CLI that, once a line
// comes on its stdin, like Cursor with --approve-mcps starts every server
// of its working directory's .cursor/mcp.json, lists each one's tools and
// prints, as one JSON object, the tools of each server that answered (a
// server that did not is left out).
const envEveryServer = "CURSORKIT_TEST_MCP_EVERY_SERVER"

// listEveryServer is that agent's body.
func listEveryServer() int {
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return 1
	}
	data, err := os.ReadFile(filepath.Join(".cursor", "mcp.json"))
	if err != nil {
		return 1
	}
	var config struct {
		Servers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &config); err != nil {
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	seen := map[string][]string{}
	var wg sync.WaitGroup
	for key, entry := range config.Servers {
		wg.Go(func() {
			cmd := exec.Command(entry.Command, entry.Args...)
			cmd.Env = os.Environ()
			for k, v := range entry.Env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "every-server", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				return // the server did not start or was refused
			}
			defer cs.Close()
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				return
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			mu.Lock()
			seen[key] = names
			mu.Unlock()
		})
	}
	wg.Wait()
	out, err := json.Marshal(seen)
	if err != nil {
		return 1
	}
	fmt.Println(string(out))
	return 0
}

// TestFiftySessionsOnOneWorktreeEachSeeOnlyTheirOwnTools: 50 bridges,
// each with a tool of its own, staged into one worktree's .cursor/mcp.json
// as Cursor turns have them; 50 agents that each start every staged server
// (as Cursor does) see exactly their own session's tool: every other
// session's bridge program refuses an agent its session did not admit.
//
// Under Wine, where a process start costs a tenth of a second, 8 sessions
// (64 bridge programs instead of 2,500) make the same point.
func TestFiftySessionsOnOneWorktreeEachSeeOnlyTheirOwnTools(t *testing.T) {
	sessions := 50
	if testkit.UnderWine() {
		sessions = 8
	}
	dir := testkit.TempDir(t)
	stager, err := mcpstage.New(context.Background(), dir, mcpstage.Options{})
	require.NoError(t, err)
	bridges := make([]*Bridge, sessions)
	keys := make([]string, sessions)
	for i := range bridges {
		bridges[i] = openUnadmitted(t, []Tool{echoTool(fmt.Sprintf("tool_%d", i))}, Options{})
		s := bridges[i].Server()
		lease, err := stager.Stage(context.Background(), mcpstage.Entry{Command: os.Args[0], Args: s.Args, Env: s.Env})
		require.NoError(t, err)
		keys[i] = lease.Key
		t.Cleanup(func() { stager.Release(context.Background(), lease.ID) })
	}

	// Every agent is started and admitted by its session before any of
	// them starts the servers, as turns that run at once are.
	agents := make([]*exec.Cmd, sessions)
	gos := make([]io.WriteCloser, sessions)
	outs := make([]io.Reader, sessions)
	for i, b := range bridges {
		agents[i] = exec.Command(os.Args[0], "-test.run=^$")
		agents[i].Dir = dir
		agents[i].Env = append(os.Environ(), envEveryServer+"=1")
		gos[i], err = agents[i].StdinPipe()
		require.NoError(t, err)
		outs[i], err = agents[i].StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, agents[i].Start())
		t.Cleanup(func() { agents[i].Process.Kill(); agents[i].Wait() })
		b.Admit(agents[i].Process.Pid) // as agents.Agent.Run does when its agent starts
	}
	seen := make([]map[string][]string, sessions)
	limit := make(chan struct{}, 4) // agents at work at once: each starts 50 bridge programs
	var wg sync.WaitGroup
	for i := range agents {
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			_, err := io.WriteString(gos[i], "go\n")
			assert.NoError(t, err)
			assert.NoError(t, json.UnmarshalRead(outs[i], &seen[i]), "agent %d", i)
			assert.NoError(t, agents[i].Wait(), "agent %d", i)
		})
	}
	wg.Wait()
	for i := range seen {
		assert.Equal(t, map[string][]string{keys[i]: {fmt.Sprintf("fn_tool_%d", i)}}, seen[i], "session %d", i)
	}
}
