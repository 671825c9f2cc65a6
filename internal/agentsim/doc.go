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
//   - as bin/cursor-agent-sim: testdata/cursor-agent-sim is a five-line
//     wrapper around Main (`go build ./testdata/cursor-agent-sim`);
//   - as the current test binary, re-executed: a package's TestMain calls
//     testkit.RunIfChild() before m.Run(); when the binary was started as
//     the simulator (a copy made by testkit.Install, testkit.ChildEnv's
//     environment, or CURSORKIT_SIM_MAIN=1) it runs Main with os.Args[1:]
//     and exits. This is the only way in the Windows lane, where Wine has no
//     `go` command;
//   - in-process, by calling Main directly (only for scenarios that neither
//     hang nor spawn processes).
//
// The pattern for a package that needs a fake cursor-agent:
//
//	func TestMain(m *testing.M) {
//		testkit.RunIfChild() // never returns when started as the simulator
//		os.Exit(m.Run())
//	}
//
//	func TestSomething(t *testing.T) {
//		bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator) // .exe on Windows
//		w := testkit.NewWatch(t) // survivors are killed at cleanup
//		cmd := exec.Command(bin, "--print", "--output-format", "stream-json", "--trust")
//		cmd.Env = testkit.ChildEnv(testkit.Simulator, agentsim.Scenario(agentsim.ScenarioLinger), agentsim.EnvPIDDir+"="+w.PIDDir())
//		cmd.Stdin = strings.NewReader("the prompt") // read to EOF before anything is printed
//		...
//		w.RequireGone(10 * time.Second)
//	}
//
// testkit.Install's copy is the simulator whatever its name and environment
// (a sidecar file next to it says so), so it can stand in for cursor-agent
// on PATH, behind a .cmd shim or as a configured binary path.
//
// # Choosing behaviour
//
// The environment variable CURSORKIT_SIM_SCENARIO holds a comma-separated
// list of scenario names (see the Scenario* constants); each name affects
// only the commands its constant's comment names, so
// `slow-version,unauthenticated` makes `--version` slow and `status`
// report a logged-out user, and `version-keychain-locked,keychain-locked`
// is a locked keychain for every command, as the real CLI prints it.
// Other variables
// (the Env* constants) tune versions, delays and sizes, name a record file
// and a directory of process-id files, and set the marker that every
// spawned helper process carries in its argv and environment.
//
// Hangs really block (they sleep until killed, bounded only by
// CURSORKIT_SIM_HANG_LIMIT, default 10 minutes, so a test that forgets to
// kill cannot leave processes behind for longer). Helper processes ("workers")
// are re-executions of the simulator's own executable with the hidden first
// argument "__sim-worker"; they hold the inherited stdout open and sleep.
//
// The simulator is deliberately strict where the contract is: the prompt
// must arrive on stdin (a positional prompt is refused), `--trust` is
// required in print mode, and unknown options fail like the real CLI's
// option parser does.
package agentsim
