package fallback_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

func TestMain(m *testing.M) {
	// The observer goroutines and the tests' own must all be gone.
	goleak.VerifyTestMain(m)
}

// waitLimit bounds every wait: a test that reaches it failed.
const waitLimit = 10 * time.Second

// wait receives from ch or fails the test at the deadline.
func wait[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// fakeConv is a Conversation that records its prompts and answers with
// respond (nil: done, its own name as the session id).
type fakeConv struct {
	name     string
	respond  func(ctx context.Context, n int, prompt string) (turn.Outcome, error)
	closeErr error

	mu      sync.Mutex
	prompts []string
	closes  int
}

func (f *fakeConv) Prompt(ctx context.Context, prompt string) (turn.Outcome, error) {
	f.mu.Lock()
	f.prompts = append(f.prompts, prompt)
	n := len(f.prompts)
	f.mu.Unlock()
	if f.respond == nil {
		return done(f.name), nil
	}
	return f.respond(ctx, n, prompt)
}

func (f *fakeConv) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closes++
	return f.closeErr
}

func (f *fakeConv) Prompts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.prompts...)
}

func (f *fakeConv) Closes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closes
}

// historian is a fakeConv that keeps a history.
type historian struct {
	*fakeConv
	history []fallback.Message
}

func (h historian) History() []fallback.Message { return h.history }

func done(name string) turn.Outcome {
	return turn.Outcome{Status: turn.StatusDone, SessionID: name, Warnings: []event.Warning{},
		Process: supervise.Outcome{Ending: supervise.Exited, Finished: true}}
}

// The text of the primary's failures, its stderr, the history and the
// prompts: none of it may appear in the engaged event.
const (
	errProse     = "SECRET-ERROR-PROSE"
	stderrProse  = "SECRET-STDERR-PROSE"
	historyProse = "SECRET-HISTORY-PROSE"
	promptProse  = "SECRET-PROMPT-PROSE"
)

// primaryFailure is a retryable failure of the primary (401: auth).
type primaryFailure struct {
	o   turn.Outcome
	err error
}

func authFailure() primaryFailure {
	err := failure.New(failure.Process, "claude exited with code 1: 401 Unauthorized "+errProse)
	o := turn.Outcome{Status: turn.StatusError, Kind: failure.Process, Message: err.Error(), Model: "claude-reported",
		Warnings: []event.Warning{}, Process: supervise.Outcome{Ending: supervise.Exited, ExitCode: 1, Finished: true, StderrTail: stderrProse}}
	return primaryFailure{o: o, err: err}
}

// failOn answers prompts whose number is in fail with f, the others done.
func failOn(name string, f primaryFailure, fail ...int) func(context.Context, int, string) (turn.Outcome, error) {
	return func(_ context.Context, n int, _ string) (turn.Outcome, error) {
		for _, k := range fail {
			if n == k {
				return f.o, f.err
			}
		}
		return done(name), nil
	}
}

// recorder keeps the session's events.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) OnEvent(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) Events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}

func (r *recorder) ofType(typ event.Type) []event.Event {
	var out []event.Event
	for _, e := range r.Events() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// harness is a session over a primary and a fallback fake.
type harness struct {
	primary  *fakeConv
	fallback *fakeConv
	events   *recorder
	starts   atomic.Int32
	// startErr, when set, answers the n-th Start (1-based) with an error.
	startErr func(n int) error
	// startGate, when set, is waited for by each Start.
	startGate    chan struct{}
	startEntered chan struct{}
	cfg          fallback.Config
}

func newHarness(t *testing.T) *harness {
	h := &harness{
		primary:      &fakeConv{name: "primary"},
		fallback:     &fakeConv{name: "fallback"},
		events:       &recorder{},
		startEntered: make(chan struct{}, 64),
	}
	h.cfg = fallback.Config{
		Purpose:    "run",
		PrimaryID:  fallback.Identity{Agent: "claude", Provider: "anthropic", Model: "claude-configured"},
		FallbackID: fallback.Identity{Agent: "cursor", Provider: "cursor", Model: "auto"},
		Probe:      func(context.Context) error { return nil },
		Start: func(ctx context.Context) (fallback.Conversation, error) {
			n := int(h.starts.Add(1))
			h.startEntered <- struct{}{}
			if h.startGate != nil {
				select {
				case <-h.startGate:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			if h.startErr != nil {
				if err := h.startErr(n); err != nil {
					return nil, err
				}
			}
			return h.fallback, nil
		},
		OnEvent: h.events.OnEvent,
	}
	return h
}

// session builds the session, the primary as is (or wrapped by wrap).
func (h *harness) session(t *testing.T) *fallback.Session {
	t.Helper()
	if h.cfg.Primary == nil {
		h.cfg.Primary = h.primary
	}
	s, w, err := fallback.New(context.Background(), h.cfg)
	require.NoError(t, err)
	require.Nil(t, w)
	require.True(t, s.Armed())
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestNewArmsOrDrops(t *testing.T) {
	probeErr := failure.New(failure.MissingCLI, "cursor-agent was not found")
	tests := []struct {
		name    string
		probe   func(context.Context) error
		noStart bool
		armed   bool
	}{
		{name: "usable", probe: func(context.Context) error { return nil }, armed: true},
		{name: "no probe", probe: nil},
		{name: "probe fails", probe: func(context.Context) error { return probeErr }},
		{name: "probe fails with a plain error", probe: func(context.Context) error { return errors.New("boom") }},
		{name: "no way to start it", probe: func(context.Context) error { return nil }, noStart: true},
		{name: "probe panics", probe: func(context.Context) error { panic("probe bug") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			f := authFailure()
			h.primary.respond = failOn("primary", f, 2)
			h.cfg.Primary = h.primary
			probes := 0
			if tt.probe != nil {
				h.cfg.Probe = func(ctx context.Context) error { probes++; return tt.probe(ctx) }
			} else {
				h.cfg.Probe = nil
			}
			if tt.noStart {
				h.cfg.Start = nil
			}
			s, w, err := fallback.New(context.Background(), h.cfg)
			require.NoError(t, err, "a fallback that cannot be armed never fails the session")
			require.NotNil(t, s)
			t.Cleanup(func() { _ = s.Close() })
			assert.Equal(t, tt.armed, s.Armed())
			if tt.probe != nil && !tt.noStart {
				assert.Equal(t, 1, probes, "probed once")
			}
			warnings := h.events.ofType(event.TypeWarning)
			if tt.armed {
				assert.Nil(t, w)
				assert.Empty(t, warnings)
			} else {
				require.NotNil(t, w)
				assert.Equal(t, fallback.WarnFallbackDropped, w.Code)
				assert.Contains(t, w.Message, "cursor")
				require.Len(t, warnings, 1, "exactly one warning")
				assert.Equal(t, *w, *warnings[0].Warning)
			}

			// The primary still answers.
			o, err := s.Prompt(context.Background(), "one")
			require.NoError(t, err)
			assert.Equal(t, "primary", o.SessionID)

			// A retryable failure: handed off only when armed.
			o, err = s.Prompt(context.Background(), "two")
			if tt.armed {
				require.NoError(t, err)
				assert.Equal(t, "fallback", o.SessionID)
				assert.EqualValues(t, 1, h.starts.Load())
			} else {
				assert.Same(t, f.err, err)
				assert.Equal(t, f.o, o)
				assert.Zero(t, h.starts.Load())
				assert.Empty(t, h.fallback.Prompts())
				assert.False(t, s.Engaged())
				assert.Len(t, h.events.ofType(event.TypeWarning), 1, "still one warning")
				assert.Empty(t, h.events.ofType(event.TypeFallbackEngaged))
			}
		})
	}
}

func TestNewWithoutPrimary(t *testing.T) {
	s, w, err := fallback.New(context.Background(), fallback.Config{Probe: func(context.Context) error { return nil }})
	require.Error(t, err)
	assert.Equal(t, failure.Input, failure.KindOf(err))
	assert.Nil(t, s)
	assert.Nil(t, w)
}

func TestHandoffReissuesThePromptWithTheTranscript(t *testing.T) {
	h := newHarness(t)
	f := authFailure()
	h.primary.respond = failOn("primary", f, 2)
	prior := []fallback.Message{{Role: "user", Text: "earlier question"}, {Role: "assistant", Text: "earlier answer"}}
	own := []fallback.Message{{Role: "user", Text: "one"}, {Role: "assistant", Text: "answer one"}}
	h.cfg.Transcript = prior
	h.cfg.Primary = historian{fakeConv: h.primary, history: own}
	s := h.session(t)

	o, err := s.Prompt(context.Background(), "one")
	require.NoError(t, err)
	assert.Equal(t, "primary", o.SessionID)
	assert.False(t, s.Engaged())

	o, err = s.Prompt(context.Background(), "two")
	require.NoError(t, err, "the fallback answered the failed prompt")
	assert.Equal(t, "fallback", o.SessionID)
	assert.True(t, s.Engaged())

	want, ok := fallback.WithTranscript("two", append(append([]fallback.Message(nil), prior...), own...), "anthropic", "claude-reported")
	require.True(t, ok)
	assert.Equal(t, []string{want}, h.fallback.Prompts(), "the same prompt, the transcript before it")
	assert.Contains(t, want, "user: earlier question\nassistant: earlier answer\nuser: one\nassistant: answer one\n\n[Current prompt]\ntwo")

	// Every later prompt goes to the fallback, as is.
	for _, p := range []string{"three", "four"} {
		o, err = s.Prompt(context.Background(), p)
		require.NoError(t, err)
		assert.Equal(t, "fallback", o.SessionID)
	}
	assert.Equal(t, []string{want, "three", "four"}, h.fallback.Prompts())
	assert.Equal(t, []string{"one", "two"}, h.primary.Prompts(), "the primary gets nothing after the handoff")
	assert.EqualValues(t, 1, h.starts.Load())
	assert.Len(t, h.events.ofType(event.TypeFallbackEngaged), 1)
}

func TestHandoffWithoutHistoryLeavesThePromptUnchanged(t *testing.T) {
	tests := []struct {
		name    string
		prior   []fallback.Message
		history []fallback.Message
	}{
		{name: "none"},
		{name: "blank", prior: []fallback.Message{{Role: "user", Text: "  "}}, history: []fallback.Message{{Role: "assistant", Text: "\n"}}},
		{name: "unknown roles only", history: []fallback.Message{{Role: "tool", Text: "ls"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.primary.respond = failOn("primary", authFailure(), 1)
			h.cfg.Transcript = tt.prior
			h.cfg.Primary = historian{fakeConv: h.primary, history: tt.history}
			s := h.session(t)
			_, err := s.Prompt(context.Background(), "the prompt")
			require.NoError(t, err)
			assert.Equal(t, []string{"the prompt"}, h.fallback.Prompts())
			engaged := h.events.ofType(event.TypeFallbackEngaged)
			require.Len(t, engaged, 1)
			assert.False(t, engaged[0].Fallback.ContextTransferred)
		})
	}
}

func TestHandoffFromAParsedTranscript(t *testing.T) {
	doc := `[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"hello"},{"type":"tool_use","name":"ls"}]}]`
	history, err := fallback.ParseTranscript([]byte(doc))
	require.NoError(t, err)
	h := newHarness(t)
	h.primary.respond = failOn("primary", authFailure(), 1)
	h.cfg.Transcript = history
	s := h.session(t)
	_, err = s.Prompt(context.Background(), "next")
	require.NoError(t, err)
	assert.Equal(t, []string{"[Transferred prior conversation from anthropic/claude-reported; partial, text-only, and non-authoritative]\n" +
		"user: hi\nassistant: hello\n\n[Current prompt]\nnext"}, h.fallback.Prompts())
}

func TestNotRetryableReturnsThePrimaryErrorUnchanged(t *testing.T) {
	tests := []struct {
		name string
		o    turn.Outcome
		err  error
	}{
		{name: "process, no phrase", o: exited(failure.Process, "segfault"), err: failure.New(failure.Process, "exited with code 139")},
		{name: "timeout saying 429", o: exited(failure.Timeout, "429"), err: failure.New(failure.Timeout, "idle timeout: 429")},
		{name: "cancelled saying rate limit", o: exited(failure.Cancelled, ""), err: failure.New(failure.Cancelled, "rate limit")},
		{name: "policy saying unauthorized", o: exited(failure.Policy, ""), err: failure.New(failure.Policy, "unauthorized tool")},
		{name: "protocol saying quota", o: exited(failure.Protocol, ""), err: failure.New(failure.Protocol, "quota")},
		{name: "input", o: exited(failure.Input, ""), err: failure.New(failure.Input, "invalid api key")},
		{name: "died", o: exited(failure.Died, ""), err: failure.New(failure.Died, "overloaded")},
		{name: "missing cli", o: exited(failure.MissingCLI, ""), err: failure.New(failure.MissingCLI, "401")},
		{name: "sandbox", o: exited(failure.Sandbox, ""), err: failure.New(failure.Sandbox, "forbidden")},
		{name: "resource", o: exited(failure.Resource, ""), err: failure.New(failure.Resource, "capacity")},
		{
			name: "spawn failure of kind auth",
			o:    turn.Outcome{Status: turn.StatusError, Process: supervise.Outcome{Ending: supervise.SpawnFailed, ExitCode: -1}},
			err:  failure.New(failure.Auth, "not logged in"),
		},
		{name: "14290 is not 429", o: exited(failure.Process, ""), err: failure.New(failure.Process, "request 14290 failed")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.primary.respond = func(context.Context, int, string) (turn.Outcome, error) { return tt.o, tt.err }
			s := h.session(t)
			o, err := s.Prompt(context.Background(), "p")
			assert.Same(t, tt.err, err, "the very error value")
			assert.True(t, errors.Is(err, tt.err))
			assert.Equal(t, tt.o, o)
			assert.Zero(t, h.starts.Load())
			assert.False(t, s.Engaged())
			assert.Empty(t, h.events.Events())
		})
	}
}

func TestCancelledContextNeverHandsOff(t *testing.T) {
	h := newHarness(t)
	f := authFailure()
	ctx, cancel := context.WithCancel(context.Background())
	h.primary.respond = func(context.Context, int, string) (turn.Outcome, error) { cancel(); return f.o, f.err }
	s := h.session(t)
	o, err := s.Prompt(ctx, "p")
	assert.Same(t, f.err, err)
	assert.Equal(t, f.o, o)
	assert.Zero(t, h.starts.Load())
}

func TestFailedHandoffKeepsThePrimary(t *testing.T) {
	tests := []struct {
		name     string
		startErr func(n int) error
	}{
		{name: "start fails", startErr: func(n int) error {
			if n == 1 {
				return failure.New(failure.Setup, "cursor would not start")
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			f := authFailure()
			h.primary.respond = failOn("primary", f, 1, 3)
			h.startErr = tt.startErr
			s := h.session(t)

			o, err := s.Prompt(context.Background(), "one")
			assert.Same(t, f.err, err, "the primary's error, not Start's")
			assert.Equal(t, f.o, o)
			assert.EqualValues(t, 1, h.starts.Load())
			assert.False(t, s.Engaged())
			assert.Empty(t, h.events.ofType(event.TypeFallbackEngaged))

			// The primary stays.
			o, err = s.Prompt(context.Background(), "two")
			require.NoError(t, err)
			assert.Equal(t, "primary", o.SessionID)

			// The next retryable failure tries again, and succeeds.
			o, err = s.Prompt(context.Background(), "three")
			require.NoError(t, err)
			assert.Equal(t, "fallback", o.SessionID)
			assert.EqualValues(t, 2, h.starts.Load())
			assert.Equal(t, []string{"one", "two", "three"}, h.primary.Prompts())
			require.Len(t, h.fallback.Prompts(), 1)
			assert.Equal(t, "three", h.fallback.Prompts()[0])
			engaged := h.events.ofType(event.TypeFallbackEngaged)
			require.Len(t, engaged, 1)
			assert.Equal(t, 3, engaged[0].Fallback.PromptIndex)
		})
	}
}

func TestStartReturningNoConversation(t *testing.T) {
	h := newHarness(t)
	f := authFailure()
	h.primary.respond = failOn("primary", f, 1)
	h.cfg.Start = func(context.Context) (fallback.Conversation, error) { h.starts.Add(1); return nil, nil }
	s := h.session(t)
	o, err := s.Prompt(context.Background(), "one")
	assert.Same(t, f.err, err)
	assert.Equal(t, f.o, o)
	assert.False(t, s.Engaged())
}

func TestFallbackFailuresAreTheFallbacks(t *testing.T) {
	h := newHarness(t)
	f := authFailure()
	h.primary.respond = failOn("primary", f, 1)
	fbErr := failure.New(failure.RateLimited, "cursor: 429")
	h.fallback.respond = func(_ context.Context, n int, _ string) (turn.Outcome, error) {
		if n == 2 {
			return exited(failure.RateLimited, ""), fbErr
		}
		return done("fallback"), nil
	}
	s := h.session(t)
	_, err := s.Prompt(context.Background(), "one")
	require.NoError(t, err)
	_, err = s.Prompt(context.Background(), "two")
	assert.Same(t, fbErr, err, "a fallback's failure is returned as is; there is no third agent")
	assert.EqualValues(t, 1, h.starts.Load())
	assert.Equal(t, []string{"one"}, h.primary.Prompts())
}

func TestConcurrentFailuresShareOneHandoff(t *testing.T) {
	const n = 8
	h := newHarness(t)
	f := authFailure()
	h.cfg.Primary = historian{fakeConv: h.primary, history: []fallback.Message{{Role: "user", Text: historyProse}}}
	failed := make(chan struct{}, n)
	h.primary.respond = func(context.Context, int, string) (turn.Outcome, error) {
		failed <- struct{}{}
		return f.o, f.err
	}
	// Start waits until every primary prompt has failed.
	h.startGate = make(chan struct{})
	var early atomic.Int32 // fallback prompts before the engaged event
	h.fallback.respond = func(context.Context, int, string) (turn.Outcome, error) {
		if len(h.events.ofType(event.TypeFallbackEngaged)) != 1 {
			early.Add(1)
		}
		return done("fallback"), nil
	}
	s := h.session(t)

	type result struct {
		o   turn.Outcome
		err error
	}
	results := make(chan result, n)
	for i := range n {
		go func() {
			o, err := s.Prompt(context.Background(), "prompt "+string(rune('a'+i)))
			results <- result{o, err}
		}()
	}
	for range n {
		wait(t, failed, "the primary's failures")
	}
	wait(t, h.startEntered, "Start")
	close(h.startGate)
	for range n {
		r := wait(t, results, "a prompt")
		require.NoError(t, r.err)
		assert.Equal(t, "fallback", r.o.SessionID)
	}
	assert.EqualValues(t, 1, h.starts.Load(), "one handoff")
	assert.Len(t, h.events.ofType(event.TypeFallbackEngaged), 1, "one engaged event")
	assert.Zero(t, early.Load(), "the fallback got a prompt before the engaged event")
	prompts := h.fallback.Prompts()
	require.Len(t, prompts, n)
	withTranscript := 0
	for _, p := range prompts {
		if strings.Contains(p, historyProse) {
			withTranscript++
			assert.True(t, strings.HasPrefix(p, "[Transferred prior conversation from anthropic/claude-reported;"))
		} else {
			assert.True(t, strings.HasPrefix(p, "prompt "), p)
		}
	}
	assert.Equal(t, 1, withTranscript, "the transcript goes with exactly one prompt")
	assert.Len(t, h.primary.Prompts(), n)
}

func TestConcurrentFailuresAllGetThePrimaryErrorWhenStartFails(t *testing.T) {
	const n = 8
	h := newHarness(t)
	f := authFailure()
	failed := make(chan struct{}, n)
	h.primary.respond = func(_ context.Context, k int, _ string) (turn.Outcome, error) {
		if k > n {
			return f.o, f.err // the retry, after all of them
		}
		failed <- struct{}{}
		return f.o, f.err
	}
	h.startGate = make(chan struct{})
	h.startErr = func(k int) error {
		if k == 1 {
			return errors.New("no cursor today")
		}
		return nil
	}
	s := h.session(t)
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := s.Prompt(context.Background(), "p")
			errs <- err
		}()
	}
	for range n {
		wait(t, failed, "the primary's failures")
	}
	wait(t, h.startEntered, "Start")
	close(h.startGate)
	for range n {
		err := wait(t, errs, "a prompt")
		if err != nil {
			assert.Same(t, f.err, err)
		}
	}
	starts := int(h.starts.Load())
	// Each failure either shared the failed handoff or, arriving after it,
	// tried again (and that one succeeded).
	assert.GreaterOrEqual(t, starts, 1)
	assert.LessOrEqual(t, starts, 2)
	o, err := s.Prompt(context.Background(), "again")
	require.NoError(t, err)
	assert.Equal(t, "fallback", o.SessionID)
	assert.LessOrEqual(t, h.starts.Load(), int32(2))
}

func TestFailureAfterTheHandoffGoesToTheFallback(t *testing.T) {
	h := newHarness(t)
	f := authFailure()
	slowEntered := make(chan struct{})
	slowRelease := make(chan struct{})
	h.cfg.Primary = historian{fakeConv: h.primary, history: []fallback.Message{{Role: "user", Text: historyProse}}}
	h.primary.respond = func(_ context.Context, _ int, prompt string) (turn.Outcome, error) {
		if prompt == "slow" {
			close(slowEntered)
			<-slowRelease
		}
		return f.o, f.err
	}
	s := h.session(t)
	slow := make(chan error, 1)
	go func() {
		_, err := s.Prompt(context.Background(), "slow")
		slow <- err
	}()
	wait(t, slowEntered, "the slow prompt")
	_, err := s.Prompt(context.Background(), "fast")
	require.NoError(t, err)
	require.True(t, s.Engaged())
	close(slowRelease)
	require.NoError(t, wait(t, slow, "the slow prompt"))
	prompts := h.fallback.Prompts()
	require.Len(t, prompts, 2)
	assert.Contains(t, prompts[0], historyProse)
	assert.Equal(t, "slow", prompts[1], "re-issued as is: the transcript went with the first")
	assert.EqualValues(t, 1, h.starts.Load())
	assert.Len(t, h.events.ofType(event.TypeFallbackEngaged), 1)
}

func TestClose(t *testing.T) {
	t.Run("closes the primary and the fallback", func(t *testing.T) {
		h := newHarness(t)
		h.primary.respond = failOn("primary", authFailure(), 1)
		s := h.session(t)
		_, err := s.Prompt(context.Background(), "one")
		require.NoError(t, err)
		require.NoError(t, s.Close())
		assert.Equal(t, 1, h.primary.Closes())
		assert.Equal(t, 1, h.fallback.Closes())
		require.NoError(t, s.Close(), "a second Close is a no-op")
		assert.Equal(t, 1, h.primary.Closes())
		assert.Equal(t, 1, h.fallback.Closes())
	})
	t.Run("without a handoff closes the primary", func(t *testing.T) {
		h := newHarness(t)
		s := h.session(t)
		require.NoError(t, s.Close())
		assert.Equal(t, 1, h.primary.Closes())
		assert.Zero(t, h.fallback.Closes())
	})
	t.Run("returns both errors", func(t *testing.T) {
		h := newHarness(t)
		h.primary.respond = failOn("primary", authFailure(), 1)
		pErr, fErr := errors.New("primary close"), errors.New("fallback close")
		h.primary.closeErr, h.fallback.closeErr = pErr, fErr
		s := h.session(t)
		_, err := s.Prompt(context.Background(), "one")
		require.NoError(t, err)
		err = s.Close()
		assert.ErrorIs(t, err, pErr)
		assert.ErrorIs(t, err, fErr)
	})
	t.Run("a prompt after Close fails with kind input", func(t *testing.T) {
		for _, engaged := range []bool{false, true} {
			h := newHarness(t)
			h.primary.respond = failOn("primary", authFailure(), 1)
			s := h.session(t)
			if engaged {
				_, err := s.Prompt(context.Background(), "one")
				require.NoError(t, err)
			}
			require.NoError(t, s.Close())
			before, beforeFB := len(h.primary.Prompts()), len(h.fallback.Prompts())
			o, err := s.Prompt(context.Background(), "late")
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.Equal(t, turn.StatusError, o.Status)
			assert.Equal(t, failure.Input, o.Kind)
			assert.NotNil(t, o.Warnings)
			assert.Len(t, h.primary.Prompts(), before)
			assert.Len(t, h.fallback.Prompts(), beforeFB)
		}
	})
	t.Run("a handoff finishing after Close closes the new conversation", func(t *testing.T) {
		h := newHarness(t)
		f := authFailure()
		h.primary.respond = failOn("primary", f, 1)
		h.startGate = make(chan struct{})
		s := h.session(t)
		type result struct {
			o   turn.Outcome
			err error
		}
		res := make(chan result, 1)
		go func() {
			o, err := s.Prompt(context.Background(), "one")
			res <- result{o, err}
		}()
		wait(t, h.startEntered, "Start")
		require.NoError(t, s.Close())
		assert.Equal(t, 1, h.primary.Closes())
		close(h.startGate)
		r := wait(t, res, "the prompt")
		assert.Same(t, f.err, r.err, "the primary's error")
		assert.Equal(t, f.o, r.o)
		assert.Equal(t, 1, h.fallback.Closes(), "the late fallback is closed")
		assert.Empty(t, h.fallback.Prompts())
		assert.False(t, s.Engaged())
		assert.Empty(t, h.events.ofType(event.TypeFallbackEngaged))
	})
}

func TestEngagedEvent(t *testing.T) {
	history := []fallback.Message{{Role: "user", Text: historyProse}}
	tests := []struct {
		name    string
		failOn  int
		model   string // the primary outcome's model
		process supervise.Outcome
		err     error
		history []fallback.Message
		want    event.Fallback
	}{
		{
			name: "authentication at the result, model reported", failOn: 1, model: "claude-reported",
			process: supervise.Outcome{Ending: supervise.Exited, ExitCode: 1, Finished: true, StderrTail: stderrProse},
			err:     failure.New(failure.Process, "401 "+errProse), history: history,
			want: event.Fallback{PrimaryModel: "claude-reported", TriggerPoint: "result", PromptIndex: 1,
				FailureCategory: "authentication", ContextTransferred: true},
		},
		{
			name: "rate limit at the exit, the configured model", failOn: 3,
			process: supervise.Outcome{Ending: supervise.Exited, ExitCode: 1, StderrTail: "Too Many Requests " + stderrProse},
			err:     failure.New(failure.Process, "exited with code 1: "+errProse),
			want: event.Fallback{PrimaryModel: "claude-configured", TriggerPoint: "exit", PromptIndex: 3,
				FailureCategory: "rate-limit"},
		},
		{
			name: "rate limit by kind", failOn: 2, model: "m",
			process: supervise.Outcome{Ending: supervise.Exited, ExitCode: 0, Finished: true},
			err:     failure.New(failure.RateLimited, errProse), history: history,
			want: event.Fallback{PrimaryModel: "m", TriggerPoint: "result", PromptIndex: 2,
				FailureCategory: "rate-limit", ContextTransferred: true},
		},
		{
			name: "model selection", failOn: 1, model: "gpt-x",
			process: supervise.Outcome{Ending: supervise.Exited, ExitCode: 1},
			err:     failure.New(failure.Unclassified, "provider model not found: "+errProse),
			want: event.Fallback{PrimaryModel: "gpt-x", TriggerPoint: "exit", PromptIndex: 1,
				FailureCategory: "model-selection"},
		},
		{
			name: "a stream error event (the turn aborted): result", failOn: 1,
			process: supervise.Outcome{Ending: supervise.Aborted, ExitCode: -1},
			err:     failure.New(failure.Quota, errProse),
			want: event.Fallback{PrimaryModel: "claude-configured", TriggerPoint: "result", PromptIndex: 1,
				FailureCategory: "rate-limit"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			o := turn.Outcome{Status: turn.StatusError, Kind: failure.KindOf(tt.err), Message: tt.err.Error(),
				Model: tt.model, Process: tt.process}
			h.primary.respond = failOn("primary", primaryFailure{o: o, err: tt.err}, tt.failOn)
			h.cfg.Primary = historian{fakeConv: h.primary, history: tt.history}
			observed := make(chan event.Fallback, 1)
			h.cfg.OnEngaged = func(e event.Fallback) { observed <- e }
			s := h.session(t)
			for i := 1; i <= tt.failOn; i++ {
				_, err := s.Prompt(context.Background(), promptProse)
				require.NoError(t, err)
			}
			want := tt.want
			want.SessionPurpose = "run"
			want.PrimaryAgent, want.PrimaryProvider = "claude", "anthropic"
			want.FallbackAgent, want.FallbackProvider, want.FallbackModel = "cursor", "cursor", "auto"

			engaged := h.events.ofType(event.TypeFallbackEngaged)
			require.Len(t, engaged, 1)
			require.NotNil(t, engaged[0].Fallback)
			assert.Equal(t, want, *engaged[0].Fallback)
			assert.Equal(t, want, wait(t, observed, "the observer"), "the observer sees the same record")

			// Ids and outcomes only: no prose, no transcript, no prompt.
			line := string(mustMarshal(t, engaged[0]))
			assert.Contains(t, line, `"type":"cross-runtime-fallback-engaged"`)
			for _, secret := range []string{errProse, stderrProse, historyProse, promptProse, "Too Many", "401", "not found"} {
				assert.NotContains(t, line, secret)
			}
		})
	}
}

// mustMarshal is e as the encoder of `run --json` writes it.
func mustMarshal(t *testing.T, e event.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := event.NewEncoder(&buf)
	require.NoError(t, e.MarshalJSONTo(enc))
	return bytes.TrimSpace(buf.Bytes())
}

func TestEngagedEventBeforeTheFallbacksPrompt(t *testing.T) {
	h := newHarness(t)
	h.primary.respond = failOn("primary", authFailure(), 1)
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	h.cfg.OnEvent = func(e event.Event) { note(string(e.Type)) }
	h.fallback.respond = func(context.Context, int, string) (turn.Outcome, error) {
		note("fallback prompt")
		return done("fallback"), nil
	}
	s := h.session(t)
	_, err := s.Prompt(context.Background(), "one")
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{string(event.TypeFallbackEngaged), "fallback prompt"}, order)
}

func TestObserverNeverDelaysTheSwappedPrompt(t *testing.T) {
	tests := []struct {
		name string
		// observer returns the observer and, when it blocks, what releases it.
		observer func(entered chan<- struct{}) (func(event.Fallback), func())
	}{
		{name: "panics", observer: func(entered chan<- struct{}) (func(event.Fallback), func()) {
			return func(event.Fallback) { close(entered); panic("observer failed") }, func() {}
		}},
		{name: "blocks forever", observer: func(entered chan<- struct{}) (func(event.Fallback), func()) {
			release, exited := make(chan struct{}), make(chan struct{})
			return func(event.Fallback) {
					defer close(exited)
					close(entered)
					<-release
				}, func() {
					close(release)
					<-exited
				}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.primary.respond = failOn("primary", authFailure(), 1)
			entered := make(chan struct{})
			observer, release := tt.observer(entered)
			t.Cleanup(release) // before goleak looks for the observer's goroutine
			h.cfg.OnEngaged = observer
			s := h.session(t)
			res := make(chan error, 1)
			go func() {
				o, err := s.Prompt(context.Background(), "one")
				if err == nil && o.SessionID != "fallback" {
					err = errors.New("not the fallback's outcome: " + o.SessionID)
				}
				res <- err
			}()
			require.NoError(t, wait(t, res, "the swapped prompt, the observer still running"))
			wait(t, entered, "the observer")
			assert.Len(t, h.fallback.Prompts(), 1)
			// The session goes on.
			o, err := s.Prompt(context.Background(), "two")
			require.NoError(t, err)
			assert.Equal(t, "fallback", o.SessionID)
		})
	}
}

func TestPanickingOnEventFailsTheHandoffOnly(t *testing.T) {
	h := newHarness(t)
	f := authFailure()
	h.primary.respond = failOn("primary", f, 1, 2)
	var panicked atomic.Bool
	h.cfg.OnEvent = func(e event.Event) {
		if e.Type == event.TypeFallbackEngaged && panicked.CompareAndSwap(false, true) {
			panic("a broken OnEvent")
		}
	}
	s := h.session(t)
	func() {
		defer func() { assert.NotNil(t, recover(), "the caller's panic reaches the caller") }()
		_, _ = s.Prompt(context.Background(), "one")
	}()
	assert.False(t, s.Engaged())
	assert.Equal(t, 1, h.fallback.Closes(), "the fallback of the failed handoff is closed")
	assert.Empty(t, h.fallback.Prompts())

	// The session is not stuck: the next failure hands off again.
	done := make(chan error, 1)
	go func() {
		o, err := s.Prompt(context.Background(), "two")
		if err == nil && o.SessionID != "fallback" {
			err = errors.New("answered by " + o.SessionID)
		}
		done <- err
	}()
	require.NoError(t, wait(t, done, "the next handoff"))
	assert.True(t, s.Engaged())
	assert.EqualValues(t, 2, h.starts.Load())
	assert.Len(t, h.fallback.Prompts(), 1)
}

// retryingConv is a fakeConv whose turns say the retries before they
// answer: each retry is asked of the stop the prompt was given, and a
// retry it stops at ends the turn as turn.Run does (the retry's kind,
// StoppedAtRetry).
type retryingConv struct {
	*fakeConv
	retries []event.Retry
	stops   int // prompts that came with a stop
}

func (r *retryingConv) PromptStoppingAtRetry(ctx context.Context, prompt string, stop func(event.Retry) bool) (turn.Outcome, error) {
	if stop != nil {
		r.mu.Lock()
		r.stops++
		r.mu.Unlock()
	}
	for _, retry := range r.retries {
		if stop != nil && stop(retry) {
			err := failure.New(retry.Kind, "stopped at retry %d", retry.Attempt)
			return turn.Outcome{Status: turn.StatusError, Kind: retry.Kind, Message: err.Error(), StoppedAtRetry: true,
				Warnings: []event.Warning{}, Process: supervise.Outcome{Ending: supervise.Aborted}}, err
		}
	}
	return r.Prompt(ctx, prompt)
}

func (r *retryingConv) Stops() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stops
}

// TestAfterRetries: with AfterRetries N, the primary's turn stops at its
// Nth retry of a retryable kind (rate limit, quota, auth; a network retry
// does not count), the prompt goes to the fallback and the engaged event
// says "retry"; a turn that never gets there answers itself.
func TestAfterRetries(t *testing.T) {
	rate := func(n int) event.Retry { return event.Retry{Attempt: n, Status: 429, Kind: failure.RateLimited} }
	network := func(n int) event.Retry { return event.Retry{Attempt: n, Kind: failure.Network} }
	tests := []struct {
		name     string
		after    int
		retries  []event.Retry
		engaged  bool
		category string
	}{
		{"at the first rate-limit retry", 1, []event.Retry{rate(1), rate(2)}, true, "rate-limit"},
		{"at the second", 2, []event.Retry{rate(1), rate(2), rate(3)}, true, "rate-limit"},
		{"network retries do not count", 2, []event.Retry{network(1), rate(2), network(3)}, false, ""},
		{"an auth retry", 1, []event.Retry{network(1), {Attempt: 2, Status: 401, Kind: failure.Auth}}, true, "authentication"},
		{"fewer retries than asked: the primary answers", 3, []event.Retry{rate(1), rate(2)}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			primary := &retryingConv{fakeConv: &fakeConv{name: "primary"}, retries: tt.retries}
			cursor := &fakeConv{name: "cursor"}
			var events []event.Event
			s, w, err := fallback.New(context.Background(), fallback.Config{
				Purpose: "run", Primary: primary, AfterRetries: tt.after,
				Probe:   func(context.Context) error { return nil },
				Start:   func(context.Context) (fallback.Conversation, error) { return cursor, nil },
				OnEvent: func(e event.Event) { events = append(events, e) },
			})
			require.NoError(t, err)
			require.Nil(t, w)
			o, err := s.Prompt(context.Background(), "p")
			require.NoError(t, err)
			assert.Equal(t, 1, primary.Stops(), "the primary's turn was given the stop")
			if !tt.engaged {
				assert.Equal(t, "primary", o.SessionID)
				assert.Empty(t, events)
				return
			}
			assert.Equal(t, "cursor", o.SessionID)
			require.Len(t, events, 1)
			require.Equal(t, event.TypeFallbackEngaged, events[0].Type)
			assert.Equal(t, "retry", events[0].Fallback.TriggerPoint)
			assert.Equal(t, tt.category, events[0].Fallback.FailureCategory)
			assert.Equal(t, []string{"p"}, cursor.Prompts())
		})
	}
}

// TestAfterRetriesNeedsAnArmedFallback: a dropped fallback leaves the
// primary's retries alone (no stop is given); a negative count and a
// primary that cannot stop at a retry are refused.
func TestAfterRetriesNeedsAnArmedFallback(t *testing.T) {
	primary := &retryingConv{fakeConv: &fakeConv{name: "primary"}, retries: []event.Retry{{Attempt: 1, Status: 429, Kind: failure.RateLimited}}}
	s, w, err := fallback.New(context.Background(), fallback.Config{Primary: primary, AfterRetries: 1,
		Probe: func(context.Context) error { return failure.New(failure.MissingCLI, "no cursor") },
		Start: func(context.Context) (fallback.Conversation, error) { return &fakeConv{name: "cursor"}, nil }})
	require.NoError(t, err)
	require.NotNil(t, w)
	o, err := s.Prompt(context.Background(), "p")
	require.NoError(t, err)
	assert.Equal(t, "primary", o.SessionID)
	assert.Zero(t, primary.Stops(), "no stop without a fallback to hand to")

	_, _, err = fallback.New(context.Background(), fallback.Config{Primary: primary, AfterRetries: -1})
	assert.Equal(t, failure.Input, failure.KindOf(err))
	_, _, err = fallback.New(context.Background(), fallback.Config{Primary: &fakeConv{name: "plain"}, AfterRetries: 1})
	assert.Equal(t, failure.Input, failure.KindOf(err))
	assert.Contains(t, err.Error(), "RetryStopper")
}
