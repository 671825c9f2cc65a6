package task_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
	"github.com/cursorkit/cursorkit/task"
	"github.com/cursorkit/cursorkit/turn"
)

// BenchmarkTaskOverhead measures what a task adds to a plain turn of the
// same sandboxed profile: the private home, the hooks check and the two
// record saves. Each iteration runs pairs of turns against the simulator,
// a plain Cursor turn (agents.Agent.Run) and a task.Run, interleaved so both see the same
// machine, and reports the medians and their difference (the goal is at
// most 5 ms; scripts/bench prints PASS or MISS).
func BenchmarkTaskOverhead(b *testing.B) {
	const pairs = 30
	f := newFixture(b)
	opts := f.options()
	spec := f.spec(jobs.ModeConsult, "benchmark prompt")
	req := agents.Turn{Prompt: spec.Prompt, Mode: turn.ModeAsk, Sandboxed: true}
	// The plain turn gets a private home made once, so both agents read
	// the same profile; what differs is the task's own work.
	home := filepath.Join(testkit.TempDir(b), "home")
	if err := cursor.WritePrivateHome(home, cursor.HomeSpec{Mode: turn.ModeAsk, Workspace: f.workspace}); err != nil {
		b.Fatal(err)
	}
	plainEnv := append(slices.Clone(f.env), "HOME="+home)
	ctx := context.Background()
	var runs, tasks []float64
	for b.Loop() {
		for range pairs {
			start := time.Now()
			plain := opts.Turn
			plain.Dir, plain.Env = f.workspace, plainEnv
			if _, err := agents.Cursor().Run(ctx, f.bin.Resolution, f.bin.Configured, req, plain); err != nil {
				b.Fatal(err)
			}
			runs = append(runs, ms(time.Since(start)))
			start = time.Now()
			if _, _, err := task.Run(ctx, f.store, spec, opts); err != nil {
				b.Fatal(err)
			}
			tasks = append(tasks, ms(time.Since(start)))
		}
	}
	run, tsk := median(runs), median(tasks)
	b.ReportMetric(run, "run-ms")
	b.ReportMetric(tsk, "task-ms")
	b.ReportMetric(tsk-run, "overhead-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
