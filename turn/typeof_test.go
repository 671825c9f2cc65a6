package turn

import (
	"encoding/json/jsontext"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// typedLine is a line with one object x that UnmarshalTyped reads: its
// kind and name first, then its number n when its kind is "n".
type typedLine struct {
	X typedObject `json:"x"`
}

type typedObject struct {
	line       []byte
	Kind, Name string
	N          *struct {
		N int `json:"n"`
	}
}

func (o *typedObject) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	head := []Member{{Name: "kind", Value: &o.Kind}, {Name: "name", Value: &o.Name}}
	return UnmarshalTyped(dec, o.line, head, func() any {
		if o.Kind != "n" {
			return nil
		}
		o.N = new(struct {
			N int `json:"n"`
		})
		return o.N
	})
}

func TestUnmarshalTyped(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		kind, text string
		n          int // -1: not read
		err        string
	}{
		{name: "head, then the members of its type", line: `{"x":{"name":"a","kind":"n","n":1,"other":[{"kind":"s"}]}}`, kind: "n", text: "a", n: 1},
		{name: "another type's members hold anything", line: `{"x":{"kind":"s","n":"one"}}`, kind: "s", n: -1},
		{name: "a head member given twice: the last stays", line: `{"x":{"kind":"s","kind":"n","n":2}}`, kind: "n", n: 2},
		{name: "escaped names and values", line: `{"x":{"\u006bind":"\u006e","n":3}}`, kind: "n", n: 3},
		{name: "null reads as empty", line: `{"x":{"kind":"n","name":null,"n":4}}`, kind: "n", n: 4},
		{name: "a member of its type of another kind", line: `{"x":{"kind":"n","n":"one"}}`,
			err: `byte offset 21: "x" event: field "/x/n" is a string, not an integer in range`},
		{name: "a head member that is no string", line: `{"x":{"kind":5}}`,
			err: `byte offset 13: "x" event: field "/x/kind" is a number, not a string`},
		{name: "not an object", line: `{"x":[1]}`, err: `byte offset 5: "x" event: field "/x" is an array, not an object`},
		{name: "null is not an object", line: `{"y":1, "x":null}`, err: `byte offset 12: "x" event: field "/x" is null, not an object`},
		{name: "cut", line: `{"x":{"kind":"n","n":1`, err: "byte offset 22: not valid JSON"},
		{name: "broken as an object read whole", line: `{"x":{"kind":"n",n":1}}`, err: "byte offset 17: not valid JSON"},
		{name: "broken after a head member of another kind", line: `{"x":{"kind":0x}}`, err: "byte offset 14: not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream()
			s.Begin()
			line, ok, err := s.Next([]byte(tt.line))
			require.True(t, ok)
			require.NoError(t, err)
			v := typedLine{X: typedObject{line: line}}
			_, err = s.Unmarshal(line, &v, "x")
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "line 1, "+tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.kind, v.X.Kind)
			assert.Equal(t, tt.text, v.X.Name)
			if tt.n < 0 {
				assert.Nil(t, v.X.N)
			} else {
				require.NotNil(t, v.X.N)
				assert.Equal(t, tt.n, v.X.N.N)
			}
		})
	}
}
