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
	"sync"
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
// at a random moment after it reported a given round, 100 times: every
// round count from 0 to 19, five times each, in a random order. Every
// record left must parse and be one of the versions written (the last one
// reported or the one in flight), and the output must read back with at
// most its last line torn. Rounds run four at a time, each with a store
// of its own: a round mostly waits on its writer and the disk.
func TestWriterKilledAtRandomPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("100 writer processes")
	}
	t.Parallel() // beside TestADiedJobHasLeftNoAgent, which mostly waits
	const targets, perTarget = 20, 5
	// Wine too starts processes side by side: there four at a time take
	// about 60% of the time one at a time do.
	const workers = 4
	rng := testkit.Rand(t)
	plan := make([]int, 0, targets*perTarget)
	for target := range targets {
		for range perTarget {
			plan = append(plan, target)
		}
	}
	rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })

	var mu sync.Mutex
	var tally crashTally
	next := make(chan int, len(plan))
	for i := range plan {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for round := range next {
				if t.Failed() {
					return // the first failure ends the test
				}
				t.Run(fmt.Sprintf("%03d/after-%02d", round, plan[round]), func(t *testing.T) {
					got := killWriterOnce(t, rng, plan[round])
					mu.Lock()
					defer mu.Unlock()
					tally.add(got)
				})
			}
		})
	}
	wg.Wait()
	t.Logf("%d rounds: %d records checked, none torn or wrong; %d output lines read, %d outputs with a torn last line left out; %d temporary files left by killed saves (never listed)",
		len(plan), tally.records, tally.lines, tally.tornOutputs, tally.tempLeft)
}

// crashTally is what the rounds of the crash test saw.
type crashTally struct{ records, tornOutputs, tempLeft, lines int }

func (c *crashTally) add(o crashTally) {
	c.records += o.records
	c.tornOutputs += o.tornOutputs
	c.tempLeft += o.tempLeft
	c.lines += o.lines
}

// killWriterOnce starts a writer in a store of its own, kills it at a
// random moment (drawn from rng) after it reported round target, and
// checks what it left.
func killWriterOnce(t *testing.T, rng *rand.Rand, target int) (seen crashTally) {
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
	last := -1
	sc := bufio.NewScanner(stdout)
	for last < target && sc.Scan() {
		last, err = strconv.Atoi(strings.TrimPrefix(sc.Text(), "v "))
		require.NoError(t, err)
	}
	if last == target {
		testkit.SleepRandomly(rng, 2*time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	require.Equal(t, target, last, "the writer stopped early: %s", stderr.String())
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
		require.NoError(t, err, "a record left unreadable")
		require.Len(t, r.Warnings, 1)
		parts := strings.SplitN(r.Warnings[0].Message, "|", 3)
		require.Len(t, parts, 3)
		v, err := strconv.Atoi(parts[1])
		require.NoError(t, err)
		assert.True(t, v >= target && v <= last+1, "version %d, %d..%d reported", v, target, last)
		assert.Equal(t, versionMessage(id, v), r.Warnings[0].Message, "a mixed record")
		seen.records++
	}
	listed, err := s.List(ws, 0)
	require.NoError(t, err)
	assert.Len(t, listed, crashJobs, "temporary files are not listed as jobs")
	entries, err := os.ReadDir(filepath.Dir(s.RecordPath(ws, ids[0])))
	require.NoError(t, err)
	seen.tempLeft = len(entries) - crashJobs

	n := 0
	end, err := s.ReadOutput(ids[0], func(line jsontext.Value) error {
		var e struct {
			Text string `json:"text"`
		}
		require.NoError(t, json.Unmarshal(line, &e))
		assert.Equal(t, versionMessage("out", n), e.Text, "output line %d", n)
		n++
		return nil
	})
	require.NoError(t, err)
	assert.True(t, n == last+1 || n == last+2, "%d lines after %d reported", n, last)
	seen.lines = n
	if end.Torn {
		seen.tornOutputs = 1
	}
	return seen
}
