package jsonobj

import (
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
