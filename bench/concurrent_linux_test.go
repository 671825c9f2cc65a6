package bench

import (
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/bench/internal/turns"
	"github.com/cursorkit/cursorkit/internal/agentsim"
)

const (
	concurrentTurns = 1000
	// turnEventDelay spaces the normal turn's dozen events so that every
	// turn is still streaming when the last one starts: the 1,000 are
	// concurrent (go-peak-turns and node-peak-turns say so).
	turnEventDelay = "1s"
)

// BenchmarkConcurrentTurnsRSS runs 1,000 concurrent supervised turns of
// the normal scenario (events 1 s apart) in a Go process through
// cursor.Run, as `cursorkit run --json` does (every event written with
// event.NewWriter), and in testdata/node-concurrent.js through Node's
// child_process + readline + per-line setTimeout + JSON.parse. Each
// driver is its own process and reports, when all turns are over, its
// peak RSS (VmHWM) and CPU time (getrusage RUSAGE_SELF), so the
// simulators' memory and CPU are not counted. One turn alone in each
// driver gives the runtime's base, so that a turn's cost, (peak RSS -
// one turn's) / (turns - 1), is told apart from the runtime's. Goal:
// go-KB/turn <= 32 KiB, Node's measured beside it.
func BenchmarkConcurrentTurnsRSS(b *testing.B) {
	t := buildTools(b)
	node := nodePath(b)
	simEnv := []string{agentsim.Scenario(agentsim.ScenarioNormal), agentsim.EnvEventDelay + "=" + turnEventDelay}

	goDriver := func(n int) turns.Report { return runGoDriver(b, t, simEnv, n) }
	nodeDriver := func(n int) turns.Report { return runNodeDriver(b, node, t.sim, simEnv, n) }

	// One turn alone gives each runtime's base, so that the cost of a turn
	// can be told apart from the cost of the runtime.
	var goRep, goOne, nodeRep, nodeOne turns.Report
	for b.Loop() {
		goOne, goRep = goDriver(1), goDriver(concurrentTurns)
		if node != "" {
			nodeOne, nodeRep = nodeDriver(1), nodeDriver(concurrentTurns)
			require.Equal(b, goRep.Lines, nodeRep.Lines, "both drivers saw the same stream")
		}
	}
	perTurnKB := func(many, one turns.Report) float64 {
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

// runGoDriver runs the Go driver (testdata/go-driver, built by buildTools)
// over n turns of the simulator and returns its report, requiring every
// turn to succeed.
func runGoDriver(tb testing.TB, t tools, simEnv []string, n int) (rep turns.Report) {
	tb.Helper()
	cmd := exec.Command(t.goDriver, t.sim, strconv.Itoa(n))
	cmd.Env = withEnv(simEnv...)
	runJSON(tb, cmd, &rep)
	require.Zero(tb, rep.Failed, "Go driver: failed turns")
	require.Equal(tb, n, rep.Turns)
	return rep
}

// runNodeDriver is runGoDriver for testdata/node-concurrent.js.
func runNodeDriver(tb testing.TB, node, sim string, simEnv []string, n int) (rep turns.Report) {
	tb.Helper()
	cmd := exec.Command(node, append([]string{script(tb, "node-concurrent.js"), strconv.Itoa(n), sim}, turnArgs()...)...)
	cmd.Env = withEnv(simEnv...)
	runJSON(tb, cmd, &rep)
	require.Zero(tb, rep.Failed, "Node driver: failed turns")
	require.Equal(tb, n, rep.Turns)
	return rep
}
