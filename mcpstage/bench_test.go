package mcpstage_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/mcpstage"
)

// BenchmarkStageRelease measures what a turn with --mcp-server spends on
// staging: New, a stage and its release on an idle repository worktree,
// its two git calls (the shape in New, the tracked check in Stage)
// included (the goal is a median of at most 20 ms; scripts/bench prints
// PASS or MISS), with `git rev-parse` alone as the baseline of one git
// call.
func BenchmarkStageRelease(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git on PATH")
	}
	ctx := context.Background()
	dir := testkit.TempDir(b)
	git(b, dir, "init", "-q")
	require := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	require(os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755))
	require(os.WriteFile(filepath.Join(dir, ".cursor", "mcp.json"), []byte(operatorConfig), 0o644))
	var pairs, gits []float64
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for b.Loop() {
		for range 20 {
			start := time.Now()
			s, err := mcpstage.New(ctx, dir, mcpstage.Options{})
			require(err)
			lease, err := s.Stage(ctx, entry)
			require(err)
			require(s.Release(ctx, lease.ID))
			pairs = append(pairs, ms(time.Since(start)))

			start = time.Now()
			cmd := exec.Command("git", "rev-parse", "--show-toplevel")
			cmd.Dir = dir
			require(cmd.Run())
			gits = append(gits, ms(time.Since(start)))
		}
	}
	median := func(xs []float64) float64 { s := slices.Sorted(slices.Values(xs)); return s[len(s)/2] }
	b.ReportMetric(median(pairs), "stage-release-ms")
	b.ReportMetric(median(gits), "git-call-ms")
}
