package supervise

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTailRing(t *testing.T) {
	tests := []struct {
		name   string
		size   int
		writes []string
		want   string
	}{
		{"empty", 4, nil, ""},
		{"under size", 8, []string{"ab", "cd"}, "abcd"},
		{"exactly size", 4, []string{"ab", "cd"}, "abcd"},
		{"wraps", 4, []string{"abc", "def"}, "cdef"},
		{"one write larger than size", 4, []string{"0123456789"}, "6789"},
		{"many small writes", 3, []string{"a", "b", "c", "d", "e"}, "cde"},
		{"disabled", 0, []string{"abc"}, ""},
		{"cut character dropped", 4, []string{"x\u00e9\u00e9"}, "\u00e9\u00e9"},
		{"whole character kept", 3, []string{"\u20ac\u20ac"}, "\u20ac"},
		{"cut character at start dropped", 4, []string{"\u20ac\u20ac"}, "\u20ac"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTailRing(tt.size)
			for _, w := range tt.writes {
				n, err := r.Write([]byte(w))
				assert.NoError(t, err)
				assert.Equal(t, len(w), n)
			}
			assert.Equal(t, tt.want, r.String())
		})
	}
}

// FuzzTailRing checks the ring against the last size bytes of everything
// written (modulo the UTF-8 trim at the cut).
func FuzzTailRing(f *testing.F) {
	f.Add([]byte("hello world"), 4, 3)
	f.Fuzz(func(t *testing.T, data []byte, size, chunk int) {
		if size <= 0 || size > 1<<12 || chunk <= 0 {
			return
		}
		r := newTailRing(size)
		for rest := data; len(rest) > 0; {
			n := min(chunk, len(rest))
			_, _ = r.Write(rest[:n])
			rest = rest[n:]
		}
		want := data
		if len(want) > size {
			want = want[len(want)-size:]
		}
		got := r.String()
		assert.LessOrEqual(t, len(want)-len(got), 3)
		assert.Equal(t, string(want[len(want)-len(got):]), got)
	})
}
