package fallback_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/fallback"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

// exited is the outcome of a primary turn that failed after its result.
func exited(kind failure.Kind, stderr string) turn.Outcome {
	return turn.Outcome{Status: turn.StatusError, Kind: kind, Warnings: nil,
		Process: supervise.Outcome{Ending: supervise.Exited, ExitCode: 1, Finished: true, StderrTail: stderr}}
}

// retryablePhrases are the contract's phrases and the category each one
// falls in.
var retryablePhrases = []struct {
	phrase   string
	category fallback.Category
}{
	{"auth-tier incompatibility", fallback.CategoryAuthentication},
	{"the model requires a different auth tier", fallback.CategoryAuthentication},
	{"unsupported message role: developer", fallback.CategoryModelSelection},
	{"provider model not found", fallback.CategoryModelSelection},
	{"error: model_not_found", fallback.CategoryModelSelection},
	{"invalid temperature for this model", fallback.CategoryModelSelection},
	{"provider not configured", fallback.CategoryAuthentication},
	{"rate limit reached", fallback.CategoryRateLimit},
	{"rate_limit_error", fallback.CategoryRateLimit},
	{"too many requests", fallback.CategoryRateLimit},
	{"HTTP 429", fallback.CategoryRateLimit},
	{"status=429:", fallback.CategoryRateLimit},
	{"(401)", fallback.CategoryAuthentication},
	{"got 403 from the api", fallback.CategoryAuthentication},
	{"unauthorized", fallback.CategoryAuthentication},
	{"forbidden", fallback.CategoryAuthentication},
	{"authentication failed", fallback.CategoryAuthentication},
	{"invalid api key", fallback.CategoryAuthentication},
	{"invalid key", fallback.CategoryAuthentication},
	{"missing api key", fallback.CategoryAuthentication},
	{"model overloaded", fallback.CategoryRateLimit},
	{"quota exceeded", fallback.CategoryRateLimit},
	{"quota exceeded for this api key", fallback.CategoryRateLimit},
	{"no capacity", fallback.CategoryRateLimit},
	{"service temporarily unavailable", fallback.CategoryRateLimit},
}

// caseVariants are a phrase as written, upper case and in mixed case.
func caseVariants(s string) []string {
	mixed := []rune(s)
	for i := range mixed {
		if i%2 == 0 {
			mixed[i] = []rune(strings.ToUpper(string(mixed[i])))[0]
		}
	}
	return []string{s, strings.ToUpper(s), string(mixed)}
}

func TestRetryablePhrases(t *testing.T) {
	for _, tt := range retryablePhrases {
		for _, text := range caseVariants(tt.phrase) {
			for _, kind := range []failure.Kind{failure.Process, failure.Unclassified, failure.Setup, failure.Network} {
				t.Run(string(kind)+"/"+text, func(t *testing.T) {
					// In the error's message.
					err := failure.New(kind, "the agent failed: %s", text)
					got, ok := fallback.Retryable(exited(kind, ""), err)
					assert.True(t, ok)
					assert.Equal(t, tt.category, got)
					// Or only in the agent's stderr tail.
					got, ok = fallback.Retryable(exited(kind, "stderr: "+text), failure.New(kind, "exited with code 1"))
					assert.True(t, ok)
					assert.Equal(t, tt.category, got)
				})
			}
		}
	}
	t.Run("an error with no kind is kind error", func(t *testing.T) {
		got, ok := fallback.Retryable(exited(failure.Unclassified, ""), errors.New("Too Many Requests"))
		assert.True(t, ok)
		assert.Equal(t, fallback.CategoryRateLimit, got)
	})
}

func TestRetryableNot(t *testing.T) {
	tests := []struct {
		name string
		o    turn.Outcome
		err  error
	}{
		{name: "no error", o: exited("", ""), err: nil},
		{name: "a number inside a larger one", o: exited(failure.Process, ""), err: failure.New(failure.Process, "request id 14290 failed")},
		{name: "429 as a prefix", o: exited(failure.Process, ""), err: failure.New(failure.Process, "error 4290")},
		{name: "401 as a suffix", o: exited(failure.Process, "code 1401"), err: failure.New(failure.Process, "exit 2")},
		{name: "403 inside", o: exited(failure.Process, ""), err: failure.New(failure.Process, "took 24035ms")},
		{name: "no phrase", o: exited(failure.Process, "panic: nil map"), err: failure.New(failure.Process, "exited with code 2")},
		{name: "network, no phrase", o: exited(failure.Network, ""), err: failure.New(failure.Network, "connection reset")},
		{
			name: "a spawn failure, even of kind auth",
			o:    turn.Outcome{Status: turn.StatusError, Process: supervise.Outcome{Ending: supervise.SpawnFailed, ExitCode: -1}},
			err:  failure.New(failure.Auth, "401 unauthorized"),
		},
		{
			name: "a spawn failure with a phrase",
			o:    turn.Outcome{Status: turn.StatusError, Process: supervise.Outcome{Ending: supervise.SpawnFailed, ExitCode: -1}},
			err:  failure.New(failure.Process, "rate limit"),
		},
	}
	// The kinds that never qualify, whatever their text says.
	for _, kind := range []failure.Kind{failure.Cancelled, failure.Timeout, failure.Input, failure.Policy, failure.Protocol,
		failure.Died, failure.MissingCLI, failure.Sandbox, failure.Resource} {
		for _, p := range retryablePhrases {
			tests = append(tests, struct {
				name string
				o    turn.Outcome
				err  error
			}{name: string(kind) + "/" + p.phrase, o: exited(kind, p.phrase), err: failure.New(kind, "failed: %s", p.phrase)})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := fallback.Retryable(tt.o, tt.err)
			assert.False(t, ok)
			assert.Empty(t, got)
		})
	}
}

func TestRetryableByKind(t *testing.T) {
	tests := []struct {
		kind failure.Kind
		want fallback.Category
	}{
		{failure.Auth, fallback.CategoryAuthentication},
		{failure.Quota, fallback.CategoryRateLimit},
		{failure.RateLimited, fallback.CategoryRateLimit},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			// The kind decides, whatever the text.
			for _, text := range []string{"", "something went wrong", "model not found"} {
				got, ok := fallback.Retryable(exited(tt.kind, ""), failure.New(tt.kind, "%s", text))
				assert.True(t, ok, text)
				assert.Equal(t, tt.want, got, text)
			}
			// Wrapped, the kind is still found.
			got, ok := fallback.Retryable(exited(tt.kind, ""), errors.Join(errors.New("turn"), failure.New(tt.kind, "x")))
			assert.True(t, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}
