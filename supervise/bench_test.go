package supervise

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// p1Bytes is the P1 stream: 100 MB of 500-byte NDJSON lines.
const p1Bytes = 100_000_000

// BenchmarkP1Throughput measures, in one run, a child writing p1Bytes of
// NDJSON read three ways: the raw pipe (64 KiB reads discarded: the pipe's
// limit), supervise (line splitting, deadline bookkeeping, OnLine per
// line), and, when node is on PATH, Node's child_process.spawn + readline
// with a per-line setTimeout reset (testdata/bench/node-readline.js). It
// reports MB/s for each and the ratios to the pipe; the goal is
// supervise/pipe >= 0.8.
func BenchmarkP1Throughput(b *testing.B) {
	exe, err := os.Executable()
	require.NoError(b, err)
	total := int64(p1Bytes) / int64(len(genLine)) * int64(len(genLine))
	genArgs := []string{"gen", strconv.FormatInt(total, 10)}
	node, nodeErr := exec.LookPath("node")
	script, _ := filepath.Abs(filepath.Join("testdata", "bench", "node-readline.js"))

	var pipeTime, superviseTime, nodeTime time.Duration
	runs := 0
	for b.Loop() {
		runs++
		// The raw pipe.
		cmd := exec.Command(exe, genArgs[1])
		cmd.Env = testkit.ChildEnv("gen")
		out, err := cmd.StdoutPipe()
		require.NoError(b, err)
		t0 := time.Now()
		require.NoError(b, cmd.Start())
		// 64 KiB reads like supervise's; io.Copy to io.Discard alone would
		// read 8 KiB at a time and flatter the comparison.
		n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, struct{ io.Reader }{out}, make([]byte, 64<<10))
		require.NoError(b, err)
		require.NoError(b, cmd.Wait())
		pipeTime += time.Since(t0)
		require.Equal(b, total, n)

		// supervise.
		var lines int64
		t0 = time.Now()
		o := Run(context.Background(), selfPlan(b, genArgs[1]), Options{
			Env:              testkit.ChildEnv("gen"),
			FirstLineTimeout: 30 * time.Second,
			IdleTimeout:      120 * time.Second,
			OnLine:           func([]byte) error { lines++; return nil },
		})
		superviseTime += time.Since(t0)
		require.NoError(b, o.Err)
		require.Equal(b, total, o.Bytes)
		require.Equal(b, total/int64(len(genLine)), lines)

		// Node, timed inside the script from spawn to close.
		if nodeErr == nil {
			cmd := exec.Command(node, script, exe, genArgs[1])
			cmd.Env = testkit.ChildEnv("gen")
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			cmd.Stderr = os.Stderr
			require.NoError(b, cmd.Run())
			var res struct {
				Lines int64   `json:"lines"`
				Bytes int64   `json:"bytes"`
				MS    float64 `json:"ms"`
			}
			require.NoError(b, json.Unmarshal(stdout.Bytes(), &res))
			require.Equal(b, total, res.Bytes)
			nodeTime += time.Duration(res.MS * float64(time.Millisecond))
		}
	}
	mbps := func(d time.Duration) float64 { return float64(total) * float64(runs) / 1e6 / d.Seconds() }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(mbps(pipeTime), "pipe-MB/s")
	b.ReportMetric(mbps(superviseTime), "supervise-MB/s")
	b.ReportMetric(float64(pipeTime)/float64(superviseTime), "supervise/pipe")
	if nodeErr == nil {
		b.ReportMetric(mbps(nodeTime), "node-MB/s")
		b.ReportMetric(float64(pipeTime)/float64(nodeTime), "node/pipe")
	} else {
		b.Logf("node not found, Node baseline skipped: %v", nodeErr)
	}
}

// BenchmarkP3KillLatency measures, for a tree of 10 processes (the child
// and nine grandchildren, one of them setsid on POSIX), the time from the
// inactivity deadline firing to the whole tree killed and the child
// reaped, with no grace (Outcome.StopTook), and reports the median. Every
// run also checks that no process of the tree survived.
func BenchmarkP3KillLatency(b *testing.B) {
	const trees = 15
	kinds := []string{"group", "group", "group", "group", "group", "group", "group", "group", treeKinds[len(treeKinds)-1]}
	var took []time.Duration
	for b.Loop() {
		for range trees {
			w := testkit.NewWatch(b)
			marker := w.Marker()
			ready := newReadyPIDs()
			s, err := Start(context.Background(), selfPlan(b, append([]string{marker}, kinds...)...), Options{
				Env:         testkit.ChildEnv("tree"),
				IdleTimeout: time.Second,
				StopGrace:   0,
				OnLine:      ready.onLine,
			})
			require.NoError(b, err)
			select {
			case <-ready.allReady:
			case <-s.Done():
				b.Fatalf("tree ended early: %+v", s.Wait())
			}
			w.Add(ready.pids...)
			o := s.Wait()
			require.Equal(b, IdleTimeout, o.Ending, "%v", o.Err)
			require.Equal(b, StopForced, o.Stop)
			took = append(took, o.StopTook)
			require.Empty(b, w.Alive(), "survivors of the tree")
		}
	}
	slices.Sort(took)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(took[len(took)/2])/1e6, "median-ms")
	b.ReportMetric(float64(took[len(took)-1])/1e6, "max-ms")
}

// BenchmarkReadStdoutHotPath is the per-line cost of a Session without a
// process: the activity stamp per read, the line splitter, first-line
// bookkeeping and an OnLine call, over 1 MB of 500-byte lines held in
// memory. Allocations are per run (the read buffer), never per line.
func BenchmarkReadStdoutHotPath(b *testing.B) {
	input := bytes.Repeat(genLine, 2000)
	r := bytes.NewReader(input)
	var lines int
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		s := &Session{start: time.Now(), firstLineCh: make(chan struct{}), opts: Options{OnLine: func([]byte) error { lines++; return nil }}.normalized()}
		s.firstLine.Store(-1)
		r.Reset(input)
		s.readStdout(r)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(lines), "ns/line")
}
