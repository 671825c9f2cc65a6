//go:build !windows

package simtest

import (
	"os"
	"strings"
	"syscall"
)

// skipRaceExitSleep re-executes a race-enabled simulator in place (same
// pid) with GORACE=atexit_sleep_ms=0: the race runtime otherwise sleeps a
// second at every exit, which would make every simulated `--version` slow.
func skipRaceExitSleep() {
	if strings.Contains(os.Getenv("GORACE"), "atexit_sleep_ms") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	env = append(env, "GORACE="+gorace)
	syscall.Exec(exe, os.Args, env) // only returns on failure: run as we are
}
