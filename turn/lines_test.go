package turn

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLineWriter(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"lines in one write", []string{"a\nb\n"}, []string{"a", "b"}},
		{"a line over writes", []string{"ab", "c\nd", "e\n"}, []string{"abc", "de"}},
		{"CRLF", []string{"a\r\nb\r", "\n"}, []string{"a", "b"}},
		{"a last line without its end is not a line", []string{"a\nlast"}, []string{"a"}},
		{"an empty line", []string{"\n\n"}, []string{"", ""}},
		{"a long line is cut", []string{strings.Repeat("x", 5), strings.Repeat("y", 5) + "\nz\n"}, []string{"xxxxxyyy", "z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			w := &lineWriter{max: 8, line: func(b []byte) { got = append(got, string(b)) }}
			for _, s := range tt.writes {
				n, err := w.Write([]byte(s))
				assert.NoError(t, err)
				assert.Equal(t, len(s), n)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
