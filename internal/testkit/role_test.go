package testkit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// lines is out with Windows line endings made plain.
func lines(out []byte) string { return strings.ReplaceAll(string(out), "\r\n", "\n") }

func TestChildEnvSetsTheRoleAndQuietsTheRaceExit(t *testing.T) {
	t.Setenv(testkit.RoleEnv, "stale")
	t.Setenv("GORACE", "halt_on_error=1")
	t.Setenv(agentsim.EnvScenario, "crash")
	t.Setenv(agentsim.EnvMain, "1")
	t.Setenv("KEPT_BY_CHILDENV", "yes")
	env := testkit.ChildEnv("fresh", "A=1", agentsim.EnvMarker+"=m")
	assert.Equal(t, []string{testkit.RoleEnv + "=fresh", "GORACE=atexit_sleep_ms=0", "A=1", agentsim.EnvMarker + "=m"}, env[len(env)-4:])
	assert.Contains(t, env, "KEPT_BY_CHILDENV=yes")
	for _, kv := range env[:len(env)-4] {
		for _, stripped := range []string{testkit.RoleEnv + "=", "GORACE=", "CURSORKIT_SIM_"} {
			assert.False(t, strings.HasPrefix(strings.ToUpper(kv), stripped), "%s is inherited", kv)
		}
	}
}

func TestAChildPlaysItsRole(t *testing.T) {
	cmd := exec.Command(self(t), "hello there")
	cmd.Env = testkit.ChildEnv("say")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "hello there\n", lines(out))

	cmd = exec.Command(self(t))
	cmd.Env = testkit.ChildEnv("exit")
	err = cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 3, exit.ExitCode())
}

func TestAnUnknownRoleExits2(t *testing.T) {
	cmd := exec.Command(self(t))
	cmd.Env = testkit.ChildEnv("no-such-role")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, stderr.String(), `unknown role "no-such-role"`)
}

func TestRolesAreCheckedWhenRegistered(t *testing.T) {
	run := func([]string) int { return 0 }
	assert.PanicsWithValue(t, `testkit: role "a" registered twice`, func() {
		testkit.RunIfChild(testkit.Role{Name: "a", Run: run}, testkit.Role{Name: "a", Run: run})
	})
	assert.PanicsWithValue(t, `testkit: role "cursor-agent-sim" registered twice`, func() {
		testkit.RunIfChild(testkit.Role{Name: testkit.Simulator, Run: run})
	}, "the simulator is built in")
	assert.Panics(t, func() { testkit.RunIfChild(testkit.Role{Name: "a=b", Run: run}) })
	assert.Panics(t, func() { testkit.RunIfChild(testkit.Role{Name: "", Run: run}) })
	assert.Panics(t, func() { testkit.RunIfChild(testkit.Role{Name: "a"}) })
	testkit.RunIfChild(roles...) // the test process plays no role: it returns
}

func TestInstallIsTheSimulatorWithoutAnyEnvironment(t *testing.T) {
	dir := filepath.Join(testkit.TempDir(t), "Program Files", "cursor agent")
	bin := testkit.Install(t, dir, "cursor-agent", testkit.Simulator)
	assert.Equal(t, dir, filepath.Dir(bin))
	if runtime.GOOS == "windows" {
		assert.Equal(t, "cursor-agent.exe", filepath.Base(bin))
	} else {
		assert.Equal(t, "cursor-agent", filepath.Base(bin))
	}

	cmd := exec.Command(bin, "--version")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "SystemRoot=" + os.Getenv("SystemRoot")} // no role anywhere
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, agentsim.DefaultVersion+"\n", lines(out))
}

// An installed copy plays its role whatever the environment says.
func TestInstallOfAPackageRoleWinsOverTheEnvironment(t *testing.T) {
	bin := testkit.Install(t, testkit.TempDir(t), "greeter", "say")
	cmd := exec.Command(bin, "from the copy")
	cmd.Env = testkit.ChildEnv("exit")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "from the copy\n", lines(out))
}

func TestTheSimulatorByEnvironment(t *testing.T) {
	for name, env := range map[string][]string{
		"ChildEnv":         testkit.ChildEnv(testkit.Simulator, agentsim.Scenario(agentsim.ScenarioUnauthenticated)),
		"agentsim.EnvMain": append(os.Environ(), agentsim.EnvMain+"=1", agentsim.Scenario(agentsim.ScenarioUnauthenticated)),
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(self(t), "status", "--format", "json")
			cmd.Env = env
			out, err := cmd.Output()
			require.NoError(t, err)
			assert.Contains(t, string(out), `"isAuthenticated":false`)
		})
	}
}

// A race-enabled installed copy, run with whatever environment the code
// under test passes, adds atexit_sleep_ms=0 to its GORACE itself; a role
// started by its environment keeps that environment exactly.
func TestAnInstalledChildSkipsTheRaceExitSleep(t *testing.T) {
	bin := testkit.Install(t, testkit.TempDir(t), "gorace", "gorace")
	env := []string{"GORACE=halt_on_error=1", "SystemRoot=" + os.Getenv("SystemRoot")}
	cmd := exec.Command(bin)
	cmd.Env = env
	out, err := cmd.Output()
	require.NoError(t, err)
	want := "halt_on_error=1"
	if testkit.RaceEnabled && runtime.GOOS != "windows" {
		want += " atexit_sleep_ms=0"
	}
	assert.Equal(t, want+"\n", lines(out))

	cmd = exec.Command(self(t))
	cmd.Env = append(env, testkit.RoleEnv+"=gorace")
	out, err = cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "halt_on_error=1\n", lines(out))
}
