package jobs_test

import (
	"bufio"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/jobs"
)

// roleRecordWriter saves records and appends output lines in a loop until
// it is killed: args are the data directory, the workspace and the job
// ids. After each round v (every record saved with version v, one output
// line) it prints "v <v>".
const roleRecordWriter = "jobs-record-writer"

// crashJobs is how many records a writer keeps rewriting.
const crashJobs = 3

func crashRoles() []testkit.Role {
	return []testkit.Role{{Name: roleRecordWriter, Run: runRecordWriter}}
}

// versionMessage is the warning message of version v of a record: its
// length varies, so a torn file could not pass for a whole one.
func versionMessage(id string, v int) string {
	return fmt.Sprintf("%s|%d|%s", id, v, strings.Repeat("x", (v*977)%6000))
}

func runRecordWriter(args []string) int {
	if len(args) != 2+crashJobs {
		fmt.Fprintln(os.Stderr, "usage: DATA WORKSPACE ID...")
		return 2
	}
	s := jobs.Store{Dir: args[0]}
	out, err := s.CreateOutput(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	now := time.Now().UTC()
	for v := 0; ; v++ {
		for _, id := range args[2:] {
			r := jobs.JobAt(args[1], jobs.RoleTask, now, jobs.StateRunning, jobs.ModeConsult, "")
			r.ID, r.Worker = id, &jobs.ProcessRef{PID: os.Getpid(), Created: now}
			r.Warnings = []event.Warning{{Code: "version", Message: versionMessage(id, v)}}
			if err := s.Save(r); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		if err := out.Events(event.Event{Type: event.TypeText, Text: versionMessage("out", v)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("v %d\n", v)
	}
}

// TestWriterKilledAtRandomPoints: a process that rewrites records and
// appends output lines is killed (SIGKILL; TerminateProcess on Windows)
// after a random number of rounds, 100 times. Every record left must
// parse and be one of the versions written (the last one reported or the
// one in flight), and the output must read back with at most its last
// line torn.
func TestWriterKilledAtRandomPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("100 writer processes")
	}
	const rounds = 100
	var records, tornOutputs, tempLeft, lines int
	for round := range rounds {
		s, ws := jobs.NewTestStore(t)
		ids := make([]string, crashJobs)
		for i := range ids {
			ids[i] = jobs.NewID(jobs.RoleTask, time.Now())
		}
		cmd := exec.Command(os.Args[0], append([]string{s.Dir, ws}, ids...)...)
		cmd.Env = testkit.ChildEnv(roleRecordWriter)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		target := rand.IntN(20)
		last := -1
		sc := bufio.NewScanner(stdout)
		for last < target && sc.Scan() {
			last, err = strconv.Atoi(strings.TrimPrefix(sc.Text(), "v "))
			require.NoError(t, err)
		}
		require.NoError(t, cmd.Process.Kill())
		require.Equal(t, target, last, "round %d: the writer stopped early: %s", round, stderr.String())
		// The writer may have run ahead of what was read before the kill:
		// what it printed is done, one round more may be in flight.
		for sc.Scan() {
			if v, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "v ")); err == nil {
				last = v
			}
		}
		_ = cmd.Wait()

		for _, id := range ids {
			r, err := s.Load(ws, id)
			require.NoError(t, err, "round %d: a record left unreadable", round)
			require.Len(t, r.Warnings, 1)
			parts := strings.SplitN(r.Warnings[0].Message, "|", 3)
			require.Len(t, parts, 3)
			v, err := strconv.Atoi(parts[1])
			require.NoError(t, err)
			assert.True(t, v >= target && v <= last+1, "round %d: version %d, %d..%d reported", round, v, target, last)
			assert.Equal(t, versionMessage(id, v), r.Warnings[0].Message, "round %d: a mixed record", round)
			records++
		}
		listed, err := s.List(ws, 0)
		require.NoError(t, err)
		assert.Len(t, listed, crashJobs, "temporary files are not listed as jobs")
		entries, err := os.ReadDir(filepath.Dir(s.RecordPath(ws, ids[0])))
		require.NoError(t, err)
		tempLeft += len(entries) - crashJobs

		n := 0
		end, err := s.ReadOutput(ids[0], func(line jsontext.Value) error {
			var e struct {
				Text string `json:"text"`
			}
			require.NoError(t, json.Unmarshal(line, &e))
			assert.Equal(t, versionMessage("out", n), e.Text, "round %d: output line %d", round, n)
			n++
			return nil
		})
		require.NoError(t, err, "round %d", round)
		assert.True(t, n == last+1 || n == last+2, "round %d: %d lines after %d reported", round, n, last)
		lines += n
		if end.Torn {
			tornOutputs++
		}
	}
	t.Logf("%d rounds: %d records checked, none torn or wrong; %d output lines read, %d outputs with a torn last line left out; %d temporary files left by killed saves (never listed)",
		rounds, records, lines, tornOutputs, tempLeft)
}
