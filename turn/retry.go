package turn

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// kindOfStatus is the failure kind an HTTP status of a model API means:
// 429 and the overload statuses (503, and Anthropic's 529) are
// rate_limited, 401 and 403 auth, 402 quota, 0 (no answer: the connection
// failed or broke) network, any other failure.Unclassified.
func kindOfStatus(status int) failure.Kind {
	switch status {
	case 0:
		return failure.Network
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, 529:
		return failure.RateLimited
	case http.StatusUnauthorized, http.StatusForbidden:
		return failure.Auth
	case http.StatusPaymentRequired:
		return failure.Quota
	}
	return failure.Unclassified
}

// RetryWarning is the warning event of an agent's retry notice r: code
// event.WarnRetry, r itself, and a message said from r's numbers and
// cause, the agent's short reason (one line, bounded by detail.Bound; ""
// for none), the same for every agent:
//
//	a model request failed (HTTP 429, rate_limited: rate_limit): retry 1 of 10 in 1.0 s
//	a model request got no answer (network): retry 2 of 5
//
// A Status outside HTTP's range (100-599) is taken as none, and an empty
// Kind as kindOfStatus(Status).
func RetryWarning(r event.Retry, cause string) event.Event {
	if r.Status < 100 || r.Status > 599 {
		r.Status = 0
	}
	if r.Kind == "" {
		r.Kind = kindOfStatus(r.Status)
	}
	what := "got no answer ("
	if r.Status != 0 {
		what = "failed (HTTP " + strconv.Itoa(r.Status) + ", "
	}
	what += string(r.Kind)
	if cause = detail.Bound(cause); cause != "" {
		what += ": " + cause
	}
	msg := fmt.Sprintf("a model request %s): retry %d", what, r.Attempt)
	if r.Max > 0 {
		msg += fmt.Sprintf(" of %d", r.Max)
	}
	if r.DelayMs > 0 {
		msg += fmt.Sprintf(" in %.1f s", float64(r.DelayMs)/1000)
	}
	return event.Event{Type: event.TypeWarning, Warning: &event.Warning{Code: event.WarnRetry, Message: msg, Retry: &r}}
}
