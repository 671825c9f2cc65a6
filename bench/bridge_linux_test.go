package bench

import (
	"context"
	"encoding/json/jsontext"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/bench/internal/turns"
	"github.com/cursorkit/cursorkit/mcpbridge"
)

// bridgeCalls is how many tool calls BenchmarkBridgeRoundTrip times.
const bridgeCalls = 2000

// BenchmarkBridgeRoundTrip: a tool call through the MCP tool bridge as an
// agent CLI makes it, timed from the agent's side. The built cursorkit is
// the bridge program, started as a CLI starts an MCP server (its Command,
// Args and Env, stdio pipes); an MCP client (the official SDK's, standing
// in for the CLI) calls the bridged tool bridgeCalls times in a row, each
// answered by a handler in this process: request → bridge program →
// loopback → the embedder's MCP server → handler → back. roundtrip-p50-ms
// and roundtrip-p99-ms are the calls' median and 99th percentile
// (goal: p50 <= 2 ms); bridge-rss-MB is the bridge program's peak RSS.
// The baseline, in the same run: the same calls of the same tool on an
// MCP server of the SDK's in this process over its in-memory transport
// (no bridge, no process, no socket): direct-p50-ms, and bridge/direct,
// the bridge's p50 over that one.
func BenchmarkBridgeRoundTrip(b *testing.B) {
	tools := buildTools(b)
	lookup := mcpbridge.Tool{Name: "lookup_word", InputSchema: jsontext.Value(`{"type":"object"}`),
		Handle: func(context.Context, jsontext.Value) (string, error) { return "a small domesticated carnivore", nil }}
	br, err := mcpbridge.Open(context.Background(), []mcpbridge.Tool{lookup}, mcpbridge.Options{})
	require.NoError(b, err)
	defer br.Close()
	br.Admit(os.Getpid()) // this process starts the bridge program
	s := br.Server()

	bridge := exec.Command(tools.cursorkit, s.Args...)
	bridge.Env = os.Environ()
	for k, v := range s.Env {
		bridge.Env = append(bridge.Env, k+"="+v)
	}
	stdin, err := bridge.StdinPipe()
	require.NoError(b, err)
	stdout, err := bridge.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, bridge.Start())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	require.NoError(b, err)

	rounds := make([]time.Duration, 0, bridgeCalls)
	params := &mcp.CallToolParams{Name: mcpbridge.Prefix + lookup.Name, Arguments: map[string]any{"word": "cat"}}
	for b.Loop() {
		for range bridgeCalls {
			start := time.Now()
			res, err := cs.CallTool(ctx, params)
			rounds = append(rounds, time.Since(start))
			require.NoError(b, err)
			require.False(b, res.IsError)
		}
	}
	// Its peak RSS is read while it runs, before the CLI closing the
	// bridge's stdin ends it.
	rssKB, err := turns.VMHWM(strconv.Itoa(bridge.Process.Pid))
	require.NoError(b, err)
	require.NoError(b, cs.Close())
	require.NoError(b, bridge.Wait())
	direct := directRoundTrips(b, ctx, lookup)
	slices.Sort(rounds)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(rounds[len(rounds)/2]), "roundtrip-p50-ms")
	b.ReportMetric(ms(direct), "direct-p50-ms")
	b.ReportMetric(float64(rounds[len(rounds)/2])/float64(direct), "bridge/direct")
	b.ReportMetric(ms(rounds[len(rounds)*99/100]), "roundtrip-p99-ms")
	b.ReportMetric(float64(rssKB)/1024, "bridge-rss-MB")
}

// directRoundTrips is BenchmarkBridgeRoundTrip's baseline: bridgeCalls
// calls of tool on an SDK server in this process, over the SDK's
// in-memory transport; it returns their median.
func directRoundTrips(b *testing.B, ctx context.Context, tool mcpbridge.Tool) time.Duration {
	b.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: mcpbridge.Prefix + tool.Name, InputSchema: tool.InputSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text, err := tool.Handle(ctx, jsontext.Value(req.Params.Arguments))
			require.NoError(b, err)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	clientEnd, serverEnd := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverEnd, nil)
	require.NoError(b, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
	require.NoError(b, err)
	defer cs.Close()
	params := &mcp.CallToolParams{Name: mcpbridge.Prefix + tool.Name, Arguments: map[string]any{"word": "cat"}}
	rounds := make([]time.Duration, 0, bridgeCalls)
	for range bridgeCalls {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		rounds = append(rounds, time.Since(start))
		require.NoError(b, err)
		require.False(b, res.IsError)
	}
	return median(rounds)
}
