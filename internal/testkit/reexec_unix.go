//go:build unix

package testkit

import (
	"os"
	"strings"
	"syscall"
)

// skipRaceExitSleep re-executes a race-enabled child in place (same PID)
// with atexit_sleep_ms=0 added to GORACE, unless GORACE already sets it
// (ChildEnv does): the race runtime otherwise sleeps a second at every
// exit, which would make every simulated `--version` slow.
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
	_ = syscall.Exec(exe, os.Args, append(env, "GORACE="+gorace)) // returns only on failure: run as we are
}
