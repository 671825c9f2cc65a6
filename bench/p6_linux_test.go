package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/stream"
	"github.com/cursorkit/cursorkit/supervise"
)

// The re-executed P6 Go driver: its role and its environment.
const (
	p6DriverRole = "p6-driver"
	envP6Driver  = "CURSORKIT_BENCH_P6_DRIVER" // the simulator's path
	envP6Turns   = "CURSORKIT_BENCH_P6_TURNS"
	// envP6Profile, when set, names a file prefix for the driver's CPU
	// profile (PREFIX.cpu) and heap profile (PREFIX.heap), taken while the
	// turns run; for finding out where the figures come from.
	envP6Profile = "CURSORKIT_BENCH_P6_PROFILE"
)

const (
	p6Turns = 200
	// p6EventDelay spaces the normal turn's dozen events so that every turn
	// is still streaming when the last one starts: the 200 are concurrent.
	p6EventDelay = "100ms"
)

// driverReport is what each P6 driver (Go and Node alike) prints: its own
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

// BenchmarkP6Scale is P6: 200 concurrent supervised turns of the normal
// scenario (events 100 ms apart) run by a Go process through supervise and
// stream.Turn, as `cursorkit run` does, and by testdata/p6-node.js through
// Node's child_process + readline + per-line setTimeout + JSON.parse. Each
// driver is its own process and reports, when all turns are over, its peak
// RSS (VmHWM) and CPU time (getrusage RUSAGE_SELF), so the simulators'
// memory and CPU are not counted. The
// goal is go-rss/node-rss <= 0.33.
func BenchmarkP6Scale(b *testing.B) {
	t := buildTools(b)
	node := nodePath(b)
	exe, err := os.Executable()
	require.NoError(b, err)
	simEnv := []string{agentsim.Scenario(agentsim.ScenarioNormal), agentsim.EnvEventDelay + "=" + p6EventDelay}

	goDriver := func(turns int) driverReport { return runGoDriver(b, exe, t.sim, simEnv, turns) }
	nodeDriver := func(turns int) driverReport { return runNodeDriver(b, node, t.sim, simEnv, turns) }

	// One turn alone gives each runtime's base, so that the cost of a turn
	// can be told apart from the cost of the runtime.
	var goRep, goOne, nodeRep, nodeOne driverReport
	for b.Loop() {
		goOne, goRep = goDriver(1), goDriver(p6Turns)
		if node != "" {
			nodeOne, nodeRep = nodeDriver(1), nodeDriver(p6Turns)
			require.Equal(b, goRep.Lines, nodeRep.Lines, "both drivers saw the same stream")
		}
	}
	perTurnKB := func(many, one driverReport) float64 { return float64(many.MaxRSSKB-one.MaxRSSKB) / float64(p6Turns-1) }
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

// runGoDriver runs the P6 Go driver (exe, the test binary) over turns
// turns of sim and returns its report, requiring every turn to succeed.
func runGoDriver(tb testing.TB, exe, sim string, simEnv []string, turns int) (rep driverReport) {
	tb.Helper()
	cmd := exec.Command(exe)
	cmd.Env = testkit.ChildEnv(p6DriverRole, append(simEnv, envP6Driver+"="+sim, envP6Turns+"="+strconv.Itoa(turns))...)
	runJSON(tb, cmd, &rep)
	require.Zero(tb, rep.Failed, "Go driver: failed turns")
	require.Equal(tb, turns, rep.Turns)
	return rep
}

// runNodeDriver is runGoDriver for testdata/p6-node.js.
func runNodeDriver(tb testing.TB, node, sim string, simEnv []string, turns int) (rep driverReport) {
	tb.Helper()
	cmd := exec.Command(node, append([]string{script(tb, "p6-node.js"), strconv.Itoa(turns), sim}, turnArgs()...)...)
	cmd.Env = withEnv(simEnv...)
	runJSON(tb, cmd, &rep)
	require.Zero(tb, rep.Failed, "Node driver: failed turns")
	require.Equal(tb, turns, rep.Turns)
	return rep
}

// p6Driver is the Go side of P6, run in a re-executed test binary: it runs
// the turns concurrently, prints a driverReport on stdout and returns the
// exit code.
func p6Driver() int {
	sim := os.Getenv(envP6Driver)
	turns, err := strconv.Atoi(os.Getenv(envP6Turns))
	if err != nil {
		fmt.Fprintln(os.Stderr, "p6 driver:", err)
		return 2
	}
	plan, err := shim.Build(discovery.Resolution{Path: sim, Name: filepath.Base(sim), Kind: discovery.Native}, turnArgs(), shim.OptionsFromOS())
	if err != nil {
		fmt.Fprintln(os.Stderr, "p6 driver:", err)
		return 2
	}
	policy, err := stream.NewPolicy(stream.ModeDefault)
	if err != nil {
		fmt.Fprintln(os.Stderr, "p6 driver:", err)
		return 2
	}
	env := os.Environ()

	if prefix := os.Getenv(envP6Profile); prefix != "" {
		stop, err := startProfiles(prefix)
		if err != nil {
			fmt.Fprintln(os.Stderr, "p6 driver:", err)
			return 2
		}
		defer stop()
	}

	rep := driverReport{Turns: turns}
	var inFlight, peak, lines, failed atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range turns {
		wg.Go(func() {
			n, err := superviseTurn(context.Background(), plan, policy, env, nil, func(started bool) {
				if !started {
					inFlight.Add(-1)
					return
				}
				now := inFlight.Add(1)
				for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
				}
			})
			lines.Add(n)
			if err != nil {
				failed.Add(1)
				fmt.Fprintln(os.Stderr, "p6 driver: turn:", err)
			}
		})
	}
	wg.Wait()
	rep.WallMS = ms(time.Since(start))
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "p6 driver: getrusage:", err)
		return 2
	}
	if rep.MaxRSSKB, err = vmHWM(); err != nil {
		fmt.Fprintln(os.Stderr, "p6 driver:", err)
		return 2
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
// MB after P2), whereas VmHWM belongs to the address space exec created.
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

// startProfiles starts a CPU profile into prefix.cpu; the returned stop
// ends it and writes a heap profile into prefix.heap.
func startProfiles(prefix string) (stop func(), err error) {
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
		if heap, err := os.Create(prefix + ".heap"); err == nil {
			_ = pprof.WriteHeapProfile(heap)
			heap.Close()
		}
	}, nil
}

// superviseTurn is one prompt turn as `cursorkit run` drives it: the plan
// supervised with the CLI's default deadlines, every stdout line fed to a
// stream.Turn, the work finished on the result and the tree stopped on a
// protocol or policy error, and the turn's verdict at the end.
// inFlight(true) is called once the child runs, inFlight(false) once its
// verdict is in. It returns the number of stdout lines. When out is not
// nil, the NDJSON of `cursorkit run --json` (without its outcome line) is
// written to it; it is computed either way.
func superviseTurn(ctx context.Context, plan shim.Plan, policy stream.Policy, env []string, out io.Writer, inFlight func(bool)) (int64, error) {
	turn := stream.NewTurn(policy)
	var (
		feedErr   error
		emitted   int
		outputBuf []byte
	)
	onLine := func(line []byte) error {
		outs, err := turn.Feed(line)
		for _, o := range outs {
			// What --json writes: each output's NDJSON line.
			outputBuf = append(o.AppendJSON(outputBuf[:0]), '\n')
			emitted += len(outputBuf)
			if out != nil {
				_, _ = out.Write(outputBuf)
			}
		}
		switch {
		case err != nil:
			feedErr = err
			return err
		case turn.Done():
			return supervise.ErrFinished
		}
		return nil
	}
	s, err := supervise.Start(ctx, plan, supervise.Options{
		Env:              env,
		Stdin:            strings.NewReader(prompt),
		FirstLineTimeout: 30 * time.Second,
		IdleTimeout:      120 * time.Second,
		StopGrace:        supervise.DefaultStopGrace,
		ExitGrace:        supervise.DefaultExitGrace,
		DrainGrace:       2 * time.Second,
		OnLine:           onLine,
	})
	if err != nil {
		return 0, err
	}
	inFlight(true)
	o := s.Wait()
	inFlight(false)
	if feedErr != nil {
		return o.Lines, feedErr
	}
	if err := turn.EndWithStderr(o.ExitCode, o.Ending == supervise.Exited, o.StderrTail); err != nil {
		return o.Lines, errors.Join(err, o.Err)
	}
	if emitted == 0 {
		return o.Lines, errors.New("the turn emitted nothing")
	}
	return o.Lines, o.Err
}
