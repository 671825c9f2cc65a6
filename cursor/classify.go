package cursor

import (
	"strings"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// maxAgentMessage bounds the agent's own error text carried in a failure.
const maxAgentMessage = 500

// ClassifyMessage returns the failure kind an agent's error text indicates:
// failure.Quota for a usage or spend limit, failure.RateLimited for a rate
// limit, failure.Auth for an authentication problem, failure.Other
// otherwise. The Decoder reads result texts and stderr tails with it.
func ClassifyMessage(text string) failure.Kind {
	lower := strings.ToLower(text)
	has := func(phrases ...string) bool {
		for _, p := range phrases {
			if strings.Contains(lower, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("usage limit", "usage-limit", "quota", "spend limit", "spending limit", "out of credits"):
		return failure.Quota
	case has("rate limit", "rate-limit", "rate_limit", "ratelimit", "too many requests"):
		return failure.RateLimited
	case has("authentication", "unauthenticated", "not authenticated", "unauthorized",
		"not logged in", "please log in", "login required", "invalid api key"):
		return failure.Auth
	}
	return failure.Other
}

// failed reports whether r reports a failed turn: is_error true or
// subtype "error".
func failed(r *event.Result) bool { return r.IsError || r.Subtype == "error" }

// resultFailure is the failure an error result reports: the agent's own
// message, bounded, with the kind its text indicates.
func resultFailure(r *event.Result) error {
	msg := strings.TrimSpace(r.Text)
	if msg == "" {
		msg = "(no message)"
	}
	return &failure.Error{
		Kind:    ClassifyMessage(r.Text),
		Message: "cursor-agent reported an error",
		Detail:  detail.Cut(msg, maxAgentMessage),
	}
}

// truncateStart keeps at most the last max bytes of s, on a rune boundary,
// marking the cut.
func truncateStart(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := len(s) - max
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return "…" + s[cut:]
}
