package jobs_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
)

// BenchmarkFind measures `jobs status ID` without --cwd: one id looked up
// across 100 workspaces of 20 jobs each, the median of 50 lookups per
// iteration (the goal is at most 20 ms; scripts/bench prints PASS or MISS).
func BenchmarkFind(b *testing.B) {
	s := jobs.Store{Dir: testkit.TempDir(b)}
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
	s := jobs.Store{Dir: testkit.TempDir(b)}
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

func benchRecord(ws string, at time.Time) *jobs.Record {
	end := at.Add(time.Minute)
	return &jobs.Record{Engine: "cursor", ID: jobs.NewID(jobs.RoleTask, at), Role: jobs.RoleTask, Mode: jobs.ModeConsult,
		Workspace: ws, SessionID: "0f8fad5b-d9cb-469f-a165-70867728950e", Delivery: jobs.DeliveryBackground,
		Sandbox: "workspace_readonly", AllowedTools: []string{"read_tool_call", "grep_tool_call"}, State: jobs.StateDone,
		Warnings: []event.Warning{}, CreatedAt: at, UpdatedAt: end, EndedAt: &end}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
