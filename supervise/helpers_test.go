package supervise

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/shim"
)

// waitLimit bounds every wait of the real-process tests.
const waitLimit = 20 * time.Second

func TestMain(m *testing.M) {
	testkit.RunIfChild(childRoles()...)
	// Every Session's goroutines (readers, waiter, control loop) must be
	// gone once its Wait returned.
	goleak.VerifyTestMain(m)
}

// childRoles are the behaviours the test binary takes on as a child of its
// own tests (testkit.ChildEnv(name)); os.Args[1:] are their parameters.
func childRoles() []testkit.Role {
	var roles []testkit.Role
	for _, name := range []string{"exit", "crlf", "bigline", "echo", "silent", "ready-then-silent", "chatty",
		"ignore-term", "result-then-linger", "tree", "daemonize", "sleep", "gen", "pid"} {
		roles = append(roles, testkit.Role{Name: name, Run: func(args []string) int { return runChild(name, args) }})
	}
	return roles
}

// runChild implements the behaviours the tests and benchmarks start.
func runChild(mode string, args []string) int {
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	defer out.Flush()
	switch mode {
	case "exit": // args: code, then text to write to stdout and stderr
		code, _ := strconv.Atoi(args[0])
		if len(args) > 1 {
			fmt.Fprint(out, args[1])
		}
		if len(args) > 2 {
			fmt.Fprint(os.Stderr, args[2])
		}
		out.Flush()
		return code
	case "pid": // its own process id, one line
		fmt.Fprintln(out, os.Getpid())
		return 0
	case "crlf":
		fmt.Fprint(out, "first\r\nsecond\r\n\r\nlast without newline")
		return 0
	case "bigline": // args: size in bytes of the middle line
		size, _ := strconv.Atoi(args[0])
		fmt.Fprint(out, "before\n")
		_, _ = out.Write(bytes.Repeat([]byte{'x'}, size))
		fmt.Fprint(out, "\nafter\n")
		return 0
	case "echo": // stdin to stdout
		_, _ = io.Copy(out, os.Stdin)
		return 0
	case "silent":
		testkit.SleepForever()
	case "ready-then-silent":
		fmt.Fprintln(out, "ready")
		out.Flush()
		testkit.SleepForever()
	case "chatty": // a line every few milliseconds, forever
		for i := 0; ; i++ {
			fmt.Fprintf(out, "{\"n\":%d}\n", i)
			out.Flush()
			time.Sleep(5 * time.Millisecond)
		}
	case "ignore-term": // survives the polite stop
		signal.Ignore(termSignals()...)
		fmt.Fprintln(out, "ready")
		out.Flush()
		testkit.SleepForever()
	case "result-then-linger": // the work is done but the child stays
		fmt.Fprintln(out, `{"type":"result"}`)
		out.Flush()
		testkit.SleepForever()
	case "tree": // args: marker, then grandchild kinds, then optionally "exit"
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
				fmt.Fprintf(out, "ready %d\n", pid)
			}
			out.Flush()
		}
		fmt.Fprintln(out, "all-ready")
		out.Flush()
		if exit {
			return 0
		}
		testkit.SleepForever()
	case "daemonize": // args: marker; start a setsid sleeper, report it, exit
		pids, err := startGrandchild("setsid", args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(out, "ready %d\n", pids[0])
		return 0
	case "sleep": // a grandchild: args: marker
		fmt.Fprintf(out, "ready %d\n", os.Getpid())
		out.Flush()
		testkit.SleepForever()
	case "gen": // args: total bytes of 500-byte NDJSON lines
		total, _ := strconv.ParseInt(args[0], 10, 64)
		return generate(os.Stdout, total)
	}
	fmt.Fprintf(os.Stderr, "unknown mode %q\n", mode)
	return 2
}

// genLine is one 500-byte NDJSON line of the generator.
var genLine = []byte(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` +
	strings.Repeat("lorem ipsum ", 34) + `"}]},"session_id":"s"}` + "\n")

// generate writes total bytes (rounded down to whole lines) of genLine.
func generate(w io.Writer, total int64) int {
	block := bytes.Repeat(genLine, (64<<10)/len(genLine))
	lines := total / int64(len(genLine))
	for lines > 0 {
		n := min(lines, int64(len(block)/len(genLine)))
		if _, err := w.Write(block[:n*int64(len(genLine))]); err != nil {
			return 1
		}
		lines -= n
	}
	return 0
}

// startGrandchild starts this binary as a sleeper of the given kind (see
// grandchildCommand; "daemon" is a double fork whose intermediate has
// exited by the time this returns), waits for its ready line and returns
// the PIDs to watch: the sleeper's and, for "cmd", cmd.exe's too. The
// sleeper shares this process's stderr, so it also holds the supervised
// stderr pipe.
func startGrandchild(kind, marker string) ([]int, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := grandchildCommand(exe, marker, kind)
	cmd.Env = testkit.ChildEnv("sleep")
	if kind == "daemon" { // a double fork: the intermediate exits at once
		cmd.Env = testkit.ChildEnv("daemonize")
	}
	cmd.Stderr = os.Stderr
	return testkit.StartMember(cmd, kind, waitLimit)
}

// selfPlan is a plan that runs this test binary with args.
func selfPlan(t testing.TB, args ...string) shim.Command {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	argv := append([]string{exe}, args...)
	return shim.Command{Program: exe, Args: argv, CommandLine: composeCommandLine(argv), Kind: nativeKind, Target: exe}
}

// readyPIDs collects "ready PID" lines until "all-ready".
type readyPIDs struct {
	pids     []int
	allReady chan struct{}
	seen     bool
}

func newReadyPIDs() *readyPIDs { return &readyPIDs{allReady: make(chan struct{})} }

// onLine is an Options.OnLine; it runs on the reader goroutine only.
func (r *readyPIDs) onLine(line []byte) error {
	s := string(line)
	if s == "all-ready" && !r.seen {
		r.seen = true
		close(r.allReady)
		return nil
	}
	if rest, ok := strings.CutPrefix(s, "ready "); ok && !r.seen {
		if pid, err := strconv.Atoi(rest); err == nil {
			r.pids = append(r.pids, pid)
		}
	}
	return nil
}

// wait blocks until all-ready was seen; pids is safe to read afterwards.
func (r *readyPIDs) wait(t *testing.T, s *Session) []int {
	t.Helper()
	select {
	case <-r.allReady:
		return r.pids
	case <-s.Done():
		o := ranOf(s.Wait())
		t.Fatalf("the tree ended before it was ready: %s %v, stderr %q", o.Ending, o.Err, o.StderrTail)
	case <-time.After(waitLimit):
		t.Fatal("timed out waiting for the tree to be ready")
	}
	return nil
}
