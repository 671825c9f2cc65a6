package discovery_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/discovery"
)

func TestResolutionExecutable(t *testing.T) {
	tests := []struct {
		name string
		res  discovery.Resolution
		want string
	}{
		{"a file", discovery.Resolution{Path: "/usr/bin/tool"}, "/usr/bin/tool"},
		{"a link to a versioned build", discovery.Resolution{Path: "/home/u/.local/bin/tool",
			Links: []string{"/home/u/.local/bin/tool", "/home/u/.local/share/tool/versions/2/tool"}}, "/home/u/.local/share/tool/versions/2/tool"},
		{"a chain of links", discovery.Resolution{Path: "/a", Links: []string{"/a", "/b", "/c"}}, "/c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.res.Executable())
		})
	}
}
