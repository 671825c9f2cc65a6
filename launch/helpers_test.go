package launch_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/launch"
)

// deadline bounds every wait of these tests.
const deadline = 20 * time.Second

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == envlessSleeper {
		// Started with an empty environment, so no role can reach it:
		// report, then sleep (os.Args[2] is the watch's marker).
		fmt.Printf("ready %d\n", os.Getpid())
		testkit.SleepForever()
	}
	testkit.RunIfChild(childRoles()...)
	os.Exit(m.Run())
}

// envlessSleeper is the first argument of a sleeper started with an empty
// environment and in a session of its own, as sudo, env -i and many daemons
// start their children.
const envlessSleeper = "--envless-sleeper"

// childRoles are the behaviours the test binary takes on as a child of its
// own tests (testkit.ChildEnv(name)); os.Args[1:] are their parameters.
func childRoles() []testkit.Role {
	var roles []testkit.Role
	for _, name := range []string{"echo", "echo-hold", "env", "exit", "touch", "sleep", "daemonize", "tree", "supervisor", "detach"} {
		roles = append(roles, testkit.Role{Name: name, Run: func(args []string) int { return runChild(name, args) }})
	}
	return append(roles, osRoles()...)
}

// runChild implements the helper behaviours the tests start.
func runChild(mode string, args []string) int {
	switch mode {
	case "echo": // stdin to stdout, then exit
		_, _ = io.Copy(os.Stdout, os.Stdin)
		return 0
	case "echo-hold": // stdin to stdout, a sentinel, then stay alive
		_, _ = io.Copy(os.Stdout, os.Stdin)
		fmt.Println("\nstdin-closed")
		testkit.SleepForever()
	case "env": // the environment, one NAME=value a line
		for _, kv := range os.Environ() {
			fmt.Println(kv)
		}
		return 0
	case "exit":
		code, _ := strconv.Atoi(args[0])
		return code
	case "touch":
		f, err := os.Create(args[0])
		if err != nil {
			return 1
		}
		f.Close()
		return 0
	case "sleep": // args: marker
		fmt.Printf("ready %d\n", os.Getpid())
		testkit.SleepForever()
	case "daemonize": // args: marker[, "envless" or "group"]; start a sleeper in a new session (or this group), report it, exit
		kind := "setsid"
		if len(args) > 1 && (args[1] == "envless" || args[1] == "group") {
			kind = args[1]
		}
		pids, err := startGrandchild(kind, args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("ready %d\n", pids[0])
		return 0
	case "tree": // args: marker, then kinds of grandchildren, then optionally "exit"
		marker, kinds := args[0], args[1:]
		exit := false
		for _, kind := range kinds {
			if kind == "exit" {
				exit = true
				continue
			}
			pids, err := startGrandchild(kind, marker)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			for _, pid := range pids {
				fmt.Printf("ready %d\n", pid)
			}
		}
		fmt.Println("all-ready")
		if exit {
			return 0
		}
		testkit.SleepForever()
	case "supervisor": // args: marker, kinds...; launch a tree and relay its output
		p, err := launch.Start(context.Background(), selfPlan(args...), launch.Options{Env: testkit.ChildEnv("tree")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("tree %d\n", p.Pid())
		_, _ = io.Copy(os.Stdout, p.Stdout())
		testkit.SleepForever()
	case "detach": // args: "exit" or "hold", the sleeper's output file; detach a sleeper and report it
		d, err := launch.StartDetached(context.Background(), selfPlan("detached"),
			launch.DetachOptions{Env: testkit.ChildEnv("sleep"), Stdout: args[1], Stderr: args[1]})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		codes := make([]string, len(d.Warnings))
		for i, w := range d.Warnings {
			codes[i] = w.Code
		}
		fmt.Printf("detached %d %s %q\n", d.PID, d.Created.Format(time.RFC3339Nano), strings.Join(codes, " "))
		if args[0] == "hold" {
			testkit.SleepForever()
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
	return 2
}

// startGrandchild starts this binary as a sleeper of the given kind, waits
// for its ready line and returns the PIDs to watch: the one it reported (for
// "daemon" and "envless-daemon", the daemonized sleeper, whose parent has
// exited by then) and, for "cmd", cmd.exe's as well. An "envless" sleeper
// runs with an empty environment in a session of its own. Its stderr is
// this process's, so grandchildren also hold the launch's stderr pipe.
func startGrandchild(kind, marker string) ([]int, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	mode := "sleep"
	cmd := exec.Command(exe, marker)
	switch kind {
	case "daemon":
		mode = "daemonize"
	case "envless-daemon":
		mode = "daemonize"
		cmd = exec.Command(exe, marker, "envless")
	case "group-daemon": // double-forked, staying in the group
		mode = "daemonize"
		cmd = exec.Command(exe, marker, "group")
	case "cmd":
		cmd = cmdExeCommand(exe, marker)
	}
	cmd.Env = testkit.ChildEnv(mode)
	if kind == "envless" {
		cmd = exec.Command(exe, envlessSleeper, marker)
		cmd.Env = []string{}
	}
	cmd.Stderr = os.Stderr
	if err := grandchildAttr(cmd, kind); err != nil {
		return nil, err
	}
	if kind == "envless-daemon" || kind == "group-daemon" {
		kind = "daemon" // for StartMember: an intermediate that exits
	}
	return testkit.StartMember(cmd, kind, deadline)
}

// lineReader delivers the lines of r on a channel, so tests can wait for a
// line with a deadline.
func lineReader(r io.Reader) <-chan string {
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				lines <- strings.TrimRight(line, "\r\n")
			}
			if err != nil {
				return
			}
		}
	}()
	return lines
}

// readReady collects the grandchildren's PIDs until all-ready.
func readReady(t *testing.T, lines <-chan string) []int {
	t.Helper()
	var pids []int
	timeout := time.After(deadline)
	for {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "child output ended before all-ready")
			if line == "all-ready" {
				return pids
			}
			if rest, found := strings.CutPrefix(line, "ready "); found {
				pid, err := strconv.Atoi(rest)
				require.NoError(t, err)
				pids = append(pids, pid)
			}
		case <-timeout:
			t.Fatal("timed out waiting for the tree to be ready")
		}
	}
}

// readLine waits for one line with the deadline.
func readLine(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case line, ok := <-lines:
		require.True(t, ok, "output ended")
		return line
	case <-time.After(deadline):
		t.Fatal("timed out waiting for a line")
	}
	return ""
}
