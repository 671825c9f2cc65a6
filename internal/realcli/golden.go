package realcli

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/modelapi"
)

// Golden is one real turn as a CLI played it, recorded by
// scripts/real-streams in testdata/real/CLI/VERSION/: SCENARIO.ndjson is
// its stdout, SCENARIO.json this record of how it ran. Paths and the
// stand-in's port become stable names (Normalize), what differs between
// runs stable values (Stabilize), so a refresh's diff shows what the CLI
// changed.
type Golden struct {
	CLI      string          `json:"cli"`
	Version  string          `json:"version"`
	Scenario string          `json:"scenario"`
	Args     []string        `json:"args"`
	Script   modelapi.Script `json:"script"`
	// Stopped reports that the CLI did not exit but was stopped (the
	// stall's inactivity deadline): ExitCode means nothing, a replay hangs.
	ExitCode int    `json:"exitCode"`
	Stopped  bool   `json:"stopped"`
	Stderr   string `json:"stderr"`
}

// GoldenFile is a Golden read from testdata; Stdout is its .ndjson's path.
type GoldenFile struct {
	Golden
	Stdout string
}

// The stable names Normalize puts in place of a run's own paths.
const (
	NormWorkspace = "/workspace"
	NormHome      = "/home/user"
	NormAPI       = "127.0.0.1:PORT"
	NormInstall   = "/install"
)

// Normalize replaces each old string with its new one in s, longest old
// first (so a home inside the workspace's parent stays a home).
func Normalize(s string, replace map[string]string) string {
	olds := make([]string, 0, len(replace))
	for old := range replace {
		if old != "" {
			olds = append(olds, old)
		}
	}
	slices.SortFunc(olds, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, old := range olds {
		pairs = append(pairs, old, replace[old])
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// The values that differ from one run of a CLI to the next: ids,
// timestamps, measured durations, a connection's ports.
var (
	uuidPattern      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timestampPattern = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}[.-]\d{3}Z`)
	durationPattern  = regexp.MustCompile(`"(duration_ms|duration_api_ms|ttft_ms|ttft_stream_ms|time_to_request_ms|durationMs)":\d+(\.\d+)?`)
	jitteredPattern  = regexp.MustCompile(`"retry_delay_ms":\d+\.\d+`)
	portPattern      = regexp.MustCompile(`(localPort|remotePort|bytesWritten|bytesRead): \d+`)
)

// Stabilize replaces what differs between runs in a recorded stream: each
// UUID by one numbered in order of first appearance (a session id stays
// one id), every timestamp by one, and by 0 the durations a CLI measured,
// a retry delay with random jitter (a fraction of a millisecond), and a
// connection's ports and byte counts.
func Stabilize(s string) string {
	seen := map[string]string{}
	s = uuidPattern.ReplaceAllStringFunc(s, func(u string) string {
		if v, ok := seen[u]; ok {
			return v
		}
		v := fmt.Sprintf("00000000-0000-4000-8000-%012d", len(seen)+1)
		seen[u] = v
		return v
	})
	s = timestampPattern.ReplaceAllStringFunc(s, func(ts string) string {
		if strings.Contains(ts, ":") {
			return "2026-01-01T00:00:00.000Z"
		}
		return "2026-01-01T00-00-00-000Z" // as a file name
	})
	s = durationPattern.ReplaceAllString(s, `"$1":0`)
	s = jitteredPattern.ReplaceAllString(s, `"retry_delay_ms":0`)
	return portPattern.ReplaceAllString(s, "$1: 0")
}

// GoldenDir is testdata/real under the root.
func GoldenDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(Root(t), "testdata", "real")
}

// WriteGolden writes g and stdout under GoldenDir.
func WriteGolden(t testing.TB, g Golden, stdout []byte) {
	t.Helper()
	dir := filepath.Join(GoldenDir(t), g.CLI, g.Version)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	b, err := json.Marshal(g, json.Deterministic(true), jsontext.Multiline(true), jsontext.WithIndent("  "))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, g.Scenario+".json"), append(b, '\n'), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, g.Scenario+".ndjson"), stdout, 0o644))
}

// ReadGoldens returns every recorded turn under GoldenDir, in path order.
func ReadGoldens(t testing.TB) []GoldenFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(GoldenDir(t), "*", "*", "*.json"))
	require.NoError(t, err)
	var out []GoldenFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var g Golden
		require.NoError(t, json.Unmarshal(b, &g, json.RejectUnknownMembers(true)), "%s", p)
		require.NoError(t, g.Script.Check(), "%s", p)
		out = append(out, GoldenFile{Golden: g, Stdout: strings.TrimSuffix(p, ".json") + ".ndjson"})
	}
	return out
}

// ScenarioNamed returns the scenario named name.
func ScenarioNamed(t testing.TB, name string) Scenario {
	t.Helper()
	for _, sc := range Scenarios() {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %q", name)
	return Scenario{}
}
