package phrases

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFirst(t *testing.T) {
	table := []Entry[string]{
		{"local", []string{"keychain is locked"}},
		{"network", []string{"econnrefused", "proxy error"}},
		{"auth", []string{"unauthorized"}},
	}
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", "none"},
		{"no phrase", "all is well", "none"},
		{"case is ignored", "Error: ECONNREFUSED 127.0.0.1", "network"},
		{"escapes inside a phrase are dropped", "\x1b[31mUnauth\x1b[0morized", "auth"},
		{"escapes around a phrase", "\x1b[31mUnauthorized\x1b[0m", "auth"},
		{"the first entry wins", "401 Unauthorized behind a proxy error", "network"},
		{"whatever the order in the text", "proxy error; keychain is locked", "local"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, First(tt.text, table, "none"))
		})
	}
}
