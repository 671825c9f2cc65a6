package jobs_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cursorkit/cursorkit/jobs"
)

// BenchmarkFind measures `jobs status ID` without --cwd: one id looked up
// across 100 workspaces of 20 jobs each, the median of 50 lookups per
// iteration (the goal is at most 20 ms; scripts/bench prints PASS or MISS).
func BenchmarkFind(b *testing.B) {
	s, root := jobs.NewTestStore(b)
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
	s, root := jobs.NewTestStore(b)
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
			recs, err := s.List("", 20)
			if err != nil || len(recs) != 20 {
				b.Fatalf("%d entries, %v", len(recs), err)
			}
			for _, r := range recs {
				_ = r.Project()
			}
			times = append(times, ms(time.Since(start)))
		}
	}
	b.ReportMetric(median(times), "history-ms")
}

// benchRecord is a finished task's record as a worker leaves it.
func benchRecord(ws string, at time.Time) *jobs.Record {
	r := jobs.JobAt(ws, jobs.RoleTask, at, jobs.StateDone, jobs.ModeConsult, "0f8fad5b-d9cb-469f-a165-70867728950e")
	r.Sandbox, r.AllowedTools = "workspace_readonly", []string{"read_tool_call", "grep_tool_call"}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
