package turns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cursorkit/cursorkit/event"
)

// Report is what each concurrent driver (Go and Node alike) prints: its
// own resource usage, children excluded: MaxRSSKB is VmHWM from
// /proc/self/status, the CPU times come from getrusage(RUSAGE_SELF).
type Report struct {
	Turns        int     `json:"turns"`
	Failed       int     `json:"failed"`
	Lines        int64   `json:"lines"`
	PeakInFlight int     `json:"peakInFlight"`
	MaxRSSKB     int64   `json:"maxRSSKB"`
	UserMS       float64 `json:"userMS"`
	SysMS        float64 `json:"sysMS"`
	WallMS       float64 `json:"wallMS"`
}

// Drive runs n turns of the simulator at sim concurrently, each as Run
// does, with this process's environment, and reports. A turn is in flight
// from its first event (the simulator runs and has spoken) until
// cursor.Run returned (its whole tree is gone). Failed turns are counted
// and described on stderr.
func Drive(sim string, n int) (Report, error) {
	bin := SimBinary(sim)
	env := os.Environ()
	rep := Report{Turns: n}
	var inFlight, peak, lines, failed atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			started := false
			got, err := Run(context.Background(), bin, env, event.NewWriter(io.Discard), nil, func() {
				started = true
				now := inFlight.Add(1)
				for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
				}
			})
			if started {
				inFlight.Add(-1)
			}
			lines.Add(got)
			if err != nil {
				failed.Add(1)
				fmt.Fprintln(os.Stderr, "go driver: turn:", err)
			}
		})
	}
	wg.Wait()
	rep.WallMS = float64(time.Since(start)) / float64(time.Millisecond)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return rep, fmt.Errorf("getrusage: %w", err)
	}
	var err error
	if rep.MaxRSSKB, err = VMHWM("self"); err != nil {
		return rep, err
	}
	rep.UserMS = float64(ru.Utime.Nano()) / 1e6
	rep.SysMS = float64(ru.Stime.Nano()) / 1e6
	rep.PeakInFlight, rep.Lines, rep.Failed = int(peak.Load()), lines.Load(), int(failed.Load())
	return rep, nil
}

// VMHWM returns the peak resident set size in KiB of process pid ("self"
// for this one), from /proc/PID/status, while it runs. getrusage's
// ru_maxrss would not do: Linux carries it over execve from the forking
// parent (the benchmark process, hundreds of MB after the throughput
// benchmarks), whereas VmHWM belongs to the address space exec created.
func VMHWM(pid string) (int64, error) {
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM in /proc/" + pid + "/status")
}

// StartProfiles starts a CPU profile into prefix.cpu and records every
// allocation; the returned stop ends the CPU profile and writes a heap
// profile into prefix.heap (alloc_space tells what each turn allocates).
// Profiling costs memory and CPU: a profiled run's figures are not the
// benchmark's.
func StartProfiles(prefix string) (stop func(), err error) {
	runtime.MemProfileRate = 1
	cpu, err := os.Create(prefix + ".cpu")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		cpu.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		runtime.GC() // the heap profile is as of the last completed cycle
		if heap, err := os.Create(prefix + ".heap"); err == nil {
			_ = pprof.WriteHeapProfile(heap)
			heap.Close()
		}
	}, nil
}
