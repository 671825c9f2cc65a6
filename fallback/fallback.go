package fallback

import (
	"context"
	"errors"
	"sync"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/turn"
)

// Conversation is one agent session as the fallback sees it: prompts sent
// in order, each one a turn that continues the session of the turns before
// it, and Close when the conversation is over. Prompt may be called from
// several goroutines at once. package agents' Session is one.
type Conversation interface {
	Prompt(ctx context.Context, prompt string) (turn.Outcome, error)
	Close() error
}

// RetryStopper is a Conversation whose prompts can be stopped at the
// agent's retry notices: PromptStoppingAtRetry is Prompt with stop asked
// at each (turn.Options.StopAtRetry). Config.AfterRetries needs the
// primary to be one; package agents' Session is.
type RetryStopper interface {
	Conversation
	PromptStoppingAtRetry(ctx context.Context, prompt string, stop func(event.Retry) bool) (turn.Outcome, error)
}

// Historian is a Conversation that can tell what was said in it so far,
// as text-only messages (tool and thinking blocks left out). The fallback
// reads it once, at the handoff.
type Historian interface {
	History() []Message
}

// Identity names an agent for the engaged event: cursorkit's name for it,
// its provider and the model id ("" when unknown).
type Identity struct {
	Agent, Provider, Model string
}

// Config is a primary conversation with a Cursor fallback (or any other).
type Config struct {
	// Purpose is the session's purpose, as the engaged event reports it
	// (e.g. "run").
	Purpose string
	// Primary is the conversation prompts go to first; PrimaryID names it.
	Primary   Conversation
	PrimaryID Identity
	// Probe reports whether the fallback can run at all (for Cursor: its
	// probe, cached); New calls it once. A nil Probe or one that fails
	// drops the fallback: the session is then the primary alone, with one
	// fallback_dropped warning.
	Probe func(ctx context.Context) error
	// Start creates the fallback conversation at the handoff. A failure
	// leaves the primary in place (the prompt returns the primary's
	// error) and the next retryable failure tries again.
	Start      func(ctx context.Context) (Conversation, error)
	FallbackID Identity
	// Transcript is conversation history from before this session (a
	// caller's own record, `run --transcript`): the transcript the first
	// swapped prompt carries is Transcript followed by the primary's own
	// History, when it is a Historian.
	Transcript []Message
	// OnEvent, when set, receives the session's own events, in order,
	// from the goroutine of the prompt concerned: the fallback_dropped
	// warning (from New) and the cross-runtime-fallback-engaged event,
	// before the swapped prompt starts. It must not block (like
	// turn.Options.OnEvent); give the same function the conversations
	// deliver their events to, and the stream reads in order.
	OnEvent func(event.Event)
	// OnEngaged, when set, is told of each successful handoff, on a
	// goroutine of its own that nothing waits for: a slow, failing or
	// panicking observer never delays or breaks the swapped prompt.
	OnEngaged func(event.Fallback)
	// AfterRetries, when above zero, hands a prompt off at the primary's
	// AfterRetries-th retry notice of a retryable kind (auth, quota,
	// rate_limited) rather than when the primary fails, which a CLI
	// retrying a rate limit may take minutes to do: the primary's tree is
	// stopped at that notice, its turn fails with the retry's kind, and
	// the engaged event's trigger point is "retry". The primary must be a
	// RetryStopper. Zero hands off only when the primary fails. It
	// applies only while the fallback is armed.
	AfterRetries int
}

// WarnFallbackDropped is the warning of a session whose fallback could not
// be armed: the primary runs alone.
const WarnFallbackDropped = "fallback_dropped"

// Session routes prompts to the primary conversation until its first
// retryable model-selection failure (Retryable), then to one fallback
// conversation created for it, for good (docs/contract.md, "Cross-runtime
// fallback"):
//
//   - the failed prompt is sent again to the fallback, with the transcript
//     of the conversation so far (WithTranscript) on that first swapped
//     prompt only, and every later prompt goes to the fallback;
//   - a failure that is not retryable, and a failed handoff, return the
//     primary's error unchanged; after a failed handoff the primary stays
//     and the next retryable failure tries again;
//   - failures that happen at once share one handoff: one fallback is
//     started, and each failed prompt is sent to it;
//   - Close closes the primary and the fallback.
//
// A Session is safe for concurrent use.
type Session struct {
	cfg   Config
	armed bool

	mu          sync.Mutex
	closed      bool
	prompts     int
	replacement Conversation
	inflight    *handoff // the handoff under way, nil when none
}

// handoff is one attempt at starting the fallback, shared by the prompts
// that failed while it ran.
type handoff struct {
	done chan struct{}
	// conv is the fallback once it started (Close closes it from then
	// on), and the handoff's result, nil when it failed, before done
	// closes. Guarded by Session.mu until done closes.
	conv Conversation
}

// New returns the session of cfg. It probes the fallback (cfg.Probe) first:
// when the probe is missing or fails, the fallback is dropped with one
// fallback_dropped warning (to cfg.OnEvent, and returned) and the session
// is the primary alone; it never fails for that. It fails only for a
// missing Primary (failure.Input).
func New(ctx context.Context, cfg Config) (*Session, *event.Warning, error) {
	if cfg.Primary == nil {
		return nil, nil, failure.New(failure.Input, "a fallback session needs a primary conversation")
	}
	if cfg.AfterRetries < 0 {
		return nil, nil, failure.New(failure.Input, "a fallback after %d retries: the count of retries is at least 1 (0 is off)", cfg.AfterRetries)
	}
	if _, ok := cfg.Primary.(RetryStopper); cfg.AfterRetries > 0 && !ok {
		return nil, nil, failure.New(failure.Input, "a fallback after retries needs a primary whose turns can stop at a retry (a RetryStopper)")
	}
	s := &Session{cfg: cfg}
	var perr error
	switch {
	case cfg.Start == nil:
		perr = errors.New("no way to start it was given")
	case cfg.Probe == nil:
		perr = errors.New("no probe was given")
	default:
		perr = probeSafely(ctx, cfg.Probe)
	}
	if perr == nil {
		s.armed = true
		return s, nil, nil
	}
	w := &event.Warning{Code: WarnFallbackDropped, Message: droppedMessage(cfg.FallbackID.Agent, perr)}
	if cfg.OnEvent != nil {
		cfg.OnEvent(event.Event{Type: event.TypeWarning, Warning: w})
	}
	return s, w, nil
}

func droppedMessage(agentName string, err error) string {
	if agentName == "" {
		agentName = "the fallback"
	}
	msg := agentName + " is not usable, so there is no fallback for this session"
	if k := failure.KindOf(err); k != failure.Unclassified {
		msg += " (" + string(k) + ")"
	}
	return msg + ": " + detail.Cut(err.Error(), 300)
}

// Armed reports whether the session has a fallback to hand prompts to.
func (s *Session) Armed() bool { return s.armed }

// Engaged reports whether prompts now go to the fallback.
func (s *Session) Engaged() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replacement != nil
}

// errClosed is the error of a prompt sent after Close.
func errClosed() error {
	return failure.New(failure.Input, "the session is closed")
}

// Prompt sends prompt to the conversation that answers now and returns
// its outcome: the primary's, or, after a handoff (this prompt's or an
// earlier one's), the fallback's.
func (s *Session) Prompt(ctx context.Context, prompt string) (turn.Outcome, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		err := errClosed()
		return turn.Refused(err), err
	}
	s.prompts++
	index := s.prompts
	if r := s.replacement; r != nil {
		s.mu.Unlock()
		return r.Prompt(ctx, prompt)
	}
	s.mu.Unlock()

	o, err := s.promptPrimary(ctx, prompt)
	if err == nil || !s.armed || ctx.Err() != nil {
		return o, err
	}
	category, ok := Retryable(o, err)
	if !ok {
		return o, err
	}
	// The leader announces the handoff before any prompt can reach the
	// fallback (handOff runs announce before it publishes the fallback to
	// the other prompts): the engaged event reads before the fallback's
	// events, and the transcript is composed once, for this prompt only.
	var swapped string
	announce := func() {
		var transferred bool
		swapped, transferred = WithTranscript(prompt, s.history(), s.cfg.PrimaryID.Provider, s.primaryModel(o))
		engaged := event.Fallback{
			SessionPurpose:     s.cfg.Purpose,
			PrimaryAgent:       s.cfg.PrimaryID.Agent,
			PrimaryProvider:    s.cfg.PrimaryID.Provider,
			PrimaryModel:       s.primaryModel(o),
			FallbackAgent:      s.cfg.FallbackID.Agent,
			FallbackProvider:   s.cfg.FallbackID.Provider,
			FallbackModel:      s.cfg.FallbackID.Model,
			TriggerPoint:       triggerPoint(o),
			PromptIndex:        index,
			FailureCategory:    string(category),
			ContextTransferred: transferred,
		}
		if s.cfg.OnEvent != nil {
			e := engaged
			s.cfg.OnEvent(event.Event{Type: event.TypeFallbackEngaged, Fallback: &e})
		}
		if s.cfg.OnEngaged != nil {
			go observe(s.cfg.OnEngaged, engaged)
		}
	}
	conv, leader := s.handOff(ctx, announce)
	if conv == nil {
		return o, err // the primary's error, unchanged
	}
	if !leader {
		return conv.Prompt(ctx, prompt)
	}
	return conv.Prompt(ctx, swapped)
}

// promptPrimary sends prompt to the primary, stopping its turn at the
// AfterRetries-th retry notice of a retryable kind when that is asked
// for and the fallback is armed.
func (s *Session) promptPrimary(ctx context.Context, prompt string) (turn.Outcome, error) {
	rs, ok := s.cfg.Primary.(RetryStopper)
	if !ok || !s.armed || s.cfg.AfterRetries <= 0 {
		return s.cfg.Primary.Prompt(ctx, prompt)
	}
	seen := 0
	return rs.PromptStoppingAtRetry(ctx, prompt, func(r event.Retry) bool {
		if _, ok := categoryOf(r.Kind); ok {
			seen++
		}
		return seen >= s.cfg.AfterRetries
	})
}

// primaryModel is the model the primary turn reported, else the one it
// was asked for.
func (s *Session) primaryModel(o turn.Outcome) string {
	if o.Model != "" {
		return o.Model
	}
	return s.cfg.PrimaryID.Model
}

// observe calls the observer, a panic recovered: nothing waits for it.
func observe(fn func(event.Fallback), e event.Fallback) {
	defer func() { _ = recover() }()
	fn(e)
}

// history is the conversation so far: the caller's transcript, then the
// primary's own, when it keeps one.
func (s *Session) history() []Message {
	h := append([]Message(nil), s.cfg.Transcript...)
	if hist, ok := s.cfg.Primary.(Historian); ok {
		h = append(h, hist.History()...)
	}
	return h
}

// handOff returns the fallback conversation, starting it unless a handoff
// is already under way (then it waits for that one) or done. leader is
// true for the one caller whose handoff started the conversation: it
// sends the first swapped prompt. The leader's announce runs once the
// fallback started and before any other prompt can reach it (it is
// published, and the waiting callers released, only after announce
// returned). conv is nil when the handoff failed, ctx ended first, or the
// session was closed (a Close while announce ran included: the engaged
// event is then out, but the prompt returns the primary's error).
func (s *Session) handOff(ctx context.Context, announce func()) (conv Conversation, leader bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, false
	}
	if r := s.replacement; r != nil {
		s.mu.Unlock()
		return r, false
	}
	if h := s.inflight; h != nil {
		s.mu.Unlock()
		select {
		case <-h.done:
			return h.conv, false
		case <-ctx.Done():
			return nil, false
		}
	}
	h := &handoff{done: make(chan struct{})}
	s.inflight = h
	s.mu.Unlock()

	c, err := s.cfg.Start(ctx)
	if err != nil || c == nil {
		return s.settle(h, nil), false
	}
	s.mu.Lock()
	if s.closed {
		// Closed while the fallback started: it never answers.
		s.mu.Unlock()
		_ = c.Close()
		return s.settle(h, nil), false
	}
	h.conv = c // from here on, Close closes it
	s.mu.Unlock()
	announced := false
	defer func() {
		if announced {
			return
		}
		// announce panicked (a caller's OnEvent): the handoff failed, and
		// the prompts waiting for it are released with the primary's error.
		s.mu.Lock()
		closed := s.closed // then Close took h.conv and closes it
		s.inflight, h.conv = nil, nil
		s.mu.Unlock()
		close(h.done)
		if !closed {
			_ = c.Close()
		}
	}()
	announce()
	announced = true
	c = s.settle(h, c)
	return c, c != nil
}

// settle ends handoff h with c (nil when it failed; also when the session
// was closed meanwhile: Close closed c then) and releases the prompts
// waiting for it.
func (s *Session) settle(h *handoff, c Conversation) Conversation {
	s.mu.Lock()
	s.inflight = nil
	if c != nil && s.closed {
		c = nil
	}
	if c != nil {
		s.replacement = c
	}
	h.conv = c
	s.mu.Unlock()
	close(h.done)
	return c
}

// Close closes the primary and, when a handoff happened, the fallback;
// later prompts fail. It returns the first error.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	r := s.replacement
	if h := s.inflight; r == nil && h != nil {
		r = h.conv // a fallback started, its handoff still being announced
	}
	s.mu.Unlock()
	err := s.cfg.Primary.Close()
	if r != nil {
		err = errors.Join(err, r.Close())
	}
	return err
}

// probeSafely runs probe; a panic in it drops the fallback like a failed
// probe instead of crashing the primary's session.
func probeSafely(ctx context.Context, probe func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = failure.New(failure.Unclassified, "the fallback's probe panicked")
		}
	}()
	return probe(ctx)
}
