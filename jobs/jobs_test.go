package jobs

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/testkit"
	"github.com/cursorkit/cursorkit/turn"
)

func TestRecordCompatibility(t *testing.T) {
	// A record written before background jobs, without their members.
	old := `{"engine":"cursor","id":"task-20261201T170512Z-0123abcd","role":"task","mode":"consult","workspace":"/w",
	"cursorVersion":"v","cursorBuildPath":"/b","sessionId":"s","requestId":"r","requestedModel":"","resolvedModel":"",
	"observedModel":"","requestedEffort":"","effortApplied":false,"billingPool":"","usage":{"reported":false},
	"sandbox":"workspace_readonly","delivery":"foreground","allowedTools":[],"homeDir":"/h","warnings":[],
	"state":"done","failure":null,"createdAt":"2026-12-01T17:05:12Z","updatedAt":"2026-12-01T17:05:12Z","endedAt":null}`
	var r Record
	require.NoError(t, json.Unmarshal([]byte(old), &r))
	assert.Nil(t, r.Worker)
	assert.Empty(t, r.LauncherSession+r.ParentJob+r.Output)
	out, err := json.Marshal(&r)
	require.NoError(t, err)
	for _, member := range []string{"worker", "agent", "launcherSession", "parentJob", "resumedSession", "output"} {
		assert.NotContains(t, string(out), `"`+member+`"`, "new members are omitted when unset")
	}

	created := time.Date(2026, 12, 1, 17, 5, 12, 123456789, time.UTC)
	r.Worker, r.Agent = &ProcessRef{PID: 42, Created: created}, &ProcessRef{PID: 43, Created: created}
	r.LauncherSession, r.ParentJob, r.ResumedSession, r.Output, r.State = "orch-1", "task-20261201T170000Z-00000000", "s0", "/d/runs/x/events.ndjson", StateStarting
	out, err = json.Marshal(&r)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"worker":{"pid":42,"created":"2026-12-01T17:05:12.123456789Z"}`)
	var back Record
	require.NoError(t, json.Unmarshal(out, &back))
	assert.Equal(t, r, back)
}

func TestStates(t *testing.T) {
	for _, tc := range []struct {
		s        State
		terminal bool
	}{{StateStarting, false}, {StateRunning, false}, {StateDone, true}, {StateError, true}, {StateCancelled, true}, {StateDied, true}, {"", false}} {
		assert.Equal(t, tc.terminal, tc.s.Terminal(), tc.s)
	}
}

func TestOutputRoundTrip(t *testing.T) {
	s, _ := NewTestStore(t)
	id := NewID(RoleTask, time.Now())
	w, err := s.createOutput(id)
	require.NoError(t, err)
	events := []event.Event{
		{Type: event.TypeInit, Init: &event.Init{SessionID: "s1", Model: "m"}},
		{Type: event.TypeText, Text: "hello\n"},
		{Type: event.TypeToolStarted, Tool: &event.Tool{CallID: "c", Name: "read", Args: jsontext.Value(`{"path":"a"}`)}},
	}
	require.NoError(t, w.Events(events[:1]...))
	require.NoError(t, w.Events(events[1:]...))
	o := turn.Outcome{Status: turn.StatusDone, SessionID: "s1"}
	require.NoError(t, w.Outcome(o))
	require.NoError(t, w.Close())
	_, err = s.createOutput(id)
	assert.Equal(t, failure.Setup, failure.KindOf(err), "one writer, once")

	// The file is exactly what run --json prints before the job member.
	var want bytes.Buffer
	enc := event.NewEncoder(&want)
	for _, e := range events {
		require.NoError(t, json.MarshalEncode(enc, e))
	}
	require.NoError(t, json.MarshalEncode(enc, o))
	got, err := os.ReadFile(s.outputPath(id))
	require.NoError(t, err)
	assert.Equal(t, want.String(), string(got))

	var lines []string
	end, err := s.ReadOutput(id, func(v jsontext.Value) error { lines = append(lines, string(v)); return nil })
	require.NoError(t, err)
	assert.Len(t, lines, 3)
	assert.Equal(t, 3, end.Events)
	assert.False(t, end.Torn)
	assert.Contains(t, string(end.Outcome), `"type":"outcome"`)

	// A writer killed mid-line leaves a torn last line: left out, no failure.
	f, err := os.OpenFile(s.outputPath(id), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"text","te`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	end, err = s.ReadOutput(id, func(jsontext.Value) error { return nil })
	require.NoError(t, err)
	assert.True(t, end.Torn)
	assert.Equal(t, 3, end.Events)
	_, err = s.ReadOutput(NewID(RoleTask, time.Now()), func(jsontext.Value) error { return nil })
	assert.Equal(t, failure.Input, failure.KindOf(err))
}

func TestOutputBound(t *testing.T) {
	s, _ := NewTestStore(t)
	id := NewID(RoleTask, time.Now())
	w, err := s.createOutput(id)
	require.NoError(t, err)
	w.max = 1000
	for range 50 {
		require.NoError(t, w.Events(event.Event{Type: event.TypeText, Text: strings.Repeat("x", 90)}))
	}
	require.NoError(t, w.Outcome(turn.Outcome{Status: turn.StatusDone}))
	require.NoError(t, w.Close())
	n := 0
	end, err := s.ReadOutput(id, func(jsontext.Value) error { n++; return nil })
	require.NoError(t, err)
	assert.True(t, end.Truncated)
	assert.NotNil(t, end.Outcome, "the outcome is always kept")
	assert.Less(t, n, 20)
	info, err := os.Stat(s.outputPath(id))
	require.NoError(t, err)
	assert.Less(t, info.Size(), int64(1400))
}

func TestParseOutput(t *testing.T) {
	ev := `{"type":"text","text":"a"}`
	out := `{"type":"outcome","status":"done"}`
	for _, tc := range []struct {
		name, in      string
		events        int
		torn, outcome bool
		kind          failure.Kind
	}{
		{"empty", "", 0, false, false, ""},
		{"whole", ev + "\n" + ev + "\n" + out + "\n", 2, false, true, ""},
		{"torn last line", ev + "\n" + `{"type":"te`, 1, true, false, ""},
		{"torn outcome", ev + "\n" + out[:10], 1, true, false, ""},
		{"whole json without newline is still torn", ev + "\n" + ev, 1, true, false, ""},
		{"crlf", ev + "\r\n", 1, false, false, ""},
		{"garbage in the middle", ev + "\nnot json\n" + ev + "\n", 1, false, false, failure.Unclassified},
		{"array line", "[1]\n", 0, false, false, failure.Unclassified},
		{"after the outcome", out + "\n" + ev + "\n", 0, false, true, failure.Unclassified},
		{"invalid utf-8 kept", `{"type":"text","text":"` + "\xff" + `"}` + "\n", 1, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			end, err := parseOutput(strings.NewReader(tc.in), func(v jsontext.Value) error { n++; return nil })
			if tc.kind != "" {
				assert.Equal(t, tc.kind, failure.KindOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.events, n)
			assert.Equal(t, tc.events, end.Events)
			assert.Equal(t, tc.torn, end.Torn)
			assert.Equal(t, tc.outcome, end.Outcome != nil)
		})
	}
	t.Run("over-long line", func(t *testing.T) {
		_, err := parseOutput(strings.NewReader(`{"type":"text","text":"`+strings.Repeat("x", maxOutputLine)+`"}`+"\n"), func(jsontext.Value) error { return nil })
		assert.Equal(t, failure.Unclassified, failure.KindOf(err))
	})
}

func FuzzParseOutput(f *testing.F) {
	f.Add([]byte(`{"type":"text","text":"a"}` + "\n" + `{"type":"outcome"}` + "\n"))
	f.Add([]byte(`{"type":"text"` + "\n{"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		end, err := parseOutput(bytes.NewReader(data), func(v jsontext.Value) error {
			n++
			if !bytes.HasPrefix(v, []byte("{")) || bytes.ContainsAny(v, "\n") {
				t.Fatalf("handed on %q", v)
			}
			return nil
		})
		if err != nil {
			if failure.KindOf(err) != failure.Unclassified {
				t.Fatalf("kind %s: %v", failure.KindOf(err), err)
			}
			return
		}
		if end.Events != n {
			t.Fatalf("events %d, handed on %d", end.Events, n)
		}
		if end.Torn == (len(data) == 0 || data[len(data)-1] == '\n') {
			t.Fatalf("torn %v for %q", end.Torn, data)
		}
	})
}

// lookupStore is a store with jobs in several workspaces.
func lookupStore(t testing.TB, workspaces, perWorkspace int) (Store, []string, []*Record) {
	t.Helper()
	s, root := NewTestStore(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var wss []string
	var recs []*Record
	for w := range workspaces {
		ws := filepath.Join(root, fmt.Sprintf("ws%03d", w))
		wss = append(wss, ws)
		for j := range perWorkspace {
			role := RoleTask
			if j%3 == 2 {
				role = RoleReview
			}
			r := JobAt(ws, role, base.Add(time.Duration(j*workspaces+w)*time.Second), StateDone, ModeConsult, fmt.Sprintf("sess-%d-%d", w, j))
			require.NoError(t, s.Save(r))
			recs = append(recs, r)
		}
	}
	return s, wss, recs
}

func TestFindListHistory(t *testing.T) {
	s, wss, recs := lookupStore(t, 4, 6)
	// A temporary file of a save in progress and a stray file are not jobs.
	dir := filepath.Dir(s.recordPath(wss[0], recs[0].ID))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "."+recs[0].ID+".json.123.tmp"), []byte("{"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600))

	t.Run("find", func(t *testing.T) {
		for _, r := range []*Record{recs[0], recs[len(recs)-1], recs[7]} {
			got, err := s.Find("", r.ID)
			require.NoError(t, err)
			assert.Equal(t, r.ID, got.ID)
			assert.Equal(t, r.Workspace, got.Workspace)
			got, err = s.Find(r.Workspace, r.ID)
			require.NoError(t, err)
			assert.Equal(t, r.ID, got.ID)
		}
		for _, bad := range []string{NewID(RoleTask, time.Now()), "../x", ""} {
			_, err := s.Find("", bad)
			assert.Equal(t, failure.Input, failure.KindOf(err), bad)
		}
		_, err := s.Find(wss[1], recs[0].ID)
		assert.Equal(t, failure.Input, failure.KindOf(err), "another workspace's job")
		empty, _ := NewTestStore(t)
		_, err = empty.Find("", recs[0].ID)
		assert.Equal(t, failure.Input, failure.KindOf(err), "an empty data directory")
	})
	t.Run("list newest first across roles and workspaces", func(t *testing.T) {
		all, err := s.List("", 0)
		require.NoError(t, err)
		require.Len(t, all, len(recs))
		for i := 1; i < len(all); i++ {
			assert.True(t, all[i-1].CreatedAt.After(all[i].CreatedAt), "%s before %s", all[i-1].ID, all[i].ID)
		}
		some, err := s.List(wss[2], 3)
		require.NoError(t, err)
		require.Len(t, some, 3)
		for _, r := range some {
			assert.Equal(t, wss[2], r.Workspace)
		}
		assert.Equal(t, recs[2*6+5].ID, some[0].ID)
	})
	t.Run("history is a projection", func(t *testing.T) {
		failed := JobAt(wss[0], RoleTask, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), StateError, ModeWrite, "sess-x")
		failed.Failure = &Failure{Kind: failure.Quota, Message: "the agent said SECRET-TEXT"}
		running := JobAt(wss[0], RoleTask, time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC), StateRunning, ModeWrite, "sess-y")
		require.NoError(t, s.Save(failed))
		require.NoError(t, s.Save(running))
		history := func(workspace string, limit int) []HistoryEntry {
			h, err := s.History(context.Background(), workspace, limit, time.Hour)
			require.NoError(t, err)
			return h
		}
		h := history(wss[0], DefaultHistoryLimit)
		require.Len(t, h, 8)
		assert.Equal(t, running.ID, h[0].ID)
		assert.Empty(t, h[0].ResumeSession, "a running job's session is not resumable yet")
		assert.Equal(t, "sess-x", h[1].ResumeSession)
		assert.Equal(t, failure.Quota, h[1].FailureKind)
		data, err := json.Marshal(h)
		require.NoError(t, err)
		assert.NotContains(t, string(data), "SECRET-TEXT")
		assert.Len(t, history("", 5), 5)
		assert.Len(t, history("", maxHistoryLimit), len(recs)+2)
		for _, limit := range []int{0, -1, maxHistoryLimit + 1} {
			_, err := s.History(context.Background(), "", limit, time.Hour)
			assert.True(t, failure.Is(err, failure.Input), "limit %d: %v", limit, err)
		}
	})
}

func TestResumable(t *testing.T) {
	s, ws := NewTestStore(t)
	other := testkit.TempDir(t)
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Minute) }
	jobs := []*Record{
		JobAt(ws, RoleTask, at(0), StateDone, ModeConsult, "c-old"),
		JobAt(ws, RoleTask, at(1), StateError, ModeConsult, "c-err"),
		JobAt(ws, RoleTask, at(2), StateDone, ModeWrite, "w-1"),
		JobAt(ws, RoleTask, at(3), StateRunning, ModeConsult, "c-running"),
		JobAt(ws, RoleTask, at(4), StateDone, ModeConsult, ""),
		JobAt(other, RoleTask, at(5), StateDone, ModeConsult, "c-other"),
		JobAt(ws, RoleReview, at(6), StateDied, ModeConsult, "c-died"),
		JobAt(ws, RoleTask, at(7), StateDone, ModeConsult, "c-old"),
	}
	jobs[1].LauncherSession, jobs[6].LauncherSession = "orch", "orch"
	for _, j := range jobs {
		require.NoError(t, s.Save(j))
	}
	// The resumable sessions, newest first, each once, as an unknown
	// session's error lists them.
	for _, tc := range []struct {
		mode           Mode
		launcher, want string
	}{
		{ModeConsult, "", "c-old, c-died, c-err"},
		{ModeConsult, "orch", "c-died, c-err"},
		{ModeWrite, "", "w-1"},
	} {
		_, err := s.ResumeFrom(ws, tc.mode, tc.launcher, "nope")
		require.Error(t, err)
		assert.True(t, strings.HasSuffix(err.Error(), "; resumable: "+tc.want), err.Error())
	}

	for _, tc := range []struct {
		name, launcher, session, want string
		kind                          failure.Kind
	}{
		{"by session, newest job", "", "c-old", jobs[7].ID, ""},
		{"last", "", "", jobs[7].ID, ""},
		{"last of a launcher session", "orch", "", jobs[6].ID, ""},
		{"a running job's session", "", "c-running", "", failure.Input},
		{"another workspace's session", "", "c-other", "", failure.Input},
		{"another launcher's", "orch", "c-old", "", failure.Input},
		{"invented", "", "nope", "", failure.Input},
		{"last of an unknown launcher", "x", "", "", failure.Input},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.ResumeFrom(ws, ModeConsult, tc.launcher, tc.session)
			if tc.kind != "" {
				assert.Equal(t, tc.kind, failure.KindOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, r.ID)
		})
	}

	// The list in the error is bounded, and a long id is quoted cut.
	for i := range 15 {
		require.NoError(t, s.Save(JobAt(ws, RoleTask, at(100+i), StateDone, ModeConsult, fmt.Sprintf("many-%02d", i))))
	}
	_, err := s.ResumeFrom(ws, ModeConsult, "", strings.Repeat("z", 500))
	require.Error(t, err)
	assert.Equal(t, maxResumableListed+1, strings.Count(err.Error(), ",")+1, err.Error()) // 10 ids, "…"
	assert.Less(t, len(err.Error()), 500)
}

func TestPrune(t *testing.T) {
	s, ws := NewTestStore(t)
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var all []*Record
	for i := range 30 {
		st := StateDone
		if i%10 == 0 {
			st = StateRunning // old but running: never pruned
		}
		if i == 5 {
			st = StateStarting
		}
		r := JobAt(ws, RoleTask, base.Add(time.Duration(i)*time.Minute), st, ModeConsult, "s")
		require.NoError(t, os.MkdirAll(s.HomeDir(r.ID), 0o700))
		w, err := s.createOutput(r.ID)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		require.NoError(t, s.Save(r))
		all = append(all, r)
	}
	other := testkit.TempDir(t)
	require.NoError(t, s.Save(JobAt(other, RoleTask, base, StateDone, ModeConsult, "s")))

	removed, err := s.prune(ws, 10)
	require.NoError(t, err)
	// Jobs 0..19 are past the newest 10; 0, 5 and 10 are running or starting.
	var want []string
	for i := range 20 {
		if i != 0 && i != 5 && i != 10 {
			want = append(want, all[i].ID)
		}
	}
	assert.Equal(t, want, removed)
	for i, r := range all {
		_, rerr := os.Stat(s.recordPath(ws, r.ID))
		_, herr := os.Stat(s.HomeDir(r.ID))
		_, oerr := os.Stat(s.outputPath(r.ID))
		gone := i < 20 && i != 0 && i != 5 && i != 10
		assert.Equal(t, gone, os.IsNotExist(rerr), "record %d", i)
		assert.Equal(t, gone, os.IsNotExist(herr), "home %d", i)
		assert.Equal(t, gone, os.IsNotExist(oerr), "output %d", i)
	}
	left, err := s.List("", 0)
	require.NoError(t, err)
	assert.Len(t, left, 30-17+1, "another workspace's jobs are not counted or touched")
	removed, err = s.prune(ws, 10)
	require.NoError(t, err)
	assert.Empty(t, removed)
}

// TestPruneWhileJobsSave: jobs that keep saving (running) while prune runs
// are never pruned and their records stay whole; jobs that finish during
// it are pruned only on a later pass, as whole final records.
// TestAFinalRecordIsNeverWrittenAgain: a job ends once; whoever ended it
// first (its worker, jobs cancel, the died judgement) wins.
func TestAFinalRecordIsNeverWrittenAgain(t *testing.T) {
	s, ws := NewTestStore(t)
	r := JobAt(ws, RoleTask, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), StateRunning, ModeConsult, "s")
	require.NoError(t, s.Save(r))

	cancelled, err := s.update(ws, r.ID, func(cur *Record) bool {
		cur.State = StateCancelled
		return true
	})
	require.NoError(t, err)
	assert.Equal(t, StateCancelled, cancelled.State)

	late := *r
	late.State = StateDone
	err = s.Save(&late)
	require.ErrorIs(t, err, ErrFinal)
	assert.Equal(t, failure.Process, failure.KindOf(err))
	require.NoError(t, s.Save(cancelled), "saving the final record itself again is harmless")
	got, err := s.load(ws, r.ID)
	require.NoError(t, err)
	assert.Equal(t, StateCancelled, got.State)

	declined, err := s.update(ws, r.ID, func(cur *Record) bool { return false })
	require.NoError(t, err)
	assert.Equal(t, StateCancelled, declined.State)
	_, err = s.update(ws, "task-20200101T000000Z-00000000", func(*Record) bool { return true })
	assert.Equal(t, failure.Input, failure.KindOf(err))
}

// TestUpdatesTakeTurns: every concurrent Update sees the one before it
// (a lost update would lose a warning).
func TestUpdatesTakeTurns(t *testing.T) {
	s, ws := NewTestStore(t)
	r := JobAt(ws, RoleTask, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), StateRunning, ModeConsult, "s")
	require.NoError(t, s.Save(r))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				_, err := s.update(ws, r.ID, func(cur *Record) bool {
					cur.Warnings = append(cur.Warnings, event.Warning{Code: "w", Message: fmt.Sprint(g, i)})
					return true
				})
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	got, err := s.load(ws, r.ID)
	require.NoError(t, err)
	assert.Len(t, got.Warnings, 40)
}

func TestPruneWhileJobsSave(t *testing.T) {
	s, ws := NewTestStore(t)
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var live []*Record
	for i := range 40 {
		st := StateDone
		if i%4 == 0 {
			st = StateRunning
		}
		r := JobAt(ws, RoleTask, base.Add(time.Duration(i)*time.Minute), st, ModeConsult, "s")
		require.NoError(t, s.Save(r))
		if st == StateRunning {
			live = append(live, r)
		}
	}
	testkit.SkipIfWine(t, "a rename over a file another process keeps opening (see TestConcurrentSavesNeverTear)")
	var wg sync.WaitGroup
	for _, r := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := *r
			for i := range 30 {
				c.Warnings = []event.Warning{{Code: "w", Message: fmt.Sprint(i)}}
				if i == 29 && r.ID < live[len(live)/2].ID {
					c.State = StateDone // the final save
				}
				assert.NoError(t, s.Save(&c))
			}
		}()
	}
	for range 5 {
		_, err := s.prune(ws, 5)
		require.NoError(t, err)
	}
	wg.Wait()
	for _, r := range live {
		got, err := s.load(ws, r.ID)
		if r.ID < live[len(live)/2].ID && err != nil {
			continue // finished, then pruned: gone whole
		}
		require.NoError(t, err, r.ID)
		assert.Len(t, got.Warnings, 1)
	}
	if runtime.GOOS != "windows" {
		entries, err := os.ReadDir(filepath.Dir(s.recordPath(ws, live[0].ID)))
		require.NoError(t, err)
		for _, e := range entries {
			assert.False(t, strings.HasSuffix(e.Name(), ".tmp"), e.Name())
		}
	}
}

// TestSweep: what killed writers left goes; records, their runs and
// anything younger than the bound stay.
func TestSweep(t *testing.T) {
	s, ws := NewTestStore(t)
	kept := JobAt(ws, RoleTask, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), StateDone, ModeConsult, "s")
	require.NoError(t, s.Save(kept))
	jobs := filepath.Dir(s.recordPath(ws, kept.ID))
	orphan := NewID(RoleTask, time.Date(2026, 5, 1, 0, 1, 0, 0, time.UTC))
	require.NoError(t, os.MkdirAll(s.HomeDir(orphan), 0o700))
	tmp := filepath.Join(jobs, "."+orphan+".json.123.tmp")
	require.NoError(t, os.WriteFile(tmp, []byte(`{"id":`), 0o600))

	assert.Zero(t, s.Sweep(time.Hour), "too young")
	assert.Equal(t, 2, s.Sweep(0))
	assert.NoFileExists(t, tmp)
	assert.NoDirExists(t, s.runDir(orphan))
	assert.DirExists(t, s.runDir(kept.ID))
	_, err := s.load(ws, kept.ID)
	assert.NoError(t, err)
}
