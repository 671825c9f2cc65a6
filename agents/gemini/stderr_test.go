package gemini_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// TestFeedStderr: gemini's retry notices on stderr (retryWithBackoff's
// texts in 0.61.0, with the error it logs on the same line) are retry
// warnings; everything else on stderr says nothing.
func TestFeedStderr(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []event.Retry
	}{
		{"a status", []string{`Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {"error":{"code":429}}`},
			[]event.Retry{{Attempt: 1, Status: 429, Kind: failure.RateLimited}}},
		{"an overload", []string{`Attempt 2 failed with status 503. Retrying with backoff... _ApiError: {}`},
			[]event.Retry{{Attempt: 2, Status: 503, Kind: failure.RateLimited}}},
		{"no status: no answer", []string{"Attempt 1 failed. Retrying with backoff... TypeError: fetch failed"},
			[]event.Retry{{Attempt: 1, Kind: failure.Network}}},
		{"a 429 named in the message", []string{"Attempt 3 failed with 429 error (no Retry-After header). Retrying with backoff... Error: 429"},
			[]event.Retry{{Attempt: 3, Status: 429, Kind: failure.RateLimited}}},
		{"a 5xx named in the message", []string{"Attempt 1 failed with 5xx error. Retrying with backoff... Error: 502"},
			[]event.Retry{{Attempt: 1, Kind: failure.Unclassified}}},
		{"a suggested delay over two lines", []string{"Attempt 1 failed: Resource has been exhausted (e.g. check quota).",
			"Suggested retry after 1s.. Retrying after 5304ms..."},
			[]event.Retry{{Attempt: 1, DelayMs: 5304, Kind: failure.RateLimited}}},
		{"a suggested delay on one line", []string{"Attempt 2 failed: The model is overloaded. Retrying after 700ms..."},
			[]event.Retry{{Attempt: 2, DelayMs: 700, Kind: failure.RateLimited}}},
		{"a daily quota", []string{"Attempt 1 failed: You have exhausted your daily quota on this model. Retrying after 9000ms..."},
			[]event.Retry{{Attempt: 1, DelayMs: 9000, Kind: failure.Quota}}},
		{"the last attempt is no retry", []string{"Attempt 2 failed: Resource has been exhausted (e.g. check quota).. Max attempts reached"}, nil},
		{"lines between a notice's start and its end say nothing", []string{"Attempt 1 failed: quota exceeded.",
			"the prompt PROMPT-SECRET echoed by something else", "Suggested retry after 1s.. Retrying after 700ms..."},
			[]event.Retry{{Attempt: 1, DelayMs: 700, Kind: failure.Quota}}},
		{"a pending notice then another notice", []string{"Attempt 1 failed: quota", "Attempt 2 failed with status 429. Retrying with backoff..."},
			[]event.Retry{{Attempt: 2, Status: 429, Kind: failure.RateLimited}}},
		{"noise", []string{"Warning: 256-color support not detected.", "    at retryWithBackoff (file:///x.js:1:2)",
			"Attempt x failed. Retrying with backoff...", "Attempt 0 failed. Retrying with backoff...", "Retrying after 5ms..."}, nil},
		{"escapes", []string{"\x1b[33mAttempt 1 failed with status 429. Retrying with backoff...\x1b[0m"},
			[]event.Retry{{Attempt: 1, Status: 429, Kind: failure.RateLimited}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := gemini.NewDecoder(gemini.Turn{Mode: turn.ModeAsk})
			require.NoError(t, err)
			var got []event.Retry
			for _, line := range tt.lines {
				for _, e := range d.FeedStderr([]byte(line)) {
					require.Equal(t, event.TypeWarning, e.Type)
					require.Equal(t, event.WarnRetry, e.Warning.Code)
					got = append(got, *e.Warning.Retry)
				}
			}
			assert.Equal(t, tt.want, got)
			for _, line := range tt.lines {
				for _, e := range d.FeedStderr([]byte(line)) {
					assert.NotContains(t, e.Warning.Message, "PROMPT-SECRET")
				}
			}
		})
	}
}

// FuzzFeedStderr: any stderr line yields only retry warnings with a
// positive attempt, a status in HTTP's range or none, and a bounded,
// valid message.
func FuzzFeedStderr(f *testing.F) {
	f.Add("Attempt 1 failed with status 429. Retrying with backoff... x", "")
	f.Add("Attempt 1 failed: quota", "Suggested retry after 1s.. Retrying after 5304ms...")
	f.Add("Attempt 9 failed with status 99999. Retrying with backoff...", "Attempt 2 failed: x. Retrying after -5ms...")
	f.Fuzz(func(t *testing.T, a, b string) {
		d, err := gemini.NewDecoder(gemini.Turn{Mode: turn.ModeAsk})
		require.NoError(t, err)
		for _, line := range []string{a, b, a} {
			for _, e := range d.FeedStderr([]byte(line)) {
				r := e.Warning.Retry
				require.NotNil(t, r)
				assert.Positive(t, r.Attempt)
				assert.True(t, r.Status == 0 || r.Status >= 100 && r.Status <= 599, "status %d", r.Status)
				assert.GreaterOrEqual(t, r.DelayMs, int64(0))
				assert.NotEmpty(t, r.Kind)
				assert.True(t, utf8.ValidString(e.Warning.Message) || !utf8.ValidString(a+b))
				assert.Less(t, len(e.Warning.Message), 1200)
				assert.False(t, strings.ContainsAny(e.Warning.Message, "\n\r\x1b"), "%q", e.Warning.Message)
			}
		}
	})
}
