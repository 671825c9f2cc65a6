package bench

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
	"github.com/cursorkit/cursorkit/probe"
)

// probeRounds of alternating runs give the medians the probe and doctor
// benchmarks report.
const probeRounds = 9

// BenchmarkProbeOverhead is what a probe adds to the agent's own
// --version: probe.Probe (resolution of the configured simulator, shim
// plan, supervised --version, parse, judge) against the simulator's
// --version started with os/exec, and the built `cursorkit probe --json`
// for reference (it adds cursorkit's own start), alternating in the same
// run (medians of nine rounds). Goal: overhead-ms <= 10.
func BenchmarkProbeOverhead(b *testing.B) {
	t := buildTools(b)
	env := withEnv(agentsim.Scenario())
	cfg := probe.Config{Override: t.sim, Environ: env}
	cli := cursorkitEnv(b, t, nil)
	var version, inProcess, viaCLI []time.Duration
	for b.Loop() {
		for range probeRounds {
			version = append(version, timed(func() {
				cmd := exec.Command(t.sim, "--version")
				cmd.Env = env
				out, err := cmd.Output()
				require.NoError(b, err)
				require.Contains(b, string(out), agentsim.DefaultVersion)
			}))
			inProcess = append(inProcess, timed(func() {
				rep, err := probe.Probe(context.Background(), cfg)
				require.NoError(b, err)
				require.True(b, rep.Available)
			}))
			viaCLI = append(viaCLI, timed(func() { cli.run(b, "probe") }))
		}
	}
	v, p, c := median(version), median(inProcess), median(viaCLI)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(v), "version-ms")
	b.ReportMetric(ms(p), "probe-ms")
	b.ReportMetric(ms(p-v), "overhead-ms")
	b.ReportMetric(ms(c), "cli-probe-ms")
	b.ReportMetric(ms(c-v), "cli-overhead-ms")
}

// BenchmarkDoctorOverhead is what doctor adds to the slowest single probe
// it runs: the built `cursorkit doctor --json` against the slowest of
// `cursorkit probe`, `status` and `models --refresh` (each a whole
// command), alternating in the same run (medians of nine rounds), with a
// fresh catalog cache for every doctor. "fast" is the simulator as is;
// "slow" makes status and models take 200 ms each, so that doctor done
// sequentially would show. Goal: overhead-ms (doctor minus the slowest
// probe) <= 10.
func BenchmarkDoctorOverhead(b *testing.B) {
	t := buildTools(b)
	for _, c := range []struct {
		name string
		env  []string
	}{
		{"fast", []string{agentsim.Scenario()}},
		{"slow", []string{agentsim.Scenario(agentsim.ScenarioSlowStatus, agentsim.ScenarioSlowModels), agentsim.EnvDelay + "=200ms"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cli := cursorkitEnv(b, t, c.env)
			var probes, statuses, models, doctors []time.Duration
			runs := 0
			for b.Loop() {
				for range probeRounds {
					runs++
					probes = append(probes, timed(func() { cli.run(b, "probe") }))
					statuses = append(statuses, timed(func() { cli.run(b, "status") }))
					models = append(models, timed(func() { cli.run(b, "models", "--refresh") }))
					fresh := cli.withCache(filepath.Join(b.TempDir(), "cache"+strconv.Itoa(runs)))
					doctors = append(doctors, timed(func() { fresh.run(b, "doctor") }))
				}
			}
			p, s, m, d := median(probes), median(statuses), median(models), median(doctors)
			slowest := max(p, s, m)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(ms(p), "probe-ms")
			b.ReportMetric(ms(s), "status-ms")
			b.ReportMetric(ms(m), "models-ms")
			b.ReportMetric(ms(d), "doctor-ms")
			b.ReportMetric(ms(slowest), "slowest-probe-ms")
			b.ReportMetric(ms(d-slowest), "overhead-ms")
			b.ReportMetric(ms(d)/ms(s+m), "doctor/(status+models)")
		})
	}
}

// cliEnv runs the built cursorkit against the simulator as the configured
// binary, in a home, config and cache of its own.
type cliEnv struct {
	t   tools
	env []string
}

func cursorkitEnv(b *testing.B, t tools, simEnv []string) cliEnv {
	home := b.TempDir()
	env := withEnv(append([]string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"CURSORKIT_SETTINGS=" + filepath.Join(home, "settings.json"),
		"PATH=" + filepath.Dir(t.sim) + ":/usr/bin:/bin",
	}, simEnv...)...)
	return cliEnv{t: t, env: env}
}

// withCache returns c with its catalog cache in dir.
func (c cliEnv) withCache(dir string) cliEnv {
	c.env = withEnvIn(c.env, "XDG_CACHE_HOME="+dir)
	return c
}

// run runs `cursorkit --binary SIM COMMAND --json ARGS...`, requiring
// success: exit 0 and one JSON object on stdout.
func (c cliEnv) run(b *testing.B, command string, args ...string) {
	cmd := exec.Command(c.t.cursorkit, append([]string{"--binary", c.t.sim, command, "--json"}, args...)...)
	cmd.Env = c.env
	var out map[string]any
	runJSON(b, cmd, &out)
	require.NotContains(b, out, "error")
}
