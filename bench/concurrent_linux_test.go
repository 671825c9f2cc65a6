package bench

import (
	"context"
	"encoding/json"
	"encoding/json/jsontext"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agent"
	"github.com/cursorkit/cursorkit/cursor"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// The re-executed Go driver of BenchmarkConcurrentTurnsRSS: its role and
// its environment.
const (
	goDriverRole = "concurrent-turns-driver"
	envDriverSim = "CURSORKIT_BENCH_DRIVER_SIM" // the simulator's path
	envTurns     = "CURSORKIT_BENCH_DRIVER_TURNS"
	// envDriverProfile, when set, names a file prefix for the Go driver's
	// CPU profile (PREFIX.cpu) and heap profile (PREFIX.heap), taken while
	// the turns run; for finding out where the figures come from.
	envDriverProfile = "CURSORKIT_BENCH_DRIVER_PROFILE"
)

const (
	concurrentTurns = 200
	// turnEventDelay spaces the normal turn's dozen events so that every
	// turn is still streaming when the last one starts: the 200 are
	// concurrent.
	turnEventDelay = "100ms"
)

// driverReport is what each driver (Go and Node alike) prints: its own
// resource usage, children excluded: MaxRSSKB is VmHWM from
// /proc/self/status, the CPU times come from getrusage(RUSAGE_SELF).
type driverReport struct {
	Turns        int     `json:"turns"`
	Failed       int     `json:"failed"`
	Lines        int64   `json:"lines"`
	PeakInFlight int     `json:"peakInFlight"`
	MaxRSSKB     int64   `json:"maxRSSKB"`
	UserMS       float64 `json:"userMS"`
	SysMS        float64 `json:"sysMS"`
	WallMS       float64 `json:"wallMS"`
}

// BenchmarkConcurrentTurnsRSS runs 200 concurrent supervised turns of the
// normal scenario (events 100 ms apart) in a Go process through
// cursor.Run, as `cursorkit run --json` does (every event encoded with
// event.NewEncoder), and in testdata/node-concurrent.js through Node's
// child_process + readline + per-line setTimeout + JSON.parse. Each
// driver is its own process and reports, when all turns are over, its
// peak RSS (VmHWM) and CPU time (getrusage RUSAGE_SELF), so the
// simulators' memory and CPU are not counted. One turn alone in each
// driver gives the runtime's base. Goal: go/node-rss <= 1/3.
func BenchmarkConcurrentTurnsRSS(b *testing.B) {
	t := buildTools(b)
	node := nodePath(b)
	exe, err := os.Executable()
	require.NoError(b, err)
	simEnv := []string{agentsim.Scenario(agentsim.ScenarioNormal), agentsim.EnvEventDelay + "=" + turnEventDelay}

	goDriver := func(turns int) driverReport { return runGoDriver(b, exe, t.sim, simEnv, turns) }
	nodeDriver := func(turns int) driverReport { return runNodeDriver(b, node, t.sim, simEnv, turns) }

	// One turn alone gives each runtime's base, so that the cost of a turn
	// can be told apart from the cost of the runtime.
	var goRep, goOne, nodeRep, nodeOne driverReport
	for b.Loop() {
		goOne, goRep = goDriver(1), goDriver(concurrentTurns)
		if node != "" {
			nodeOne, nodeRep = nodeDriver(1), nodeDriver(concurrentTurns)
			require.Equal(b, goRep.Lines, nodeRep.Lines, "both drivers saw the same stream")
		}
	}
	perTurnKB := func(many, one driverReport) float64 {
		return float64(many.MaxRSSKB-one.MaxRSSKB) / float64(concurrentTurns-1)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(goRep.MaxRSSKB)/1024, "go-rss-MB")
	b.ReportMetric(float64(goOne.MaxRSSKB)/1024, "go-1turn-rss-MB")
	b.ReportMetric(perTurnKB(goRep, goOne), "go-KB/turn")
	b.ReportMetric(goRep.UserMS+goRep.SysMS, "go-cpu-ms")
	b.ReportMetric(float64(goRep.PeakInFlight), "go-peak-turns")
	b.ReportMetric(goRep.WallMS, "go-wall-ms")
	if node != "" {
		b.ReportMetric(float64(nodeRep.MaxRSSKB)/1024, "node-rss-MB")
		b.ReportMetric(float64(nodeOne.MaxRSSKB)/1024, "node-1turn-rss-MB")
		b.ReportMetric(perTurnKB(nodeRep, nodeOne), "node-KB/turn")
		b.ReportMetric(nodeRep.UserMS+nodeRep.SysMS, "node-cpu-ms")
		b.ReportMetric(float64(nodeRep.PeakInFlight), "node-peak-turns")
		b.ReportMetric(nodeRep.WallMS, "node-wall-ms")
		b.ReportMetric(float64(goRep.MaxRSSKB)/float64(nodeRep.MaxRSSKB), "go/node-rss")
		b.ReportMetric((goRep.UserMS+goRep.SysMS)/(nodeRep.UserMS+nodeRep.SysMS), "go/node-cpu")
	}
}

// runGoDriver runs the Go driver (exe, the test binary, as goDriverRole)
// over turns turns of sim and returns its report, requiring every turn to
// succeed.
func runGoDriver(tb testing.TB, exe, sim string, simEnv []string, turns int) (rep driverReport) {
	tb.Helper()
	cmd := exec.Command(exe)
	cmd.Env = testkit.ChildEnv(goDriverRole, append(simEnv, envDriverSim+"="+sim, envTurns+"="+strconv.Itoa(turns))...)
	runJSON(tb, cmd, &rep)
	require.Zero(tb, rep.Failed, "Go driver: failed turns")
	require.Equal(tb, turns, rep.Turns)
	return rep
}

// runNodeDriver is runGoDriver for testdata/node-concurrent.js.
func runNodeDriver(tb testing.TB, node, sim string, simEnv []string, turns int) (rep driverReport) {
	tb.Helper()
	cmd := exec.Command(node, append([]string{script(tb, "node-concurrent.js"), strconv.Itoa(turns), sim}, turnArgs()...)...)
	cmd.Env = withEnv(simEnv...)
	runJSON(tb, cmd, &rep)
	require.Zero(tb, rep.Failed, "Node driver: failed turns")
	require.Equal(tb, turns, rep.Turns)
	return rep
}

// goDriver is the Go side of BenchmarkConcurrentTurnsRSS, run in a
// re-executed test binary: it runs the turns concurrently through
// cursor.Run, prints a driverReport on stdout and returns the exit code.
// A turn is in flight from its first event (the simulator runs and has
// spoken) until cursor.Run returned (its whole tree is gone).
func goDriver() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "go driver:", err)
		return 2
	}
	bin := simBinary(os.Getenv(envDriverSim))
	turns, err := strconv.Atoi(os.Getenv(envTurns))
	if err != nil {
		return fail(err)
	}
	env := os.Environ()
	if prefix := os.Getenv(envDriverProfile); prefix != "" {
		stop, err := startProfiles(prefix)
		if err != nil {
			return fail(err)
		}
		defer stop()
	}

	rep := driverReport{Turns: turns}
	var inFlight, peak, lines, failed atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range turns {
		wg.Go(func() {
			started := false
			n, err := runTurn(context.Background(), bin, env, event.NewEncoder(io.Discard), nil, func() {
				started = true
				now := inFlight.Add(1)
				for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
				}
			})
			if started {
				inFlight.Add(-1)
			}
			lines.Add(n)
			if err != nil {
				failed.Add(1)
				fmt.Fprintln(os.Stderr, "go driver: turn:", err)
			}
		})
	}
	wg.Wait()
	rep.WallMS = ms(time.Since(start))
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return fail(fmt.Errorf("getrusage: %w", err))
	}
	if rep.MaxRSSKB, err = vmHWM(); err != nil {
		return fail(err)
	}
	rep.UserMS = float64(ru.Utime.Nano()) / 1e6
	rep.SysMS = float64(ru.Stime.Nano()) / 1e6
	rep.PeakInFlight, rep.Lines, rep.Failed = int(peak.Load()), lines.Load(), int(failed.Load())
	out, _ := json.Marshal(rep)
	fmt.Println(string(out))
	return 0
}

// vmHWM returns this process's peak resident set size in KiB, from
// /proc/self/status. getrusage's ru_maxrss would not do: Linux carries it
// over execve from the forking parent (the benchmark process, hundreds of
// MB after the throughput benchmarks), whereas VmHWM belongs to the
// address space exec created.
func vmHWM() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}

// startProfiles starts a CPU profile into prefix.cpu and records every
// allocation; the returned stop ends the CPU profile and writes a heap
// profile into prefix.heap (alloc_space tells what each turn allocates).
// Profiling costs memory and CPU: a profiled run's figures are not the
// benchmark's.
func startProfiles(prefix string) (stop func(), err error) {
	runtime.MemProfileRate = 1
	cpu, err := os.Create(prefix + ".cpu")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		runtime.GC() // the heap profile is as of the last completed cycle
		if heap, err := os.Create(prefix + ".heap"); err == nil {
			_ = pprof.WriteHeapProfile(heap)
			heap.Close()
		}
	}, nil
}

// runTurn is one prompt turn as `cursorkit run --json` drives it:
// cursor.Run on bin with cursor.TurnDefaults and env, every event encoded
// with enc (made by event.NewEncoder, as run's is), onDrained (when not
// nil) called whenever every stdout byte read so far is decoded, where run
// flushes its buffered stdout. started (when not nil) is called at the
// first event. It returns the number of stdout lines the agent wrote
// (supervise's count) and the turn's verdict: nil exactly when the turn
// is done and its events were encoded.
func runTurn(ctx context.Context, bin cursor.Binary, env []string, enc *jsontext.Encoder, onDrained, started func()) (int64, error) {
	var (
		events int64
		encErr error
	)
	opts := cursor.TurnDefaults()
	opts.Env = env
	opts.OnDrained = onDrained
	opts.OnEvent = func(e event.Event) {
		if events == 0 && started != nil {
			started()
		}
		events++
		if err := e.MarshalJSONTo(enc); err != nil && encErr == nil {
			encErr = err
		}
	}
	o, err := cursor.Run(ctx, bin, benchTurn, opts)
	lines := o.Process.Lines
	switch {
	case err != nil:
		return lines, err
	case encErr != nil:
		return lines, fmt.Errorf("encoding an event: %w", encErr)
	case o.Status != agent.StatusDone:
		return lines, fmt.Errorf("the turn ended %s", o.Status)
	case events == 0:
		return lines, errors.New("the turn emitted nothing")
	}
	return lines, nil
}
