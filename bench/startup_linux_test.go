package bench

import (
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startupRounds of BenchmarkStartup give its medians.
const startupRounds = 60

// BenchmarkStartup is `cursorkit version`, the whole process from exec to
// exit, against a Go hello-world built alongside it (same toolchain, same
// flags), alternating (medians): what every command pays before its work,
// and what `jobs status`, `history` and `status` are mostly made of.
// Goal: version/hello <= 1.5.
func BenchmarkStartup(b *testing.B) {
	t := buildTools(b)
	run := func(path string, args ...string) time.Duration {
		cmd := exec.Command(path, args...)
		var err error
		d := timed(func() { err = cmd.Run() })
		require.NoError(b, err, "%s %q", path, args)
		return d
	}
	var versions, hellos []time.Duration
	for b.Loop() {
		for range startupRounds {
			versions = append(versions, run(t.cursorkit, "version"))
			hellos = append(hellos, run(t.hello))
		}
	}
	v, h := median(versions), median(hellos)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(ms(v), "version-ms")
	b.ReportMetric(ms(h), "hello-ms")
	b.ReportMetric(float64(v)/float64(h), "version/hello")
}
