// Package testkit is the one test harness of cursorkit, for the Linux lane
// (go test -race) and the Windows lane (the same tests under Wine). Which
// helper is for what:
//
//   - A test binary as a child of its own tests: RunIfChild, first thing in
//     TestMain, with the package's Roles; ChildEnv for the exec.Cmd.Env of a
//     child that plays a role; Install to put the test binary at a path
//     (cursor-agent, .exe on Windows) that plays a role whatever environment
//     the code under test passes. The cursor-agent contract simulator
//     (package agentsim) is the built-in role Simulator.
//   - Talking to such a child: StartReady and StartMember read its
//     "ready PID" line; SleepForever keeps a child alive until it is killed;
//     CmdExe (Windows) runs one through cmd.exe.
//   - Proving that no process survives: NewWatch gives a Watch that covers
//     the processes carrying its Marker in their argv (Linux), the PIDs
//     added with Add (reported by a child) and those the simulator records
//     in its PIDDir; Alive, RequireGone, Kill, Recorded, WaitRecorded. A
//     process is known by its PID and start time, so a reused PID is never
//     mistaken for it, and whatever is still alive when the test ends is
//     killed.
//   - A temporary directory the Windows lane can delete: TempDir (not
//     t.TempDir: os.RemoveAll fails under Wine).
//   - Waiting: Eventually polls a condition with a deadline; tests never
//     sleep to "wait enough".
//   - Seeded random rounds (crash tests): Rand, a source seeded from the
//     clock with its seed logged (NewRand replays it); SleepRandomly, a
//     random moment to kill a child at.
//   - Wine: UnderWine and SkipIfWine, for the few Windows behaviours Wine
//     only stubs.
//
// The usual shape:
//
//	func TestMain(m *testing.M) {
//		testkit.RunIfChild(sleeper) // exits here when started as a child
//		os.Exit(m.Run())
//	}
//
//	var sleeper = testkit.Role{Name: "sleeper", Run: func([]string) int {
//		fmt.Printf("ready %d\n", os.Getpid())
//		testkit.SleepForever()
//		return 0
//	}}
//
//	func TestTurn(t *testing.T) {
//		bin := testkit.Install(t, testkit.TempDir(t), "cursor-agent", testkit.Simulator)
//		w := testkit.NewWatch(t) // after the directories: it kills before they are removed
//		cmd := exec.Command(bin, "--print", "--output-format", "stream-json", "--trust")
//		cmd.Env = testkit.ChildEnv(testkit.Simulator, agentsim.Scenario(agentsim.ScenarioLinger),
//			agentsim.EnvPIDDir+"="+w.PIDDir())
//		...
//		w.RequireGone(10 * time.Second)
//	}
//
// This package is for tests only.
package testkit
