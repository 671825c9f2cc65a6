// Package agentsim is a test double of the cursor-agent command-line contract
// that docs/contract.md documents: `--version`, `status`/`whoami [--format json]`,
// `models` and `--print --output-format stream-json`. It exists only so that
// tests (and `make run`'s demo through bin/cursor-agent-sim) can drive the
// real launch, supervision, probe and stream code against every shape the
// real agent is known to produce. No non-test code path may import it or
// depend on its behaviour.
//
// # Running it
//
// The logic lives in Main, so the same simulator runs in three ways:
//
//   - as bin/cursor-agent-sim: testdata/cursor-agent-sim wraps Main;
//   - as the current test binary, re-executed: a package's TestMain calls
//     testkit.RunIfChild() before m.Run(); when the binary was started as
//     the simulator (a copy made by testkit.Install, testkit.ChildEnv's
//     environment, or CURSORKIT_SIM_MAIN=1) it runs Main with os.Args[1:]
//     and exits. This is the only way in the Windows lane, where Wine has no
//     `go` command. Package testkit's documentation shows the pattern;
//     testkit.Install's copy is the simulator whatever its name and
//     environment, so it can stand in for cursor-agent on PATH, behind a
//     .cmd shim or as a configured binary path;
//   - in-process, by calling Main directly (only for scenarios that neither
//     hang nor spawn processes).
//
// # Choosing behaviour
//
// CURSORKIT_SIM_SCENARIO holds a comma-separated list of scenario names
// (the Scenario* constants); each affects only the commands its constant's
// comment names, so `slow-version,unauthenticated` makes `--version` slow
// and `status` report a logged-out user. The Env* variables tune versions,
// delays and sizes, name a record file, an MCP log and a directory of
// process-id files, choose the MCP server, tool and input of the mcp-call
// scenario, and set the marker every spawned helper process carries in its
// argv and environment.
//
// Hangs really block: they sleep until killed, bounded only by
// CURSORKIT_SIM_HANG_LIMIT (default 10 minutes), so a test that forgets to
// kill cannot leave processes behind for longer. Helper processes
// ("workers") are re-executions of the simulator's own executable with the
// hidden first argument "__sim-worker"; they hold the inherited stdout
// open and sleep.
//
// The simulator is strict where the contract is: the prompt must arrive on
// stdin (a positional prompt is refused), `--trust` is required in print
// mode, and unknown options fail like the real CLI's option parser does.
package agentsim
