// Package bench holds cursorkit's end-to-end performance benchmarks, each
// measured against its baselines in the same run because the machines they
// run on are noisy: only the ratios are meant to be compared with the goals.
//
//   - BenchmarkP6Scale (issue 4, P6): 200 concurrent supervised simulator
//     turns in one Go process (supervise + stream.Turn per turn) against the
//     same 200 turns driven by Node 20 (child_process.spawn, readline, a
//     per-line setTimeout reset, JSON.parse). Each driver is a process of its
//     own that reports its own peak RSS and CPU time (getrusage RUSAGE_SELF:
//     the simulators are children and are not counted). Goal: Go's peak RSS
//     at most one third of Node's.
//   - BenchmarkP2RunJSON (issue 7, P2): `cursorkit run --json` over a
//     simulator turn streaming 100 MB of assistant events, output to the null
//     device, against the raw pipe (io.Copy to io.Discard) and Node's readline
//     and JSON.parse. Goals: at least 0.5x the pipe and at least 5x Node.
//     Peak RSS of run and of Node over the turn are reported too.
//     BenchmarkP2StreamInProcess is the same stream decoded by supervise +
//     stream.Turn inside the benchmark process, without the CLI around it,
//     and supervise alone (lines only) for the reader's share.
//   - BenchmarkProbeWallTime and BenchmarkDoctorWallTime (issue 5): probe.Probe
//     against the simulator's own --version started with os/exec, and
//     `cursorkit doctor` against the slowest single probe command (`cursorkit
//     probe`, `status`, `models --refresh`). Goals: within +10 ms each.
//
// The benchmarks build the real binaries (`go build ./cmd/cursorkit` and
// `go build ./testdata/cursor-agent-sim`) into a temporary directory, so they
// run in the Linux lane only; the Node baselines are skipped, with a message,
// when node is not on PATH. The Node scripts live in testdata. `make bench`
// (scripts/bench) runs every benchmark once and prints all figures.
package bench
