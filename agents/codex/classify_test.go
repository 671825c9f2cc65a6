package codex_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/codex"
	"github.com/cursorkit/cursorkit/failure"
)

func TestClassifyMessage(t *testing.T) {
	norepo, err := os.ReadFile("testdata/real-norepo.stderr")
	require.NoError(t, err)
	tests := []struct {
		text string
		want failure.Kind
	}{
		// Recorded from codex-cli 0.171.0 (testdata/README.md).
		{string(norepo), failure.Setup},
		{"Reconnecting... waiting for network (Connection failed: error sending request)", failure.Network},
		{"Reconnecting... 2/5 (stream disconnected before completion: failed to lookup address information: Name does not resolve)", failure.Network},
		{"Falling back from WebSockets to HTTPS transport. stream disconnected before completion: failed to lookup address information: Name does not resolve", failure.Network},
		{"2026-12-01T23:36:30.375419Z ERROR codex_api::endpoint::responses_websocket: failed to connect to Responses WebSocket stage=Unknown", failure.Unclassified},
		// codex-rs/protocol/src/error.rs and exec/src/lib.rs texts.
		{"Error loading config.toml:\n/home/u/.codex/config.toml:3:1: unknown field", failure.Setup},
		{"Quota exceeded. Check your plan and billing details.", failure.Quota},
		{"You've hit your usage limit. Try again at 3:04 PM.", failure.Quota},
		{"Your workspace is out of credits. Add credits to continue.", failure.Quota},
		{"You hit your spend cap set in your workspace. Increase your spend cap to continue.", failure.Quota},
		{"To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus.", failure.Quota},
		{"exceeded retry limit, last status: 429 Too Many Requests", failure.RateLimited},
		{"Selected model is at capacity. Please try a different model.", failure.RateLimited},
		{"We're currently experiencing high demand, which may cause temporary errors.", failure.RateLimited},
		{"unexpected status 401 Unauthorized: Missing bearer or basic authentication in header", failure.Auth},
		{"Your access token could not be refreshed because your refresh token has expired. Please log out and sign in again.", failure.Auth},
		{"Missing environment variable: `OPENAI_API_KEY`.", failure.Auth},
		{"Access blocked by Cloudflare. This usually happens when connecting from a restricted region (status 403 Forbidden)", failure.Network},
		{"sandbox error: seccomp setup error", failure.Sandbox},
		{"unexpected status 400 Bad Request: The 'gpt-9' model is not supported when using Codex with a ChatGPT account.", failure.Input},
		{"No prompt provided via stdin.", failure.Input},
		{"\x1b[31mConnection failed: error sending request\x1b[0m", failure.Network},
		{"internal error; agent loop died unexpectedly", failure.Unclassified},
		{"", failure.Unclassified},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			assert.Equal(t, tt.want, codex.ClassifyMessage(tt.text))
		})
	}
}
