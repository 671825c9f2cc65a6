package codex

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
)

// TestRetryWarning: Codex's "Reconnecting... N/M (CAUSE)" notices (the
// texts of 0.171.0 against a real Responses API stand-in) as retries.
func TestRetryWarning(t *testing.T) {
	tests := []struct {
		rest string // after "Reconnecting..."
		want event.Retry
	}{
		{" 1/1 (exceeded retry limit, last status: 429 Too Many Requests, request id: req_1)",
			event.Retry{Attempt: 1, Max: 1, Status: 429, Kind: failure.RateLimited}},
		{" 2/5 (unexpected status 401 Unauthorized: Incorrect API key provided., url: http://127.0.0.1:9/v1/responses)",
			event.Retry{Attempt: 2, Max: 5, Status: 401, Kind: failure.Auth}},
		{" 1/1 (stream disconnected before completion: Transport error: network error: error decoding response body)",
			event.Retry{Attempt: 1, Max: 1, Kind: failure.Network}},
		{" 3/5 (Selected model is at capacity. Please try a different model.)",
			event.Retry{Attempt: 3, Max: 5, Kind: failure.RateLimited}},
		{" x/y (status 9999)", event.Retry{Kind: failure.Network}},
		{"", event.Retry{Kind: failure.Network}},
	}
	for _, tt := range tests {
		e := retryWarning(strings.TrimSpace(tt.rest))
		require.NotNil(t, e.Warning)
		assert.Equal(t, event.WarnRetry, e.Warning.Code)
		assert.Equal(t, tt.want, *e.Warning.Retry, "%q", tt.rest)
	}
}
