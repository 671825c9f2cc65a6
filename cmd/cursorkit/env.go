package main

import (
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/failure"
)

// The environment variables this command reads durations from
// (docs/contract.md, "Environment"). Each holds a positive Go duration
// ("90s", "2m"); unset or blank is the default, anything else an input
// error naming the variable, never a silent default.
const (
	// envProbeTimeout bounds the agent's --version and status probes (3 s
	// each by default), for a machine where the agent starts slowly.
	envProbeTimeout = "CURSORKIT_PROBE_TIMEOUT"
	// envStartGrace overrides jobs.DefaultStartGrace.
	envStartGrace = "CURSORKIT_START_GRACE"
	// envWaitTimeout and envWaitPoll bound `jobs result --wait` and set
	// how often it looks.
	envWaitTimeout = "CURSORKIT_WAIT_TIMEOUT"
	envWaitPoll    = "CURSORKIT_WAIT_POLL"
	// envMCPHeartbeat sets how often a staged turn's lease is renewed,
	// below mcpstage.LeaseTTL (mcpstage.HeartbeatEvery by default).
	envMCPHeartbeat = "CURSORKIT_MCP_HEARTBEAT"
	// envTaskTimeout is task's and review's --timeout when not given.
	envTaskTimeout = "CURSORKIT_TASK_TIMEOUT"
	// envExitGrace is how long task and review wait for the Cursor CLI
	// to exit by itself after its result (task.DefaultExitGrace).
	envExitGrace = "CURSORKIT_EXIT_GRACE"
)

// envDuration reads the duration variable name: def when it is unset or
// blank, else its value, which must be a positive duration (a
// failure.Input error naming the variable, not quoting its value).
func (a *app) envDuration(name string, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(a.getenv(name))
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, failure.New(failure.Input, "%s must be a positive duration such as 10s", name)
	}
	return d, nil
}
