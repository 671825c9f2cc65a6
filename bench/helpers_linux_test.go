package bench

import (
	"bytes"
	"encoding/json/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/bench/internal/turns"
)

// tools are the binaries a benchmark runs, built from this module.
type tools struct {
	dir       string
	cursorkit string
	// sim is the cursor-agent simulator, named cursor-agent in a directory
	// of its own so that it can stand on PATH.
	sim string
	// goDriver is testdata/go-driver, the Go side of
	// BenchmarkConcurrentTurnsRSS.
	goDriver string
	// timed is testdata/timed, the wrapper BenchmarkRealClaudeTurn
	// times a real CLI with, named claude.
	timed string
	// hello is testdata/hello, BenchmarkStartup's baseline.
	hello string
}

// buildTools builds cmd/cursorkit, testdata/cursor-agent-sim,
// bench/testdata/go-driver and bench/testdata/timed into a
// temporary directory (the go command's build cache makes a second build
// cheap).
func buildTools(b testing.TB) tools {
	b.Helper()
	root, err := filepath.Abs("..")
	require.NoError(b, err)
	dir := b.TempDir()
	t := tools{
		dir:       dir,
		cursorkit: filepath.Join(dir, "cursorkit"),
		sim:       filepath.Join(dir, "sim", "cursor-agent"),
		goDriver:  filepath.Join(dir, "go-driver"),
		timed:     filepath.Join(dir, "timed", "claude"),
		hello:     filepath.Join(dir, "hello"),
	}
	for out, pkg := range map[string]string{
		t.cursorkit: "./cmd/cursorkit",
		t.sim:       "./testdata/cursor-agent-sim",
		t.goDriver:  "./bench/testdata/go-driver",
		t.timed:     "./bench/testdata/timed",
		t.hello:     "./bench/testdata/hello",
	} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		// Built as `make build` builds cursorkit: without cgo.
		cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		msg, err := cmd.CombinedOutput()
		require.NoError(b, err, "go build %s: %s", pkg, msg)
	}
	return t
}

// nodePath returns node's path, or "" after logging why the Node baseline
// is skipped.
func nodePath(b testing.TB) string {
	b.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		b.Logf("node not found on PATH: the Node baseline is skipped (%v)", err)
		return ""
	}
	return node
}

// script returns the absolute path of a Node script in testdata.
func script(b testing.TB, name string) string {
	b.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(b, err)
	return p
}

// turnArgs is turns.Turn's argv after the program, exactly as `cursorkit
// run` builds it (cursor.Args); the baselines start the simulator with it.
func turnArgs() []string {
	args, err := cursor.Args(turns.Turn())
	if err != nil {
		panic(err) // the default turn's argv is a constant
	}
	return args
}

// withEnv returns os.Environ() with the given KEY=VALUE entries replacing
// any of the same keys.
func withEnv(extra ...string) []string {
	return withEnvIn(os.Environ(), extra...)
}

// withEnvIn returns a copy of env with the given KEY=VALUE entries
// replacing any of the same keys.
func withEnvIn(env []string, extra ...string) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		for _, e := range extra {
			if k, _, _ := strings.Cut(e, "="); strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return false
	})
	return append(env, extra...)
}

// timed returns how long f took.
func timed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}

// median returns the median of ds (which it sorts).
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runJSON runs cmd and decodes its stdout, one JSON object, into v.
func runJSON(b testing.TB, cmd *exec.Cmd, v any) {
	b.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(b, cmd.Run(), "%s: %s", cmd.Path, stderr.String())
	require.NoError(b, json.Unmarshal(stdout.Bytes(), v), "%s printed %q", cmd.Path, stdout.String())
}
