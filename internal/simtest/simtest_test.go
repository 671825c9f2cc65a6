package simtest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/simtest"
)

func TestMain(m *testing.M) {
	simtest.RunIfSimulator()
	os.Exit(m.Run())
}

func TestInstallIsTheSimulatorWithoutAnyEnvironment(t *testing.T) {
	assert.False(t, simtest.IsSimulator(), "the test process itself is not the simulator")
	dir := filepath.Join(simtest.TempDir(t), "Program Files", "cursor agent")
	bin := simtest.Install(t, dir, "cursor-agent")
	assert.Equal(t, dir, filepath.Dir(bin))
	if filepath.Ext(bin) == ".exe" {
		assert.Equal(t, "cursor-agent.exe", filepath.Base(bin))
	}
	_, err := os.Stat(bin + simtest.SidecarSuffix)
	require.NoError(t, err)

	cmd := exec.Command(bin, "--version")
	cmd.Env = simtest.Env() // no CURSORKIT_SIM_MAIN: the sidecar decides
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, agentsim.DefaultVersion+"\n", string(out))
}

func TestReexecWithEnvironment(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, "status", "--format", "json")
	cmd.Env = simtest.Env(agentsim.EnvMain+"=1", agentsim.Scenario(agentsim.ScenarioUnauthenticated))
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"isAuthenticated":false`)
}

func TestEnv(t *testing.T) {
	t.Setenv(agentsim.EnvScenario, "crash")
	t.Setenv("CURSORKIT_SIM_SOMETHING", "x")
	env := simtest.Env("A=1", agentsim.EnvMarker+"=m")
	var sim []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "CURSORKIT_SIM_") {
			sim = append(sim, kv)
		}
	}
	assert.Equal(t, []string{agentsim.EnvMarker + "=m"}, sim)
	assert.Equal(t, "A=1", env[len(env)-2])
}

func TestRecordedAndSurvivors(t *testing.T) {
	dir := simtest.PIDDir(t)
	self := os.Getpid()
	selfFile := filepath.Join(dir, strconv.Itoa(self))
	require.NoError(t, os.WriteFile(selfFile, []byte("main\n"), 0o644))
	// Runs before PIDDir's cleanup, which would otherwise kill this test.
	t.Cleanup(func() { require.NoError(t, os.Remove(selfFile)) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "not-a-pid"), []byte("x"), 0o644))

	// A process that has exited (and been reaped) is recorded but not alive.
	bin := simtest.Install(t, simtest.TempDir(t), "cursor-agent")
	done := exec.Command(bin, "--version")
	done.Env = simtest.Env(agentsim.EnvPIDDir + "=" + dir)
	require.NoError(t, done.Run())
	gone := done.Process.Pid

	recorded, err := simtest.Recorded(dir)
	require.NoError(t, err)
	assert.ElementsMatch(t, []simtest.Process{{PID: self, Role: "main"}, {PID: gone, Role: "main"}}, recorded)
	alive, err := simtest.Survivors(dir)
	require.NoError(t, err)
	assert.Equal(t, []simtest.Process{{PID: self, Role: "main"}}, alive)
	assert.Contains(t, []int{self, gone}, simtest.WaitRecorded(t, dir, "main", time.Second).PID)
	_, err = simtest.Recorded(filepath.Join(dir, "missing"))
	assert.Error(t, err)
}

func TestKillSurvivors(t *testing.T) {
	dir := simtest.PIDDir(t)
	bin := simtest.Install(t, simtest.TempDir(t), "cursor-agent")
	cmd := exec.Command(bin, "--version")
	cmd.Env = simtest.Env(agentsim.EnvPIDDir+"="+dir, agentsim.Scenario(agentsim.ScenarioSlowVersion), agentsim.EnvDelay+"=10m")
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	simtest.WaitRecorded(t, dir, "slow-version", time.Minute)
	simtest.WaitRecorded(t, dir, "main", time.Minute)
	killed := simtest.KillSurvivors(dir)
	assert.Len(t, killed, 2, "the simulator and its worker")
	select {
	case err := <-exited:
		assert.Error(t, err, "killed")
	case <-time.After(time.Minute):
		t.Fatal("the killed simulator did not exit")
	}
	simtest.RequireNoSurvivors(t, dir, time.Minute)
}
