package testkit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// StartReady starts cmd, whose Stdout must be nil, and returns the PID the
// child reports with its first line "ready PID". It waits up to within for
// that line, and kills the child if it does not come. The pipe is closed
// afterwards, so the child must write nothing more to its stdout.
func StartReady(cmd *exec.Cmd, within time.Duration) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		return 0, err
	}
	type result struct {
		line string
		err  error
	}
	first := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		first <- result{strings.TrimRight(line, "\r\n"), err}
	}()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case got := <-first:
		if got.err != nil {
			return 0, fmt.Errorf("no ready line from %s: %w", cmd.Path, got.err)
		}
		rest, ok := strings.CutPrefix(got.line, "ready ")
		if !ok {
			return 0, fmt.Errorf("%s reported %q, not a ready line", cmd.Path, got.line)
		}
		return strconv.Atoi(rest)
	case <-timer.C:
		_ = cmd.Process.Kill()
		return 0, fmt.Errorf("%s did not report ready within %v", cmd.Path, within)
	}
}

// StartMember starts cmd, one member of a test's process tree, as
// StartReady does and returns the PIDs a Watch should cover. kind says how
// cmd was built: "cmd" is cmd.exe running the member (both PIDs are
// returned), "daemon" is the intermediate of a double fork that reports its
// daemon's PID and exits (it is reaped here, only the daemon's PID is
// returned), anything else is a plain member.
func StartMember(cmd *exec.Cmd, kind string, within time.Duration) ([]int, error) {
	pid, err := StartReady(cmd, within)
	if err != nil {
		return nil, fmt.Errorf("%s member: %w", kind, err)
	}
	switch kind {
	case "daemon":
		if err := cmd.Wait(); err != nil {
			return nil, fmt.Errorf("the intermediate of the daemon: %w", err)
		}
	case "cmd":
		return []int{cmd.Process.Pid, pid}, nil
	}
	return []int{pid}, nil
}

// Eventually polls cond every few milliseconds until it holds, and fails t
// if it does not within the given time.
func Eventually(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	if !poll(within, cond) {
		t.Fatalf("timed out after %v waiting for %s", within, what)
	}
}

// poll reports whether cond held within the given time; cond is tried at
// least once.
func poll(within time.Duration, cond func() bool) bool {
	limit := time.Now().Add(within)
	for !cond() {
		if time.Now().After(limit) {
			return false
		}
		time.Sleep(5 * time.Millisecond) // a polling pace, the limit bounds the wait
	}
	return true
}
