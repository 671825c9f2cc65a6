//go:build linux

// Command go-driver is the Go side of BenchmarkConcurrentTurnsRSS: a small
// program that embeds cursorkit as an orchestrator would, runs N turns of
// the simulator concurrently through cursor.Run and prints its own report
// (peak RSS, CPU time) as one JSON object. It is built by the benchmark,
// like the simulator, so that what is measured is cursorkit's cost in a
// program of its own, not the test binary's.
//
//	go-driver SIM N
//
// CURSORKIT_BENCH_DRIVER_PROFILE=PREFIX writes PREFIX.cpu and PREFIX.heap.
package main

import (
	"encoding/json/v2"
	"fmt"
	"os"
	"strconv"

	"github.com/cursorkit/cursorkit/bench/internal/turns"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go-driver SIM N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-driver:", err)
		os.Exit(2)
	}
	if prefix := os.Getenv("CURSORKIT_BENCH_DRIVER_PROFILE"); prefix != "" {
		stop, err := turns.StartProfiles(prefix)
		if err != nil {
			fmt.Fprintln(os.Stderr, "go-driver:", err)
			os.Exit(2)
		}
		defer stop()
	}
	rep, err := turns.Drive(os.Args[1], n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-driver:", err)
		os.Exit(2)
	}
	out, _ := json.Marshal(rep)
	fmt.Println(string(out))
}
