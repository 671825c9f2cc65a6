package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/stream"
	"github.com/cursorkit/cursorkit/supervise"
)

const (
	// p2Bytes is the P2 stream: 100 MB of assistant events (1 KiB of text
	// each, the simulator's default chunk).
	p2Bytes = 100_000_000
	// p2Rounds of alternating runs give the medians P2 reports.
	p2Rounds = 3
)

// p2Stream is the simulator's environment for the P2 turn.
func p2Stream() []string {
	return withEnv(agentsim.Scenario(agentsim.ScenarioBigStream), agentsim.EnvStreamBytes+"="+strconv.Itoa(p2Bytes))
}

// p2Baselines are P2's two baselines over the same simulator turn: the raw
// pipe read with io.Copy to io.Discard, and testdata/p2-node.js (readline +
// per-line setTimeout reset + JSON.parse). Each returns the wall time of
// one complete turn, process start included.
type p2Baselines struct {
	b    *testing.B
	sim  string
	node string
	env  []string
}

func (p p2Baselines) pipe() time.Duration {
	return timed(func() {
		cmd := exec.Command(p.sim, turnArgs()...)
		cmd.Env = p.env
		cmd.Stdin = strings.NewReader(prompt)
		out, err := cmd.StdoutPipe()
		require.NoError(p.b, err)
		require.NoError(p.b, cmd.Start())
		n, err := io.Copy(io.Discard, out)
		require.NoError(p.b, err)
		require.NoError(p.b, cmd.Wait())
		require.Greater(p.b, n, int64(p2Bytes))
	})
}

func (p p2Baselines) viaNode() time.Duration {
	var res struct {
		Lines  int64 `json:"lines"`
		Bytes  int64 `json:"bytes"`
		Result bool  `json:"result"`
	}
	d := timed(func() {
		cmd := exec.Command(p.node, append([]string{script(p.b, "p2-node.js"), p.sim}, turnArgs()...)...)
		cmd.Env = p.env
		runJSON(p.b, cmd, &res)
	})
	require.True(p.b, res.Result, "Node saw no result event")
	require.Greater(p.b, res.Bytes, int64(p2Bytes))
	return d
}

// reportP2 reports the medians of the subject and its baselines as MB/s of
// agent stream and as ratios: subject/pipe (goal >= 0.5) and how many
// times faster than Node the subject is (goal >= 5).
func reportP2(b *testing.B, subject string, got, pipe, node []time.Duration) {
	mbps := func(d time.Duration) float64 { return p2Bytes / 1e6 / d.Seconds() }
	g, p := median(got), median(pipe)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(mbps(p), "pipe-MB/s")
	b.ReportMetric(mbps(g), subject+"-MB/s")
	b.ReportMetric(p.Seconds()/g.Seconds(), subject+"/pipe")
	if len(node) > 0 {
		n := median(node)
		b.ReportMetric(mbps(n), "node-MB/s")
		b.ReportMetric(n.Seconds()/g.Seconds(), subject+"/node")
		b.ReportMetric(p.Seconds()/n.Seconds(), "node/pipe")
	}
}

// BenchmarkP2StreamInProcess is P2 without the command around it: the
// 100 MB turn supervised in this process with the CLI's deadlines, every
// line fed to stream.Turn and every output encoded as `run --json` NDJSON
// into a buffered io.Discard, against the raw pipe and Node in the same
// run (medians of three alternating rounds). It also reports supervise
// alone on the same stream (lines counted, nothing decoded), which tells
// the line reader's share of the cost from the decoder's.
func BenchmarkP2StreamInProcess(b *testing.B) {
	t := buildTools(b)
	base := p2Baselines{b: b, sim: t.sim, node: nodePath(b), env: p2Stream()}
	plan, err := shim.Build(discovery.Resolution{Path: t.sim, Name: filepath.Base(t.sim), Kind: discovery.Native}, turnArgs(), shim.OptionsFromOS())
	require.NoError(b, err)
	policy, err := stream.NewPolicy(stream.ModeDefault)
	require.NoError(b, err)
	var pipe, got, node, lineOnly []time.Duration
	for b.Loop() {
		for range p2Rounds {
			pipe = append(pipe, base.pipe())
			lineOnly = append(lineOnly, timed(func() {
				var lines int64
				o := supervise.Run(context.Background(), plan, supervise.Options{
					Env:              base.env,
					Stdin:            strings.NewReader(prompt),
					FirstLineTimeout: 30 * time.Second,
					IdleTimeout:      120 * time.Second,
					OnLine:           func([]byte) error { lines++; return nil },
				})
				require.NoError(b, o.Err)
				require.Greater(b, lines, int64(p2Bytes/2048))
			}))
			got = append(got, timed(func() {
				out := bufio.NewWriterSize(io.Discard, 64<<10)
				lines, err := superviseTurn(context.Background(), plan, policy, base.env, out, func(bool) {})
				require.NoError(b, err)
				require.NoError(b, out.Flush())
				require.Greater(b, lines, int64(p2Bytes/2048))
			}))
			if base.node != "" {
				node = append(node, base.viaNode())
			}
		}
	}
	reportP2(b, "stream", got, pipe, node)
	b.ReportMetric(p2Bytes/1e6/median(lineOnly).Seconds(), "supervise-MB/s")
	b.ReportMetric(median(pipe).Seconds()/median(lineOnly).Seconds(), "supervise/pipe")
}

// BenchmarkP2RunJSON is P2: the built `cursorkit run --json` over the
// 100 MB turn with its stdout on the null device, against the raw pipe and
// Node in the same run (medians of three alternating rounds; wall time of
// whole processes, cursorkit's probe and Node's start included). It also
// reports the peak RSS of run and of the Node script over the same turn.
func BenchmarkP2RunJSON(b *testing.B) {
	t := buildTools(b)
	base := p2Baselines{b: b, sim: t.sim, node: nodePath(b), env: p2Stream()}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	require.NoError(b, err)
	defer devNull.Close()
	cursorkit := func(stdout io.Writer) (int, string) {
		cmd := exec.Command(t.cursorkit, "--binary", t.sim, "run", "--json", "--", prompt)
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
	runCmd := exec.Command(t.cursorkit, "--binary", t.sim, "run", "--json", "--", prompt)
	runCmd.Env, runCmd.Stdout = base.env, devNull
	runRSS, rssOK := peakRSSKB(b, runCmd)
	var nodeRSS int64
	if rssOK && base.node != "" {
		nodeCmd := exec.Command(base.node, append([]string{script(b, "p2-node.js"), t.sim}, turnArgs()...)...)
		nodeCmd.Env, nodeCmd.Stdout = base.env, devNull
		nodeRSS, _ = peakRSSKB(b, nodeCmd)
	}

	var pipe, got, node []time.Duration
	for b.Loop() {
		for range p2Rounds {
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
	reportP2(b, "run", got, pipe, node)
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
