package supervise

import (
	"bytes"
	"context"
	"encoding/json/v2"
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

// pipeBytes is BenchmarkPipeThroughput's stream: 100 MB of 500-byte
// NDJSON lines.
const pipeBytes = 100_000_000

// BenchmarkPipeThroughput measures, in one run, a child writing pipeBytes of
// NDJSON read three ways: the raw pipe (64 KiB reads discarded: the pipe's
// limit), supervise (line splitting, deadline bookkeeping, OnLine per
// line), and, when node is on PATH, Node's child_process.spawn + readline
// with a per-line setTimeout reset (testdata/bench/node-readline.js). It
// reports MB/s for each and the ratios to the pipe; the goal is
// supervise/pipe >= 0.8.
func BenchmarkPipeThroughput(b *testing.B) {
	exe, err := os.Executable()
	require.NoError(b, err)
	total := int64(pipeBytes) / int64(len(genLine)) * int64(len(genLine))
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
		o, err := Run(context.Background(), selfPlan(b, genArgs[1]), Options{
			Env:              testkit.ChildEnv("gen"),
			FirstLineTimeout: 30 * time.Second,
			IdleTimeout:      120 * time.Second,
			OnLine:           func([]byte) error { lines++; return nil },
		})
		superviseTime += time.Since(t0)
		require.NoError(b, err)
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

// BenchmarkKillLatency measures, for a tree of 10 processes (the child
// and nine grandchildren, one of them setsid on POSIX), the time from the
// inactivity deadline firing to the whole tree killed and the child
// reaped, with no grace (Outcome.StopTook), and reports the median and the
// maximum. Every tree is checked for survivors afterwards; survivors
// reports how many processes outlived their tree in all (the goal is a
// median <= 10 ms and a maximum <= 20 ms, with none).
//
// The inactivity deadline (1 s) must not fire while the tree starts: on a
// loaded machine one grandchild can take longer than that to report ready.
// So the Session reads nothing of the child's stdout until the child has
// written "all-ready" (quietUntilReady); until then only a first-line
// deadline of waitLimit runs, and the inactivity deadline counts from the
// moment the whole tree is up. What is measured, the stop after the
// deadline, is untouched.
func BenchmarkKillLatency(b *testing.B) {
	const trees = 15
	kinds := []string{"group", "group", "group", "group", "group", "group", "group", "group", treeKinds[len(treeKinds)-1]}
	var took []time.Duration
	survivors := 0
	for b.Loop() {
		for range trees {
			w := testkit.NewWatch(b)
			marker := w.Marker()
			ready := newReadyPIDs()
			plan := selfPlan(b, append([]string{marker}, kinds...)...)
			opts := Options{
				Env:              testkit.ChildEnv("tree"),
				FirstLineTimeout: waitLimit,
				IdleTimeout:      time.Second,
				StopGrace:        0,
				OnLine:           ready.onLine,
			}
			ctx := context.Background()
			s, err := start(ctx, opts, func() (child, error) {
				c, err := startLaunch(ctx, plan, opts)
				if err != nil {
					return nil, err
				}
				return quietUntilReady(c), nil
			})
			require.NoError(b, err)
			select {
			case <-ready.allReady:
			case <-s.Done():
				o := ranOf(s.Wait())
				b.Fatalf("tree ended early: %s %v, stderr %q", o.Ending, o.Err, o.StderrTail)
			}
			w.Add(ready.pids...)
			o := ranOf(s.Wait())
			require.Equal(b, IdleTimeout, o.Ending, "%v", o.Err)
			require.Equal(b, StopForced, o.Stop)
			took = append(took, o.StopTook)
			if alive := w.Alive(); len(alive) > 0 {
				survivors += len(alive)
				b.Logf("survivors of the tree: %v", alive)
			}
		}
	}
	slices.Sort(took)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(took[len(took)/2])/1e6, "median-ms")
	b.ReportMetric(float64(took[len(took)-1])/1e6, "max-ms")
	b.ReportMetric(float64(survivors), "survivors")
}

// quietUntilReady wraps a started tree so that the Session's first stdout
// read returns only once the tree's child has written its "all-ready"
// line, with every line written so far; later reads go straight to the
// pipe.
func quietUntilReady(c child) child {
	return heldStdout{child: c, out: &holdUntilReady{ReadCloser: c.stdout()}}
}

type heldStdout struct {
	child
	out io.ReadCloser
}

func (h heldStdout) stdout() io.ReadCloser { return h.out }

// holdUntilReady is the child's stdout, held back until "all-ready".
// Close (the embedded pipe's) may come from another goroutine, and ends a
// pending Read as it would without the wrapper.
type holdUntilReady struct {
	io.ReadCloser
	held     []byte
	err      error // the pipe's error while holding, returned after held
	released bool  // the hold is over
}

func (h *holdUntilReady) Read(p []byte) (int, error) {
	if !h.released {
		h.released = true
		buf := make([]byte, 4<<10)
		for !bytes.Contains(h.held, []byte("all-ready\n")) {
			n, err := h.ReadCloser.Read(buf)
			h.held = append(h.held, buf[:n]...)
			if err != nil {
				h.err = err
				break
			}
		}
	}
	if len(h.held) > 0 {
		n := copy(p, h.held)
		h.held = h.held[n:]
		return n, nil
	}
	if h.err != nil {
		return 0, h.err
	}
	return h.ReadCloser.Read(p)
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
