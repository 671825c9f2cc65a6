package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/bench/internal/turns"
	"github.com/cursorkit/cursorkit/internal/agentsim"
)

// TestConcurrentTurnsDrivers checks the harness BenchmarkConcurrentTurnsRSS
// relies on: both drivers complete a few concurrent normal turns, see the
// same number of stream lines, and report a peak RSS and CPU time of their
// own.
func TestConcurrentTurnsDrivers(t *testing.T) {
	const n = 3
	tl := buildTools(t)
	simEnv := []string{agentsim.Scenario(agentsim.ScenarioNormal)}

	goRep := runGoDriver(t, tl, simEnv, n)
	assert.Positive(t, goRep.Lines)
	assert.Equal(t, int64(0), goRep.Lines%n, "every turn streams the same lines")
	assert.Positive(t, goRep.MaxRSSKB)
	assert.Positive(t, goRep.UserMS+goRep.SysMS)
	assert.GreaterOrEqual(t, goRep.PeakInFlight, 1)

	node := nodePath(t)
	if node == "" {
		t.Log("node not found: the Node driver is not checked")
		return
	}
	nodeRep := runNodeDriver(t, node, tl.sim, simEnv, n)
	assert.Equal(t, goRep.Lines, nodeRep.Lines)
	assert.Positive(t, nodeRep.MaxRSSKB)
	assert.Positive(t, nodeRep.UserMS+nodeRep.SysMS)
}

func TestVMHWM(t *testing.T) {
	kb, err := turns.VMHWM("self")
	require.NoError(t, err)
	assert.Positive(t, kb)
}
