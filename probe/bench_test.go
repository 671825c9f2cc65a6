package probe

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// BenchmarkProbeOverhead measures Probe (resolution, shim plan, a
// supervised --version with its process group or Job Object, parse, judge)
// against the simulator's own --version started with os/exec, alternating
// the two in the same run so a noisy machine affects both alike. It
// reports both means and the overhead; the goal is an overhead of
// at most 10 ms.
func BenchmarkProbeOverhead(b *testing.B) {
	m := newSimMachine(b)
	agent := m.install(b, "cursor-agent")
	const pairs = 5
	var baseline, probe time.Duration
	n := 0
	for b.Loop() {
		for range pairs {
			start := time.Now()
			cmd := exec.Command(agent, "--version")
			cmd.Env = m.cfg.Environ
			if out, err := cmd.Output(); err != nil || len(out) == 0 {
				b.Fatalf("--version: %v", err)
			}
			baseline += time.Since(start)

			start = time.Now()
			if _, err := Probe(context.Background(), m.cfg); err != nil {
				b.Fatal(err)
			}
			probe += time.Since(start)
			n++
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
	b.ReportMetric(ms(baseline), "version-ms")
	b.ReportMetric(ms(probe), "probe-ms")
	b.ReportMetric(ms(probe-baseline), "overhead-ms")
}

// BenchmarkProbeAfterFailingOverride adds a configured override that does
// not exist: its resolution fails without starting anything, so the cost
// stays one process start.
func BenchmarkProbeAfterFailingOverride(b *testing.B) {
	m := newSimMachine(b)
	m.install(b, "cursor-agent")
	cfg := m.cfg
	cfg.Override = m.root + "/missing/cursor-agent"
	for b.Loop() {
		if _, err := Probe(context.Background(), cfg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseModels(b *testing.B) {
	out := "⠋ Loading models…\r\x1b[2KAvailable models\r\n\r\n"
	for i := range 200 {
		out += "\x1b[2mmodel-" + strconv.Itoa(i) + " - Model " + strconv.Itoa(i) + " (current)\x1b[0m\r\n"
	}
	out += "\r\nTip: use --model <id> to switch.\r\n"
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		if c := parseModels(out); len(c.Models) != 200 {
			b.Fatalf("%d models", len(c.Models))
		}
	}
}

func BenchmarkParseStatus(b *testing.B) {
	out := []byte("\uFEFF\x1b[2mChecking authentication…\x1b[0m\n" +
		`{"status":"authenticated","isAuthenticated":true,"hasAccessToken":true,"userInfo":{"email":"dev@example.com"}}` + "\n")
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		if a := parseStatus(out, nil, 0); !a.Authenticated {
			b.Fatal("not authenticated")
		}
	}
}

// BenchmarkInspectOverhead measures Inspect (probe, then status and models
// concurrently, models always refreshed) against the simulator's own
// commands started with os/exec in the same run: --version followed by the
// slower of `status --format json` and `models`, the wall time a perfectly
// concurrent doctor could reach.
func BenchmarkInspectOverhead(b *testing.B) {
	m := newSimMachine(b)
	agent := m.install(b, "cursor-agent")
	timed := func(args ...string) time.Duration {
		start := time.Now()
		cmd := exec.Command(agent, args...)
		cmd.Env = m.cfg.Environ
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v", args, err)
		}
		return time.Since(start)
	}
	const pairs = 3
	var baseline, inspect time.Duration
	n := 0
	for b.Loop() {
		for range pairs {
			baseline += timed("--version") + max(timed("status", "--format", "json"), timed("models"))
			start := time.Now()
			in := Inspect(context.Background(), m.cfg, true)
			if in.ProbeErr != nil || in.Auth.Err() != nil || in.ModelsErr != nil {
				b.Fatal(in.ProbeErr, in.Auth.Err(), in.ModelsErr)
			}
			inspect += time.Since(start)
			n++
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
	b.ReportMetric(ms(baseline), "sequential-best-ms")
	b.ReportMetric(ms(inspect), "inspect-ms")
	b.ReportMetric(ms(inspect-baseline), "overhead-ms")
}
