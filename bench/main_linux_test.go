package bench

import (
	"os"
	"testing"

	"github.com/cursorkit/cursorkit/internal/simtest"
)

// TestMain lets the test binary, re-executed, act as the simulator or as the
// Go side of BenchmarkP6Scale (a process of its own, so that its peak RSS
// and CPU time are the supervisor's alone).
func TestMain(m *testing.M) {
	simtest.RunIfSimulator()
	if os.Getenv(envP6Driver) != "" {
		os.Exit(p6Driver())
	}
	os.Exit(m.Run())
}
