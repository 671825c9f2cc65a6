package turn

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// typedLine is a line with one object x whose members depend on its kind:
// a name for every kind, a number n for kind "n".
type typedLine struct {
	X *struct {
		Kind string        `json:"kind"`
		Name Field[string] `json:"name"`
		N    Field[int]    `json:"n"` // kind "n"
	} `json:"x"`
}

func TestField(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		kind, text string
		n          int
		err        string // of the members kind uses
		readErr    string // of the line's read
	}{
		{name: "the members of its type", line: `{"x":{"name":"a","kind":"n","n":1,"other":[{"kind":"s"}]}}`, kind: "n", text: "a", n: 1},
		{name: "another type's members hold anything", line: `{"x":{"kind":"s","n":"one"}}`, kind: "s"},
		{name: "a member given twice: the last stays", line: `{"x":{"kind":"n","n":1,"n":2}}`, kind: "n", n: 2},
		{name: "a member given twice: the first error stays", line: `{"x":{"kind":"n","n":"one","n":2}}`,
			err: `byte offset 21: "x" event: field "/x/n" is a string, not an integer in range`},
		{name: "escaped names and values", line: `{"x":{"\u006bind":"\u006e","n":3}}`, kind: "n", n: 3},
		{name: "null reads as the zero value", line: `{"x":{"kind":"n","name":null,"n":4}}`, kind: "n", n: 4},
		{name: "a member of its type of another kind", line: `{"x":{"kind":"n","n":"one"}}`,
			err: `byte offset 21: "x" event: field "/x/n" is a string, not an integer in range`},
		{name: "the first error in the line, not in the list", line: `{"x":{"kind":"n","n":"one","name":5}}`,
			err: `byte offset 21: "x" event: field "/x/n" is a string, not an integer in range`},
		{name: "out of range", line: `{"x":{"kind":"n","n":1e400}}`,
			err: `byte offset 21: "x" event: field "/x/n" is a number, not an integer in range`},
		{name: "cut", line: `{"x":{"kind":"n","n":1`, readErr: "byte offset 22: not valid JSON"},
		{name: "broken within a member", line: `{"x":{"kind":"n","n":[1,}}}`, readErr: "byte offset 24: not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream()
			s.Begin()
			line, ok, err := s.Next([]byte(tt.line))
			require.True(t, ok)
			require.NoError(t, err)
			var v typedLine
			_, err = s.Unmarshal(line, &v, "x")
			if tt.readErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "line 1, "+tt.readErr)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, v.X)
			errs := []error{v.X.Name.Err()}
			if v.X.Kind == "n" {
				errs = append(errs, v.X.N.Err())
			}
			err = s.Invalid(line, "x", errs...)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "line 1, "+tt.err)
				assert.Zero(t, v.X.N.Value(), "a value that did not fit reads as zero")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.kind, v.X.Kind)
			if tt.kind == "n" {
				assert.Equal(t, tt.text, v.X.Name.Value())
				assert.Equal(t, tt.n, v.X.N.Value())
			}
		})
	}
}
