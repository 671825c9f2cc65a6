package fallback

import (
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

// Category is why a primary's failure may be answered by another agent.
type Category string

// The failure categories of a retryable model-selection failure.
const (
	CategoryAuthentication Category = "authentication"
	CategoryRateLimit      Category = "rate-limit"
	CategoryModelSelection Category = "model-selection"
)

// categoryPhrases are, per category in the order tried, the lower-case
// phrases of a retryable failure (docs/contract.md, "Cross-runtime
// fallback"). Numbers match only as whole numbers. Model selection comes
// first and authentication last: "quota exceeded for this api key" is a
// limit, not a bad key.
func categoryPhrases() []struct {
	category Category
	phrases  []string
} {
	return []struct {
		category Category
		phrases  []string
	}{
		{CategoryModelSelection, []string{
			"unsupported message role", "model not found", "model_not_found", "invalid temperature",
		}},
		{CategoryRateLimit, []string{
			"rate limit", "rate_limit", "too many requests", "429", "overloaded", "quota", "capacity",
			"temporarily unavailable",
		}},
		{CategoryAuthentication, []string{
			"auth-tier", "auth tier", "not configured", "401", "403", "unauthorized", "forbidden",
			"authentication", "invalid api key", "invalid key", "api key",
		}},
	}
}

// Retryable reports whether a primary's failed turn may be handed to the
// fallback, and in which category. Only a failure of the model or its
// account qualifies: a cancel, a deadline, the caller's input or policy, a
// broken stream, a signal, a missing CLI or a sandbox never does, whatever
// its text says, and neither does a turn that never started. An auth failure is authentication and a quota or rate
// limit is rate-limit by kind; a failure of another kind (process, setup,
// network, error) qualifies when its text (err's message and the agent's
// stderr tail) names one of the phrases, case-insensitively.
func Retryable(o turn.Outcome, err error) (Category, bool) {
	if err == nil || o.Process.Ending == supervise.SpawnFailed {
		return "", false
	}
	kind := failure.KindOf(err)
	if c, ok := categoryOf(kind); ok {
		return c, true
	}
	switch kind {
	case failure.Process, failure.Unclassified, failure.Setup, failure.Network:
	default:
		return "", false
	}
	text := strings.ToLower(err.Error() + "\n" + o.Process.StderrTail)
	for _, c := range categoryPhrases() {
		for _, p := range c.phrases {
			if containsPhrase(text, p) {
				return c.category, true
			}
		}
	}
	return "", false
}

// categoryOf is the category of a failure of kind k that is retryable by
// its kind alone: auth, quota and rate_limited.
func categoryOf(k failure.Kind) (Category, bool) {
	switch k {
	case failure.Auth:
		return CategoryAuthentication, true
	case failure.Quota, failure.RateLimited:
		return CategoryRateLimit, true
	}
	return "", false
}

// containsPhrase reports whether text holds p; a number only as a whole
// number ("429", not "14290").
func containsPhrase(text, p string) bool {
	numeric := p[0] >= '0' && p[0] <= '9'
	for from := 0; ; {
		i := strings.Index(text[from:], p)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(p)
		if !numeric || (!isDigit(text, i-1) && !isDigit(text, end)) {
			return true
		}
		from = i + 1
	}
}

func isDigit(s string, i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }

// triggerPoint is where the primary's failure showed (event.Fallback).
func triggerPoint(o turn.Outcome) string {
	if o.StoppedAtRetry {
		return "retry"
	}
	if o.Process.Ending == supervise.Exited && !o.Process.Finished {
		return "exit"
	}
	return "result"
}
