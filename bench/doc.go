// Package bench holds cursorkit's end-to-end performance benchmarks, each
// measured against its baselines in the same run (medians of alternating
// rounds) because the machines they run on are noisy: only the ratios are
// meant to be compared with the goals.
//
//   - BenchmarkRunJSONThroughput: the built `cursorkit run --json` over a
//     simulator turn streaming 100 MB of assistant events, output to the
//     null device, against the raw pipe (io.Copy to io.Discard) and Node's
//     spawn + readline + JSON.parse (testdata/node-stream.js). Floor:
//     run/node-speed (Node's time over run's) >= 1.0, with the standard
//     library's encoding/json/v2 only; no code is spent above it. The peak RSS of run
//     and of the Node script over the same turn are measured too (GNU
//     time); goal: run/node-rss <= 1/3.
//   - BenchmarkStreamInProcess: the same turn without the CLI around it,
//     run by cursor.Run inside the benchmark process with every event
//     written by event.NewWriter into a buffered io.Discard, against the
//     same baselines; and supervise alone (lines only) for the line
//     reader's share. No goal of its own: it tells the library's cost from
//     the command's (process start, probe, output).
//   - BenchmarkAgentStream: BenchmarkStreamInProcess for each other agent
//     (claude, codex, gemini), over a 100 MB turn in the agent's own
//     format, written once per run into a temporary directory: the first
//     event (init) and the final one (result, or Codex's turn.completed)
//     of a recorded turn of the agent's package's testdata around copies
//     of its middle lines (text, thinking where the agent streams it, tool
//     calls started and completed, their ids made distinct per copy). The
//     replay stand-in (this test binary installed under the agent's
//     command name, CURSORKIT_SIM_REPLAY) plays it; Agent.Run runs the
//     write-mode turn in this process (supervise, the agent's decoder and
//     tool policy, turn.Run's verdict) with every event written by
//     event.NewWriter into a buffered io.Discard, and checks that the
//     turn is done with the number of events one and two copies imply;
//     against the raw pipe and Node (testdata/node-stream.js with
//     --final-type for Codex) over the same stand-in, medians of five
//     alternating rounds. Floor, per agent: AGENT/node-speed >= 1.0.
//   - BenchmarkFallbackHandoff: `run --agent codex --fallback cursor` in
//     process, wired as cmd/cursorkit/runagent.go wires it: a
//     fallback.Session whose primary is an agents.Session of codex (the
//     replay stand-in playing agents/codex/testdata/unauthorized.jsonl, a 401,
//     exit 1) and whose Start creates an agents.Session of cursor (the
//     simulator installed as cursor-agent, normal scenario). It measures,
//     over twenty rounds, from the moment the primary's Prompt returned
//     its error to the moment the Cursor process started
//     (turn.Options.OnStarted): handoff-ms, the median. Goal:
//     handoff-ms <= 50. The Cursor probe is not in it by design: `run`
//     probes Cursor (its --version cached, ReuseVersion) when it arms the
//     fallback, before the primary starts, so the handoff only starts
//     Cursor; probe-ms is that cached probe's median, for context.
//   - BenchmarkRealClaudeTurn: one real Claude Code text turn against
//     the model-API stand-in (internal/modelapi), run directly, through
//     the built `cursorkit run --agent claude --json`, and through
//     agents.Agent.Run in this process, in alternating rounds, Claude Code
//     started in each through testdata/timed, which records when it
//     started and ended: share-ms, the command's wall time minus the
//     CLI's (less what timed costs, from the direct run), the median.
//     Goal: share-ms <= 5. library-share-ms is the same for the
//     in-process turn.
//   - BenchmarkFallbackAtFirstRetry: the fallback with AfterRetries 1,
//     wired as runagent.go wires it, each real CLI the primary against a
//     stand-in that answers 429 forever: from the stand-in's first 429
//     to Cursor started, CLI/handoff-ms. Goal: at most the CLI's first
//     retry delay (CLI/retry-delay-ms) + 100.
//   - BenchmarkConcurrentTurnsRSS: 1,000 concurrent supervised simulator
//     turns in one Go program embedding cursorkit (testdata/go-driver:
//     cursor.Run per turn, every event encoded as run --json does; package
//     internal/turns holds the turn it shares with the other benchmarks)
//     against the same 1,000 turns driven by Node
//     (testdata/node-concurrent.js: child_process.spawn, readline, a
//     per-line setTimeout reset, JSON.parse). Each driver is a process of
//     its own that reports its own peak RSS (VmHWM) and CPU time
//     (getrusage RUSAGE_SELF: the simulators are children and are not
//     counted); one turn alone gives each runtime's base. Goal:
//     go-KB/turn <= 32.
//   - BenchmarkProbeOverhead: probe.Probe against the simulator's own
//     --version started with os/exec (and the built `cursorkit probe` for
//     reference). Goal: overhead-ms <= 10.
//   - BenchmarkDoctorOverhead: `cursorkit doctor` against the slowest
//     single probe command (`cursorkit probe`, `status`, `models
//     --refresh`), with a fast simulator and with status and models slowed
//     to 200 ms. Goal: overhead-ms (doctor minus the slowest) <= 10.
//   - BenchmarkBackground: the caller's wall time of the built `cursorkit
//     task --background --json` against the simulator (probe, checks,
//     private home, record, prompt file, detached worker's start), each
//     job waited for (done, worker and agent gone) before the next round,
//     against `cursorkit version` (plain process start). Goal:
//     background-ms <= 100.
//   - BenchmarkJobsStatusCLI: the built `cursorkit jobs status ID --json`
//     without --cwd, over 100 workspaces of 20 records, against `cursorkit
//     version`. Goal: status-ms <= 20.
//   - BenchmarkJobsHistoryCLI: the built `cursorkit jobs history --all
//     --limit 20 --json` over 10,000 records in 50 workspaces, against
//     `cursorkit version`. Goal: history-ms <= 100.
//   - BenchmarkBridgeRoundTrip: a tool call through the MCP tool bridge
//     as an agent CLI makes it: the built cursorkit as the bridge program
//     (started with the bridge's arguments and environment, stdio pipes),
//     the official SDK's MCP client in the CLI's place calling a tool
//     whose handler is in this process, 2,000 calls in a row. Goal: the
//     round trip's p50 <= 2 ms; its p99, the bridge program's peak RSS
//     and the same calls' p50 on the SDK's server in process over its
//     in-memory transport (bridge/direct) are reported beside it.
//
// The records of the two jobs benchmarks are written beforehand through
// jobs.Store; the same lookups in process (no process start) are
// BenchmarkFind and BenchmarkHistory in package jobs, next to the code
// they measure, as BenchmarkTaskOverhead (a task over a plain turn) is in
// package task.
//
// The kill latency (median <= 10 ms, maximum <= 20 ms, no survivor) and
// the supervised pipe throughput are measured in package supervise
// (BenchmarkKillLatency, BenchmarkPipeThroughput), next to the code they
// measure.
//
// The benchmarks build the real binaries (`go build ./cmd/cursorkit`,
// `go build ./testdata/cursor-agent-sim` and `go build
// ./bench/testdata/go-driver`) into a temporary directory, or install
// this test binary as the agents (testkit.Install: TestMain plays the
// role), so they run in the Linux lane only; the Node baselines are
// skipped, with a message, when node is not on PATH. `make bench` (scripts/bench) runs every
// benchmark of the module once and ends with one PASS/MISS line per goal,
// each with its ratio from that run.
package bench
