package agentsim_test

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/internal/testkit"
)

// procStat returns the ppid and pgid fields of /proc/<pid>/stat.
func procStat(t *testing.T, pid int) (ppid, pgid int) {
	t.Helper()
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(t, err)
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	ppid, err = strconv.Atoi(fields[1])
	require.NoError(t, err)
	pgid, err = strconv.Atoi(fields[2])
	require.NoError(t, err)
	return ppid, pgid
}

// ignoresSIGTERM reads the SigIgn mask of /proc/<pid>/status.
func ignoresSIGTERM(t *testing.T, pid int) bool {
	t.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if mask, ok := strings.CutPrefix(line, "SigIgn:\t"); ok {
			bits, err := strconv.ParseUint(mask, 16, 64)
			require.NoError(t, err)
			return bits&(1<<(uint(syscall.SIGTERM)-1)) != 0
		}
	}
	t.Fatal("no SigIgn line")
	return false
}

func TestSetsidEscapeLeavesTheGroup(t *testing.T) {
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioSetsidEscape)}, "prompt", printArgs...)
	p.waitOutput(resultSeen, "the result")
	escapee := p.w.WaitRecorded("escapee", waitLong)
	main := p.cmd.Process.Pid
	sid, err := unix.Getsid(escapee.PID)
	require.NoError(t, err)
	assert.Equal(t, escapee.PID, sid, "a session of its own")
	_, pgid := procStat(t, escapee.PID)
	assert.NotEqual(t, main, pgid)

	// A group kill misses it, and it keeps stdout open.
	require.NoError(t, syscall.Kill(-main, syscall.SIGKILL))
	p.waitExit()
	alive := p.w.Alive()
	assert.Equal(t, []testkit.Proc{escapee}, alive)
	assert.False(t, p.eofReached())
	p.w.Kill()
	p.waitEOF()
}

func TestDoubleForkOrphanStaysInTheGroup(t *testing.T) {
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioDoubleFork)}, "prompt", printArgs...)
	p.waitOutput(resultSeen, "the result")
	worker := p.w.WaitRecorded("double-fork", waitLong)
	main := p.cmd.Process.Pid
	ppid, pgid := procStat(t, worker.PID)
	assert.NotEqual(t, main, ppid, "reparented away from the agent")
	assert.Equal(t, main, pgid, "but still in its process group")

	require.NoError(t, syscall.Kill(-main, syscall.SIGKILL))
	p.waitExit()
	p.w.RequireGone(waitLong)
	p.waitEOF()
}

func TestWorkersCarryTheMarker(t *testing.T) {
	const marker = "marker-5c1d"
	p := startSim(t, []string{agentsim.Scenario(agentsim.ScenarioLinger), agentsim.EnvMarker + "=" + marker}, "prompt", printArgs...)
	p.waitOutput(resultSeen, "the result")
	worker := p.w.WaitRecorded("linger", waitLong)
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(worker.PID) + "/cmdline")
	require.NoError(t, err)
	assert.Contains(t, strings.Split(string(cmdline), "\x00"), "--marker="+marker)
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(worker.PID) + "/environ")
	require.NoError(t, err)
	assert.Contains(t, strings.Split(string(environ), "\x00"), agentsim.EnvMarker+"="+marker)
	_, pgid := procStat(t, worker.PID)
	assert.Equal(t, p.cmd.Process.Pid, pgid, "a plain worker shares the agent's group")
}

func TestIgnoreSIGTERM(t *testing.T) {
	tests := []struct {
		name   string
		ignore bool
	}{
		{name: "default dies of SIGTERM", ignore: false},
		{name: "ignore-sigterm", ignore: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scenarios := []string{agentsim.ScenarioLinger}
			if tt.ignore {
				scenarios = append(scenarios, agentsim.ScenarioIgnoreSIGTERM)
			}
			p := startSim(t, []string{agentsim.Scenario(scenarios...)}, "prompt", printArgs...)
			p.waitOutput(resultSeen, "the result")
			main := p.w.WaitRecorded("main", waitLong)
			worker := p.w.WaitRecorded("linger", waitLong)
			assert.Equal(t, tt.ignore, ignoresSIGTERM(t, main.PID))
			if tt.ignore {
				// The worker's pid is recorded as it starts, before its
				// runtime and then its Main set its signal dispositions.
				testkit.Eventually(t, "the worker to ignore SIGTERM", waitLong, func() bool { return ignoresSIGTERM(t, worker.PID) })
			} else {
				assert.False(t, ignoresSIGTERM(t, worker.PID))
			}
			require.NoError(t, syscall.Kill(-main.PID, syscall.SIGTERM))
			if !tt.ignore {
				p.waitExit()
				p.w.RequireGone(waitLong)
				p.waitEOF()
				return
			}
			require.NoError(t, syscall.Kill(-main.PID, syscall.SIGKILL))
			p.waitExit()
			p.w.RequireGone(waitLong)
		})
	}
}
