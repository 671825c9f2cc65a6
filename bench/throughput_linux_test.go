package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json/v2"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/bench/internal/turns"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
)

const (
	// streamBytes is the throughput turn: 100 MB of assistant events
	// (1 KiB of text each, the simulator's default chunk).
	streamBytes = 100_000_000
	// streamRounds of alternating runs give the medians the throughput
	// benchmarks report.
	streamRounds = 5
)

// bigStreamEnv is the simulator's environment for the throughput turn.
func bigStreamEnv() []string {
	return withEnv(agentsim.Scenario(agentsim.ScenarioBigStream), agentsim.EnvStreamBytes+"="+strconv.Itoa(streamBytes))
}

// streamBaselines are the two baselines of the throughput benchmarks over
// the same simulator turn: the raw pipe read with io.Copy to io.Discard,
// and testdata/node-stream.js (readline + per-line setTimeout reset +
// JSON.parse). Each returns the wall time of one complete turn, process
// start included.
type streamBaselines struct {
	b    *testing.B
	sim  string
	node string
	env  []string
	// args is sim's argv after the program; nil is turnArgs() (the
	// cursor-agent simulator's turn).
	args []string
	// final is the type of the stream's last event, which the Node script
	// reports as its result flag; "" is "result".
	final string
}

// argv is the argv after the program the baselines start sim with.
func (p streamBaselines) argv() []string {
	if p.args != nil {
		return p.args
	}
	return turnArgs()
}

func (p streamBaselines) pipe() time.Duration {
	return timed(func() {
		cmd := exec.Command(p.sim, p.argv()...)
		cmd.Env = p.env
		cmd.Stdin = strings.NewReader(turns.Prompt)
		out, err := cmd.StdoutPipe()
		require.NoError(p.b, err)
		require.NoError(p.b, cmd.Start())
		n, err := io.Copy(io.Discard, out)
		require.NoError(p.b, err)
		require.NoError(p.b, cmd.Wait())
		require.Greater(p.b, n, int64(streamBytes))
	})
}

func (p streamBaselines) viaNode() time.Duration {
	var res struct {
		Lines  int64 `json:"lines"`
		Bytes  int64 `json:"bytes"`
		Result bool  `json:"result"`
	}
	argv := []string{script(p.b, "node-stream.js")}
	if p.final != "" {
		argv = append(argv, "--final-type="+p.final)
	}
	argv = append(append(argv, p.sim), p.argv()...)
	d := timed(func() {
		cmd := exec.Command(p.node, argv...)
		cmd.Env = p.env
		runJSON(p.b, cmd, &res)
	})
	require.True(p.b, res.Result, "Node saw no final event (%s)", cmp.Or(p.final, "result"))
	require.Greater(p.b, res.Bytes, int64(streamBytes))
	return d
}

// reportThroughput reports the medians of the subject and its baselines
// as MB/s of agent stream, and the subject's speed relative to each
// baseline: SUBJECT/pipe-speed (pipe time over subject time: 1 is the
// pipe's speed) and SUBJECT/node-speed (Node's time over the subject's:
// how many times faster than Node; the run --json floor is >= 1.0).
func reportThroughput(b *testing.B, subject string, got, pipe, node []time.Duration) {
	mbps := func(d time.Duration) float64 { return streamBytes / 1e6 / d.Seconds() }
	g, p := median(got), median(pipe)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(mbps(p), "pipe-MB/s")
	b.ReportMetric(mbps(g), subject+"-MB/s")
	b.ReportMetric(p.Seconds()/g.Seconds(), subject+"/pipe-speed")
	if len(node) > 0 {
		n := median(node)
		b.ReportMetric(mbps(n), "node-MB/s")
		b.ReportMetric(n.Seconds()/g.Seconds(), subject+"/node-speed")
		b.ReportMetric(p.Seconds()/n.Seconds(), "node/pipe-speed")
	}
}

// BenchmarkStreamInProcess is BenchmarkRunJSONThroughput without the
// command around it: the 100 MB turn run in this process by cursor.Run
// with cursor.TurnDefaults (supervise, the cursor Decoder, turn.Run's
// verdict), every event written with event.NewWriter, as `run --json`
// does, into a buffered io.Discard, against the raw pipe and Node in the
// same run (medians of five alternating rounds). It also reports
// supervise alone on the same stream (lines counted, nothing decoded),
// which tells the line reader's share of the cost from the decoder's and
// the encoder's.
func BenchmarkStreamInProcess(b *testing.B) {
	t := buildTools(b)
	base := streamBaselines{b: b, sim: t.sim, node: nodePath(b), env: bigStreamEnv()}
	bin := turns.SimBinary(t.sim)
	plan, err := shim.Build(bin.Resolution, turnArgs(), shim.OptionsFromOS())
	require.NoError(b, err)
	var pipe, got, node, lineOnly []time.Duration
	for b.Loop() {
		for range streamRounds {
			pipe = append(pipe, base.pipe())
			lineOnly = append(lineOnly, timed(func() {
				var lines int64
				_, err := supervise.Run(context.Background(), plan, supervise.Options{
					Env:              base.env,
					Stdin:            strings.NewReader(turns.Prompt),
					FirstLineTimeout: cursor.TurnDefaults().FirstLineTimeout,
					IdleTimeout:      cursor.TurnDefaults().IdleTimeout,
					OnLine:           func([]byte) error { lines++; return nil },
				})
				require.NoError(b, err)
				require.Greater(b, lines, int64(streamBytes/2048))
			}))
			got = append(got, timed(func() {
				out := bufio.NewWriterSize(io.Discard, 64<<10)
				lines, err := turns.Run(context.Background(), bin, base.env, event.NewWriter(out), func() { _ = out.Flush() }, nil)
				require.NoError(b, err)
				require.NoError(b, out.Flush())
				require.Greater(b, lines, int64(streamBytes/2048))
			}))
			if base.node != "" {
				node = append(node, base.viaNode())
			}
		}
	}
	reportThroughput(b, "stream", got, pipe, node)
	b.ReportMetric(streamBytes/1e6/median(lineOnly).Seconds(), "supervise-MB/s")
	b.ReportMetric(median(pipe).Seconds()/median(lineOnly).Seconds(), "supervise/pipe-speed")
}

// BenchmarkRunJSONThroughput is the built `cursorkit run --json` over the
// 100 MB turn with its stdout on the null device, against the raw pipe and
// Node in the same run (medians of five alternating rounds; wall time of
// whole processes, cursorkit's probe and Node's start included). Floor:
// run/node-speed >= 1.0. It also reports the peak RSS of run and of the
// Node script over the same turn; goal: run/node-rss <= 1/3.
func BenchmarkRunJSONThroughput(b *testing.B) {
	t := buildTools(b)
	base := streamBaselines{b: b, sim: t.sim, node: nodePath(b), env: bigStreamEnv()}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(b, err)
	defer devNull.Close()
	cursorkit := func(stdout io.Writer) (int, string) {
		cmd := exec.Command(t.cursorkit, "--binary", t.sim, "run", "--json", "--", turns.Prompt)
		cmd.Env = base.env
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = stdout, &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), stderr.String()
		}
		require.NoError(b, err)
		return 0, stderr.String()
	}
	// One checked turn first: the last line is a done outcome.
	var out bytes.Buffer
	code, stderr := cursorkit(&out)
	require.Equal(b, 0, code, "cursorkit run --json: %s", stderr)
	last := out.Bytes()[bytes.LastIndexByte(bytes.TrimRight(out.Bytes(), "\n"), '\n')+1:]
	var outcome struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	}
	require.NoError(b, json.Unmarshal(last, &outcome), "last line %q", last)
	require.Equal(b, "outcome", outcome.Type)
	require.Equal(b, "done", outcome.Status)
	out = bytes.Buffer{}

	// Peak RSS of each consumer over the same turn, measured apart from
	// the timed runs.
	runCmd := exec.Command(t.cursorkit, "--binary", t.sim, "run", "--json", "--", turns.Prompt)
	runCmd.Env, runCmd.Stdout = base.env, devNull
	runRSS, rssOK := peakRSSKB(b, runCmd)
	var nodeRSS int64
	if rssOK && base.node != "" {
		nodeCmd := exec.Command(base.node, append([]string{script(b, "node-stream.js"), t.sim}, turnArgs()...)...)
		nodeCmd.Env, nodeCmd.Stdout = base.env, devNull
		nodeRSS, _ = peakRSSKB(b, nodeCmd)
	}

	var pipe, got, node []time.Duration
	for b.Loop() {
		for range streamRounds {
			pipe = append(pipe, base.pipe())
			got = append(got, timed(func() {
				code, stderr := cursorkit(devNull)
				require.Equal(b, 0, code, "cursorkit run --json: %s", stderr)
			}))
			if base.node != "" {
				node = append(node, base.viaNode())
			}
		}
	}
	reportThroughput(b, "run", got, pipe, node)
	if rssOK {
		b.ReportMetric(float64(runRSS)/1024, "run-rss-MB")
		if nodeRSS > 0 {
			b.ReportMetric(float64(nodeRSS)/1024, "node-rss-MB")
			b.ReportMetric(float64(runRSS)/float64(nodeRSS), "run/node-rss")
		}
	}
}

// peakRSSKB runs cmd under GNU time and returns its peak RSS in KiB
// (wait4's ru_maxrss: the process and the children it reaped, here a
// simulator of a few MB; GNU time's own small footprint is the floor, where
// a Go parent's would be hundreds of MB, because Linux carries ru_maxrss
// over execve). ok is false, with a log line, without /usr/bin/time.
func peakRSSKB(b *testing.B, cmd *exec.Cmd) (kb int64, ok bool) {
	b.Helper()
	const gnuTime = "/usr/bin/time"
	if _, err := os.Stat(gnuTime); err != nil {
		b.Logf("no %s: peak RSS not measured (%v)", gnuTime, err)
		return 0, false
	}
	out := filepath.Join(b.TempDir(), "rss")
	wrapped := exec.Command(gnuTime, append([]string{"-f", "%M", "-o", out, cmd.Path}, cmd.Args[1:]...)...)
	wrapped.Env, wrapped.Stdin, wrapped.Stdout = cmd.Env, cmd.Stdin, cmd.Stdout
	var stderr bytes.Buffer
	wrapped.Stderr = &stderr
	require.NoError(b, wrapped.Run(), "%s: %s", cmd.Path, stderr.String())
	text, err := os.ReadFile(out)
	require.NoError(b, err)
	fields := strings.Fields(string(text))
	require.NotEmpty(b, fields, "GNU time wrote nothing")
	kb, err = strconv.ParseInt(fields[len(fields)-1], 10, 64)
	require.NoError(b, err, "GNU time wrote %q", text)
	return kb, true
}
