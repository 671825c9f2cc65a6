package settingsapi

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

func TestDecodeSettings(t *testing.T) {
	tests := []struct {
		body, want string
		ok         bool
	}{
		{`{"binaryPath":"/a/b"}`, "/a/b", true},
		{` { "binaryPath" : "  C:\\Program Files\\x y\\cursor-agent.cmd " } `, `C:\Program Files\x y\cursor-agent.cmd`, true},
		{`{"binaryPath":null}`, "", true},
		{`{"binaryPath":""}`, "", true},
		{`{"binaryPath":"\u00e9t\u00e9"}`, "été", true},
		{`{"binaryPath":"\ud83d\ude00"}`, "\U0001F600", true},
		{`{"binaryPath":"\ud800"}`, "", false},
		{"{\"binaryPath\":\"\xff\"}", "", false},
		{`{"binaryPath":"a","binaryPath":"a"}`, "", false},
		{`{"BinaryPath":"a"}`, "", false},
		{`{"binaryPath":1e3}`, "", false},
		{`{"binaryPath":"a"`, "", false},
		{`[]`, "", false},
		{`null`, "", false},
		{``, "", false},
		{`{"binaryPath":"a"} x`, "", false},
		{`{"binaryPath":"a\u0007"}`, "", false},
		{`{"binaryPath":"a", }`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			got, err := decodeSettings([]byte(tt.body))
			if !tt.ok {
				require.Error(t, err)
				assert.Equal(t, failure.Input, failure.KindOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// FuzzDecodeSettings checks that the decoder never panics, accepts only
// valid JSON, and that an accepted path is trimmed, free of control
// characters and equal to what encoding/json/v2 reads from the same body.
func FuzzDecodeSettings(f *testing.F) {
	for _, seed := range []string{
		`{"binaryPath":"/a/b"}`, `{"binaryPath":null}`, `{"binaryPath":42}`, `{}`,
		`{"binaryPath":"a","x":1}`, `{"binaryPath":"a","binaryPath":"b"}`, `{"binaryPath":" \t"}`,
		`{"binaryPath":"\ud800"}`, `{"binaryPath":"a"}{}`, `{"binaryPath":[`, "\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeSettings(body)
		if err != nil {
			assert.Equal(t, failure.Input, failure.KindOf(err))
			assert.LessOrEqual(t, len(err.Error()), 200, "errors stay bounded")
			return
		}
		require.True(t, jsontext.Value(body).IsValid(), "accepted invalid JSON %q", body)
		assert.Equal(t, strings.TrimSpace(got), got)
		assert.False(t, strings.ContainsFunc(got, unicode.IsControl))
		var ref struct {
			BinaryPath *string `json:"binaryPath"`
		}
		require.NoError(t, json.Unmarshal(body, &ref))
		want := ""
		if ref.BinaryPath != nil {
			want = strings.TrimSpace(*ref.BinaryPath)
		}
		assert.Equal(t, want, got)
	})
}
