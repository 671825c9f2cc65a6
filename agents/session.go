package agents

import (
	"context"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/turn"
)

// Session is a conversation with one agent: each Prompt is a turn that
// resumes the session the previous turn reported. It keeps the text of
// the conversation (the prompt of each turn that succeeded, and what the
// agent said in every turn that did not end in an error result; of each,
// only the start a transcript can carry, and only the last
// fallback.MaxTurns messages) for a transcript, and Close stops the turn
// that runs, if any, and refuses later prompts. Turns run one at a time:
// a Prompt made while another runs waits for it. A Session is a
// fallback.Conversation, a fallback.RetryStopper and a fallback.Historian.
type Session struct {
	agent      Agent
	res        discovery.Resolution
	configured bool
	base       Turn
	opts       turn.Options

	// closing ends the turn that runs when Close is called.
	closing context.Context
	close   context.CancelFunc

	req sync.Mutex // held for a whole turn

	mu        sync.Mutex // guards what follows
	sessionID string
	history   []fallback.Message
}

// maxKeptText bounds what the history keeps of one message: a transcript
// carries at most the start of each (fallback.MaxTurnChars characters of
// at most utf8.UTFMax bytes), so a turn that says hundreds of megabytes
// costs a few kilobytes here. A cut may split the last character; the
// transcript's own cut comes before it.
const maxKeptText = (fallback.MaxTurnChars + 1) * utf8.UTFMax

// NewSession returns a session of agent a on res: each turn is base with
// the prompt (and, after the first turn, the session id to resume), run
// with opts.
func NewSession(a Agent, res discovery.Resolution, configured bool, base Turn, opts turn.Options) *Session {
	closing, cancel := context.WithCancel(context.Background())
	return &Session{agent: a, res: res, configured: configured, base: base, opts: opts,
		sessionID: base.Resume, closing: closing, close: cancel}
}

// Prompt runs one turn with prompt and returns its outcome.
func (s *Session) Prompt(ctx context.Context, prompt string) (turn.Outcome, error) {
	return s.PromptStoppingAtRetry(ctx, prompt, nil)
}

// PromptStoppingAtRetry is Prompt with stop asked at each retry notice of
// the agent: the turn stops there when it says so (turn.Options.
// StopAtRetry; nil never stops). It makes the Session a
// fallback.RetryStopper.
func (s *Session) PromptStoppingAtRetry(ctx context.Context, prompt string, stopAt func(event.Retry) bool) (turn.Outcome, error) {
	s.req.Lock()
	defer s.req.Unlock()
	if s.closing.Err() != nil {
		err := failure.New(failure.Input, "the %s session is closed", s.agent.Name)
		return turn.Refused(err), err
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	unhook := context.AfterFunc(s.closing, func() {
		stop(failure.New(failure.Cancelled, "the %s session was closed", s.agent.Name))
	})
	defer unhook()

	t := s.base
	t.Prompt = prompt
	s.mu.Lock()
	t.Resume = s.sessionID
	s.mu.Unlock()

	var said strings.Builder
	errorResult := false
	opts := s.opts
	opts.StopAtRetry = stopAt
	onEvent := opts.OnEvent
	opts.OnEvent = func(e event.Event) {
		switch e.Type {
		case event.TypeText:
			if room := maxKeptText - said.Len(); room > 0 {
				said.WriteString(e.Text[:min(len(e.Text), room)])
			}
		case event.TypeResult:
			errorResult = e.Result != nil && e.Result.IsError
		}
		if onEvent != nil {
			onEvent(e)
		}
	}
	o, err := s.agent.Run(ctx, s.res, s.configured, t, opts)

	s.mu.Lock()
	defer s.mu.Unlock()
	if o.SessionID != "" {
		s.sessionID = o.SessionID
	}
	// A failed turn's prompt is not history: whoever retries it sends it
	// again. What the agent said in it is, unless it came as an error
	// result: that text is the CLI's error message, not conversation.
	if err == nil {
		s.history = append(s.history, fallback.Message{Role: "user", Text: prompt[:min(len(prompt), maxKeptText)]})
	}
	if !errorResult && said.Len() > 0 {
		s.history = append(s.history, fallback.Message{Role: "assistant", Text: said.String()})
	}
	if n := len(s.history) - fallback.MaxTurns; n > 0 {
		s.history = append(s.history[:0], s.history[n:]...)
	}
	return o, err
}

// SessionID returns the id the next turn resumes ("" before any turn
// reported one).
func (s *Session) SessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionID
}

// History returns the conversation's text so far (fallback.Historian).
func (s *Session) History() []fallback.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]fallback.Message(nil), s.history...)
}

// Close stops the turn that runs, if any (its tree is gone when its
// Prompt returns), and refuses later prompts.
func (s *Session) Close() error {
	s.close()
	return nil
}
