package gemini_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/failure"
)

func TestParseVersion(t *testing.T) {
	good := []struct{ in, want string }{
		{"0.61.0\n", "0.61.0"}, // the real output, recorded here
		{"0.61.0", "0.61.0"},
		{"\uFEFF 0.61.0\r\n", "0.61.0"},
		{"v1.2.3", "1.2.3"},
		{"0.62.0-preview.1\n", "0.62.0-preview.1"},
		{"0.61.0-nightly.20261201.abc1234", "0.61.0-nightly.20261201.abc1234"},
		{"\x1b[1m0.61.0\x1b[0m", "0.61.0"},
	}
	for _, tt := range good {
		got, err := gemini.ParseVersion(tt.in)
		require.NoError(t, err, "%q", tt.in)
		assert.Equal(t, tt.want, got)
	}
	for _, in := range []string{"", "gemini", "0.61", "0.61.0 extra", "Please set an Auth method", "01.2.3",
		"1.2.3\n4.5.6", strings.Repeat("9", 500)} {
		_, err := gemini.ParseVersion(in)
		require.Error(t, err, "%q", in)
		assert.Equal(t, failure.Protocol, failure.KindOf(err))
		assert.Less(t, len(err.Error()), 300)
	}
}
