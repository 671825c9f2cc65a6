package gemini_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/failure"
)

func TestClassifyMessage(t *testing.T) {
	recorded, err := os.ReadFile(filepath.Join("testdata", "recorded-noauth.stderr"))
	require.NoError(t, err)
	tests := []struct {
		text string
		want failure.Kind
	}{
		{string(recorded), failure.Auth}, // recorded: exit 41
		{"Error resuming session: No previous sessions found for this project.", failure.Input},                                  // recorded: exit 42
		{"Attempt 1 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request", failure.Network}, // recorded
		{"Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or trust this directory in interactive mode.", failure.Setup},
		{"[API Error: API key not valid. Please pass a valid API key. (Status: INVALID_ARGUMENT)]", failure.Auth},
		{"The auth type 'oauth-personal' is enforced, but no authentication is configured.", failure.Auth},
		{"You have exhausted your daily quota on this model.", failure.Quota},
		{"[API Error: Resource has been exhausted (e.g. check quota). (Status: RESOURCE_EXHAUSTED)]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method", failure.RateLimited},
		{"getaddrinfo ENOTFOUND generativelanguage.googleapis.com", failure.Network},
		{"No input provided via stdin. Input can be provided by piping data into gemini or using the --prompt option.", failure.Input},
		{"[API Error: models/gemini-9 is not found for API version v1beta (Status: NOT_FOUND)]", failure.Input},
		{"YOLO mode is disabled by the \"disableYolo\" setting.", failure.Setup},
		{"\x1b[31mPlease set an Auth method\x1b[0m", failure.Auth},
		{"Reached max session turns for this session.", failure.Unclassified},
		{"something else", failure.Unclassified},
		{"", failure.Unclassified},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, gemini.ClassifyMessage(tt.text), "%q", tt.text)
	}
}
