package testkit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
)

// RoleEnv is the environment variable that makes a test binary play a role
// (see ChildEnv). Tests that hand an environment to the code under test
// rather than to an exec.Cmd may set RoleEnv+"="+name themselves.
const RoleEnv = "CURSORKIT_TEST_ROLE"

// Simulator is the built-in role: the cursor-agent contract simulator,
// agentsim.Main with the process's arguments, environment and stdio. A
// process with agentsim.EnvMain=1 in its environment plays it too (agentsim
// gives its workers that variable).
const Simulator = "cursor-agent-sim"

// sidecarSuffix names the file next to an installed copy that holds the
// role the copy plays.
const sidecarSuffix = ".testkit-role"

// Role is a behaviour a test binary takes on when it is started as a child
// of its own tests. Run gets os.Args[1:] and returns the exit code.
type Role struct {
	Name string
	Run  func(args []string) int
}

// RunIfChild makes the test binary play a role when it was started as a
// child: as a copy made by Install (whose role wins over any environment),
// by ChildEnv (RoleEnv in its environment), or with agentsim.EnvMain=1 (the
// Simulator). It then runs the role with os.Args[1:] and exits with its
// code. Otherwise it returns at once. Call it first thing in TestMain with
// the package's own roles; Simulator is always there. A role name that is
// empty, holds "=", or is registered twice panics; an unknown role exits 2
// with a message on stderr.
//
// Built with -race, an installed copy or a simulator whose GORACE lacks
// atexit_sleep_ms re-executes itself in place (same PID, Unix only) with
// atexit_sleep_ms=0 added: the race runtime otherwise sleeps a second at
// every exit. A package role started by its environment keeps exactly the
// environment it was given.
func RunIfChild(roles ...Role) {
	roles = append([]Role{{Name: Simulator, Run: runSimulator}}, roles...)
	for i, r := range roles {
		if r.Name == "" || strings.Contains(r.Name, "=") || r.Run == nil {
			panic(fmt.Sprintf("testkit: role %q needs a name without '=' and a Run", r.Name))
		}
		if slices.ContainsFunc(roles[:i], func(o Role) bool { return o.Name == r.Name }) {
			panic(fmt.Sprintf("testkit: role %q registered twice", r.Name))
		}
	}
	name, installed := roleOfProcess()
	if name == "" {
		return
	}
	i := slices.IndexFunc(roles, func(r Role) bool { return r.Name == name })
	if i < 0 {
		fmt.Fprintf(os.Stderr, "testkit: unknown role %q\n", name)
		os.Exit(2)
	}
	if raceEnabled && (installed || name == Simulator) {
		skipRaceExitSleep()
	}
	os.Exit(roles[i].Run(os.Args[1:]))
}

// roleOfProcess returns the role this process was started to play, "" when
// it is the test binary running tests, and whether it is an installed copy.
// An installed copy's sidecar wins over the environment: the copy plays its
// role whatever it is given.
func roleOfProcess() (name string, installed bool) {
	if exe, err := os.Executable(); err == nil {
		if b, err := os.ReadFile(exe + sidecarSuffix); err == nil {
			return strings.TrimSpace(string(b)), true
		}
	}
	if name := os.Getenv(RoleEnv); name != "" {
		return name, false
	}
	if os.Getenv(agentsim.EnvMain) == "1" {
		return Simulator, false
	}
	return "", false
}

func runSimulator(args []string) int {
	return agentsim.Main(args, os.Stdin, os.Stdout, os.Stderr, os.Getenv)
}

// ChildEnv returns the environment for the exec.Cmd.Env of a child that
// plays role: this process's environment without any inherited RoleEnv,
// GORACE or simulator (CURSORKIT_SIM_*) variable, then RoleEnv=role,
// GORACE=atexit_sleep_ms=0 (a race-enabled child otherwise sleeps a second
// at every exit) and extra ("NAME=value" entries, last so they win).
func ChildEnv(role string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !inherited(kv) {
			env = append(env, kv)
		}
	}
	env = append(env, RoleEnv+"="+role, "GORACE=atexit_sleep_ms=0")
	return append(env, extra...)
}

// inherited reports whether kv is a variable ChildEnv does not pass on.
// Windows names are case-insensitive, so the comparison is too.
func inherited(kv string) bool {
	k := strings.ToUpper(kv)
	return strings.HasPrefix(k, RoleEnv+"=") || strings.HasPrefix(k, "GORACE=") || strings.HasPrefix(k, "CURSORKIT_SIM_")
}

// Install makes the running test binary available at dir/name (".exe" is
// added on Windows when name has no extension) as a program that plays
// role whatever its environment, and returns that path. dir is created if
// needed and may contain spaces. The test binary's TestMain must call
// RunIfChild with role registered (Simulator always is). The copy is
// removed with dir: use a TempDir.
func Install(t testing.TB, dir, name, role string) string {
	t.Helper()
	path, err := InstallFile(dir, name, role)
	require.NoError(t, err)
	return path
}

// InstallFile is Install for a TestMain, which has no testing.TB: it
// returns what went wrong, and removing dir afterwards is the caller's
// job.
func InstallFile(dir, name, role string) (string, error) {
	if runtime.GOOS == "windows" && filepath.Ext(name) == "" {
		name += ".exe"
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	// A hard link is free, but Windows refuses to delete any link to the
	// image of a running program (this test binary), so copy there.
	if runtime.GOOS == "windows" || os.Link(self, path) != nil {
		if err := copyFile(self, path); err != nil {
			return "", fmt.Errorf("installing %s at %s: %w", role, path, err)
		}
	}
	if err := os.WriteFile(path+sidecarSuffix, []byte(role+"\n"), 0o644); err != nil {
		return "", err
	}
	return path, nil
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

// SleepForever blocks the calling goroutine for good: how a child stays
// alive until it is killed.
func SleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}
