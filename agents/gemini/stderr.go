package gemini

import (
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/turn"
)

// FeedStderr reads one line of gemini's stderr, where alone it says that
// it retries a failed model request (its retryWithBackoff, 0.61.0):
//
//	Attempt N failed with status S. Retrying with backoff...
//	Attempt N failed with 429 error (no Retry-After header). Retrying with backoff...
//	Attempt N failed with 5xx error. Retrying with backoff...
//	Attempt N failed. Retrying with backoff...
//	Attempt N failed: MESSAGE. Retrying after Dms...
//
// (each followed, on the same line, by the error gemini logs with it).
// Each is a retry warning (turn.RetryWarning): the attempt, the status
// when said, the kind from the status (a failure without one is network,
// a quota error's from its message, else rate_limited), the delay when
// said. The message of the last form may span lines: the notice ends at
// its "Retrying after" line, and its cause is the first line's message. "Attempt N failed...: Max attempts reached"
// is no retry, and any other line says nothing. FeedStderr implements
// turn.StderrDecoder.
func (d *decoder) FeedStderr(line []byte) []event.Event {
	text := strings.TrimSpace(detail.StripANSI(string(line)))
	if attempt, rest, ok := cutAttempt(text); ok {
		d.pending = nil
		// The error gemini logs with a notice follows it on the line.
		if said, _, ok := strings.Cut(rest, "Retrying with backoff..."); ok {
			return []event.Event{backoffRetry(attempt, said)}
		}
		switch {
		case strings.Contains(rest, ". Max attempts reached"):
			return nil
		case strings.HasPrefix(rest, ": "):
			d.pending = &pendingRetry{attempt: attempt, message: rest[2:]}
		}
	}
	p := d.pending
	if p == nil {
		return nil
	}
	// Only the line that ends the notice counts: the lines between are
	// the rest of the API's message, or anything else on stderr.
	i := strings.LastIndex(text, ". Retrying after ")
	if i < 0 {
		return nil
	}
	d.pending = nil
	r := event.Retry{Attempt: p.attempt}
	if ms, ok := strings.CutSuffix(text[i+len(". Retrying after "):], "ms..."); ok {
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil && n > 0 {
			r.DelayMs = n
		}
	}
	msg := p.message // the first line's
	if j := strings.LastIndex(msg, ". Retrying after "); j >= 0 {
		msg = msg[:j] // the notice was one line
	}
	r.Kind = ClassifyMessage(msg)
	if r.Kind != failure.Quota {
		r.Kind = failure.RateLimited // a RetryableQuotaError: a rate or capacity limit
	}
	return []event.Event{turn.RetryWarning(r, msg)}
}

// pendingRetry is an "Attempt N failed: MESSAGE" line whose "Retrying
// after" has not come yet.
type pendingRetry struct {
	attempt int
	message string
}

// cutAttempt reads "Attempt N failed" at the start of text: N and what
// follows.
func cutAttempt(text string) (int, string, bool) {
	rest, ok := strings.CutPrefix(text, "Attempt ")
	if !ok {
		return 0, "", false
	}
	n, rest, ok := strings.Cut(rest, " failed")
	if !ok {
		return 0, "", false
	}
	attempt, err := strconv.Atoi(n)
	if err != nil || attempt < 1 {
		return 0, "", false
	}
	return attempt, rest, true
}

// backoffRetry is the retry of a "Retrying with backoff" notice, given
// what came between "failed" and it: " with status S. ", " with 429
// error (no Retry-After header). ", " with 5xx error. " or ". ".
func backoffRetry(attempt int, said string) event.Event {
	r := event.Retry{Attempt: attempt}
	said = strings.TrimSpace(said)
	cause := strings.TrimSuffix(strings.TrimPrefix(said, "with "), ".")
	switch {
	case strings.HasPrefix(said, "with status "):
		r.Status, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(said, "with status "), "."))
		cause = ""
	case strings.HasPrefix(said, "with 429 error"):
		r.Status = 429
	case strings.HasPrefix(said, "with 5xx error"):
		r.Kind = failure.Unclassified // a server error whose status gemini did not keep
	}
	if said == "." {
		cause = ""
	}
	return turn.RetryWarning(r, cause)
}
