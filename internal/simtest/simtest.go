// Package simtest lets any package's tests use the cursor-agent contract
// simulator (package agentsim) as a real executable, in the Linux lane and
// in the Windows lane under Wine (where there is no `go` command to build
// one): the test binary itself is the simulator when re-executed.
//
// Use it in three steps:
//
//	func TestMain(m *testing.M) {
//		simtest.RunIfSimulator() // first: exits here when started as the simulator
//		os.Exit(m.Run())
//	}
//
//	func TestTurn(t *testing.T) {
//		bin := simtest.Install(t, simtest.TempDir(t), "cursor-agent") // cursor-agent.exe on Windows
//		pids := simtest.PIDDir(t) // kills survivors at cleanup
//		cmd := exec.Command(bin, "--print", "--output-format", "stream-json", "--trust")
//		cmd.Env = simtest.Env(agentsim.Scenario(agentsim.ScenarioLinger), agentsim.EnvPIDDir+"="+pids)
//		...
//		simtest.RequireNoSurvivors(t, pids, 5*time.Second)
//	}
//
// Install hard-links (on Windows: copies) the running test binary and leaves a
// sidecar file "<path>.cursorkit-sim" next to it; RunIfSimulator recognises
// such a copy by that file, so the installed path behaves as cursor-agent
// whatever environment the code under test gives it. A plain re-execution of
// os.Executable() with CURSORKIT_SIM_MAIN=1 in its environment works too.
//
// This package, like agentsim, is for tests only.
package simtest

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
)

// SidecarSuffix names the file that marks an installed copy as the simulator.
const SidecarSuffix = ".cursorkit-sim"

// RunIfSimulator runs agentsim.Main with the process's arguments and exits
// when this process was started as the simulator: with CURSORKIT_SIM_MAIN=1
// in its environment, or as a copy made by Install. Otherwise it returns at
// once. Call it first thing in TestMain.
func RunIfSimulator() {
	if !IsSimulator() {
		return
	}
	if raceEnabled {
		skipRaceExitSleep()
	}
	os.Exit(agentsim.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// IsSimulator reports whether this process was started as the simulator.
func IsSimulator() bool {
	if os.Getenv(agentsim.EnvMain) == "1" {
		return true
	}
	exe, err := os.Executable()
	if err != nil {
		return false
	}
	_, err = os.Stat(exe + SidecarSuffix)
	return err == nil
}

// Install makes the running test binary available as the simulator at
// dir/name (".exe" is added on Windows when name has no extension) and
// returns that path. dir may contain spaces. The test binary's TestMain must
// call RunIfSimulator.
func Install(t testing.TB, dir, name string) string {
	t.Helper()
	if runtime.GOOS == "windows" && filepath.Ext(name) == "" {
		name += ".exe"
	}
	self, err := os.Executable()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, name)
	// A hard link is free, but Windows refuses to delete any link to the
	// image of a running program (this test binary), so copy there.
	if runtime.GOOS == "windows" || os.Link(self, path) != nil {
		require.NoError(t, copyFile(self, path), "installing the simulator at %s", path)
	}
	require.NoError(t, os.WriteFile(path+SidecarSuffix, []byte("cursor-agent contract simulator (test double)\n"), 0o644))
	return path
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

// Env returns this process's environment without any CURSORKIT_SIM_
// variable, plus extra ("NAME=value" entries), for a simulator's cmd.Env.
func Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "CURSORKIT_SIM_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// Process is a simulator process recorded in a pid directory.
type Process struct {
	PID  int
	Role string // "main", "linger", "escapee", "double-fork", "double-fork-intermediate", "tool", "slow-version"
}

// Recorded returns every process recorded in pidDir (see agentsim.EnvPIDDir),
// alive or not, by pid.
func Recorded(pidDir string) ([]Process, error) {
	entries, err := os.ReadDir(pidDir)
	if err != nil {
		return nil, err
	}
	var procs []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || e.IsDir() {
			continue
		}
		role, err := os.ReadFile(filepath.Join(pidDir, e.Name()))
		if err != nil {
			return nil, err
		}
		procs = append(procs, Process{PID: pid, Role: strings.TrimSpace(string(role))})
	}
	sort.Slice(procs, func(i, j int) bool { return procs[i].PID < procs[j].PID })
	return procs, nil
}

// Survivors returns the processes recorded in pidDir that are still running
// (zombies count as gone).
func Survivors(pidDir string) ([]Process, error) {
	procs, err := Recorded(pidDir)
	if err != nil {
		return nil, err
	}
	var alive []Process
	for _, p := range procs {
		if running(p.PID) {
			alive = append(alive, p)
		}
	}
	return alive, nil
}

// PIDDir returns a new directory for agentsim.EnvPIDDir and registers a
// cleanup that kills whatever recorded process survives the test, so a
// failing test cannot leave simulators behind.
func PIDDir(t testing.TB) string {
	t.Helper()
	dir := TempDir(t)
	t.Cleanup(func() { KillSurvivors(dir) })
	return dir
}

// KillSurvivors kills every recorded process still running and returns them.
func KillSurvivors(pidDir string) []Process {
	alive, _ := Survivors(pidDir)
	for _, p := range alive {
		if proc, err := os.FindProcess(p.PID); err == nil {
			proc.Kill()
			proc.Release()
		}
	}
	return alive
}

// RequireNoSurvivors fails t unless every process recorded in pidDir is gone
// within timeout (processes die asynchronously after a kill).
func RequireNoSurvivors(t testing.TB, pidDir string, timeout time.Duration) {
	t.Helper()
	var alive []Process
	var err error
	if !assert.Eventually(t, func() bool {
		alive, err = Survivors(pidDir)
		return err == nil && len(alive) == 0
	}, timeout, 10*time.Millisecond) {
		t.Fatalf("simulator processes survived %v: %+v (err %v)", timeout, alive, err)
	}
}

// WaitRecorded waits until pidDir holds a process with role, and returns it.
func WaitRecorded(t testing.TB, pidDir, role string, timeout time.Duration) Process {
	t.Helper()
	var found Process
	require.Eventually(t, func() bool {
		procs, _ := Recorded(pidDir)
		for _, p := range procs {
			if p.Role == role {
				found = p
				return true
			}
		}
		return false
	}, timeout, 10*time.Millisecond, "no %q process recorded", role)
	return found
}
