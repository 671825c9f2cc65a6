package jsonobj

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMerge(t *testing.T) {
	type a struct {
		X int    `json:"x"`
		Y string `json:"y"`
	}
	type b struct {
		Z bool `json:"z"`
		X int  `json:"x"`
	}
	got, err := Merge(a{1, "<&>"}, b{true, 2})
	require.NoError(t, err)
	assert.Equal(t, `{"x":2,"y":"<&>","z":true}`, string(got))

	got, err = Merge()
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(got))

	_, err = Merge(a{}, []int{1})
	assert.ErrorContains(t, err, "does not marshal to an object")
}

// FuzzMerge: merging any two JSON objects gives one valid object holding
// each name once, the later value winning.
func FuzzMerge(f *testing.F) {
	f.Add(`{"a":1}`, `{"b":[true,null]}`)
	f.Add(`{"a":1,"b":2}`, `{"a":"x"}`)
	f.Add(`{}`, `{"\u00e9":{"n":{}}}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var x, y map[string]jsontext.Value
		if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil || x == nil || y == nil {
			return
		}
		got, err := Merge(jsontext.Value(a), jsontext.Value(b))
		require.NoError(t, err)
		var merged map[string]jsontext.Value
		require.NoError(t, json.Unmarshal(got, &merged), "%s", got)
		assert.Len(t, merged, len(x)+len(y)-common(x, y))
		for k, v := range y {
			assert.Equal(t, string(compact(t, v)), string(compact(t, merged[k])), k)
		}
	})
}

func common(x, y map[string]jsontext.Value) int {
	n := 0
	for k := range x {
		if _, ok := y[k]; ok {
			n++
		}
	}
	return n
}

func compact(t *testing.T, v jsontext.Value) jsontext.Value {
	v = v.Clone()
	require.NoError(t, v.Compact())
	return v
}
