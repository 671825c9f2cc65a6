package task_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cursorkit/cursorkit/cursor"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/task"
)

// BenchmarkTaskOverhead measures what a task adds to a plain turn of the
// same sandboxed profile: the private home, the hooks check and the two
// record saves. Each iteration runs pairs of turns against the simulator,
// a plain cursor.Run and a task.Run, interleaved so both see the same
// machine, and reports the medians and their difference (the goal is at
// most 5 ms; scripts/bench prints PASS or MISS).
func BenchmarkTaskOverhead(b *testing.B) {
	const pairs = 30
	f := newFixture(b)
	opts := f.options()
	spec := f.spec(task.ModeConsult, "benchmark prompt")
	turn := cursor.Turn{Prompt: spec.Prompt, Mode: cursor.ModeAsk, Sandboxed: true}
	// The plain turn gets a private home made once, so both agents read
	// the same profile; what differs is the task's own work.
	home := filepath.Join(testkit.TempDir(b), "home")
	if err := cursor.WritePrivateHome(home, cursor.HomeSpec{Mode: cursor.ModeAsk, Workspace: f.workspace}); err != nil {
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
			if _, err := cursor.Run(ctx, f.bin, turn, plain); err != nil {
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

// BenchmarkFind measures `jobs status ID` without --cwd: one id looked up
// across 100 workspaces of 20 jobs each, the median of 50 lookups per
// iteration (the goal is at most 20 ms; scripts/bench prints PASS or MISS).
func BenchmarkFind(b *testing.B) {
	s := task.Store{Dir: testkit.TempDir(b)}
	root := testkit.TempDir(b)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for w := range 100 {
		ws := filepath.Join(root, fmt.Sprintf("ws%03d", w))
		for j := range 20 {
			r := benchRecord(ws, base.Add(time.Duration(w*20+j)*time.Second))
			if err := s.Save(r); err != nil {
				b.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
	}
	var times []float64
	i := 0
	for b.Loop() {
		for range 50 {
			start := time.Now()
			if _, err := s.Find("", ids[(i*7919)%len(ids)]); err != nil {
				b.Fatal(err)
			}
			times = append(times, ms(time.Since(start)))
			i++
		}
	}
	b.ReportMetric(median(times), "find-ms")
}

// BenchmarkHistory measures `jobs history --all --limit 20` over 10,000
// records in 50 workspaces (the goal is at most 100 ms), the median of
// nine calls per iteration.
func BenchmarkHistory(b *testing.B) {
	s := task.Store{Dir: testkit.TempDir(b)}
	root := testkit.TempDir(b)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10000 {
		ws := filepath.Join(root, fmt.Sprintf("ws%03d", i%50))
		if err := s.Save(benchRecord(ws, base.Add(time.Duration(i)*time.Second))); err != nil {
			b.Fatal(err)
		}
	}
	var times []float64
	for b.Loop() {
		for range 9 {
			start := time.Now()
			h, err := s.History("", 20)
			if err != nil || len(h) != 20 {
				b.Fatalf("%d entries, %v", len(h), err)
			}
			times = append(times, ms(time.Since(start)))
		}
	}
	b.ReportMetric(median(times), "history-ms")
}

func benchRecord(ws string, at time.Time) *task.Record {
	end := at.Add(time.Minute)
	return &task.Record{Engine: "cursor", ID: task.NewID(task.RoleTask, at), Role: task.RoleTask, Mode: task.ModeConsult,
		Workspace: ws, SessionID: "0f8fad5b-d9cb-469f-a165-70867728950e", Delivery: task.DeliveryBackground,
		Sandbox: task.PolicyReadOnly, AllowedTools: []string{"read_tool_call", "grep_tool_call"}, State: task.StateDone,
		Warnings: []event.Warning{}, CreatedAt: at, UpdatedAt: end, EndedAt: &end}
}
