// Command timed runs the program TIMED_TARGET names with its own
// arguments, standard streams and exit code, and appends to the file
// TIMED_LOG names one line, "START END": the CLOCK_MONOTONIC nanoseconds
// at which that program started and ended. It stands between a benchmark
// and a real agent CLI (bench's BenchmarkRealClaudeTurn), so a run's time
// can be split into the CLI's and the rest; it is small, so that what it
// adds itself is small too, and it is measured (a direct run through it)
// and taken out.
package main

import (
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

func main() {
	cmd := exec.Command(os.Getenv("TIMED_TARGET"), os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := monotonic()
	err := cmd.Run()
	end := monotonic()
	if f, ferr := os.OpenFile(os.Getenv("TIMED_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); ferr == nil {
		fmt.Fprintf(f, "%d %d\n", start, end)
		f.Close()
	}
	if exit, ok := err.(*exec.ExitError); ok {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "timed:", err)
		os.Exit(127)
	}
}
