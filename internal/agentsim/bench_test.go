package agentsim_test

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/cursorkit/cursorkit/internal/agentsim"
)

// BenchmarkBigStream measures how fast the big-stream scenario produces
// events (in-process, to io.Discard): the ceiling the P2 stream benchmark
// can observe through a pipe.
func BenchmarkBigStream(b *testing.B) {
	const size = 16 << 20
	env := map[string]string{agentsim.EnvScenario: agentsim.ScenarioBigStream, agentsim.EnvStreamBytes: strconv.Itoa(size)}
	getenv := func(k string) string { return env[k] }
	b.SetBytes(size)
	for b.Loop() {
		if code := agentsim.Main([]string{"--print", "--output-format", "stream-json", "--trust"},
			strings.NewReader("go"), io.Discard, io.Discard, getenv); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
