package turn

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
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
			s.started = true
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

// refField is Field as it read a member before it read on the line's
// decoder: the value whole, then a json.Unmarshal of its own, its error
// moved to the line's offset and pointer. Field must read as it did.
type refField[T any] struct {
	v   T
	err error
}

func (f *refField[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	err = json.Unmarshal(raw, &f.v, dec.Options())
	if err == nil || f.err != nil {
		return nil
	}
	if serr, ok := errors.AsType[*json.SemanticError](err); ok {
		serr.ByteOffset += dec.InputOffset() - int64(len(raw))
		serr.JSONPointer = dec.StackPointer() + serr.JSONPointer
	}
	f.err = err
	return nil
}

// fieldPair reads a member twice, then one after it, with Field and refField.
type fieldPair[T any] struct {
	X struct {
		A     Field[T] `json:"a"`
		After string   `json:"after"`
	} `json:"x"`
	Ref struct {
		A     refField[T] `json:"a"`
		After string      `json:"after"`
	} `json:"ref"`
}

func checkFieldLikeRef[T any](t *testing.T, first, second string) {
	t.Helper()
	obj := `{"a":` + first + `,"a":` + second + `,"after":"z"}`
	line := []byte(`{"x":` + obj + `,"ref":` + obj + `}`)
	var p fieldPair[T]
	err := json.Unmarshal(line, &p, UnmarshalOptions())
	require.NoError(t, err, "%s", line)
	assert.Equal(t, "z", p.X.After, "%s: the member after", line)
	assert.Equal(t, p.Ref.A.v, p.X.A.v, "%s", line)
	if p.Ref.A.err == nil {
		assert.NoError(t, p.X.A.err, "%s", line)
		return
	}
	want := p.Ref.A.err.(*json.SemanticError)
	got, ok := p.X.A.err.(*json.SemanticError)
	require.True(t, ok, "%s: %v", line, p.X.A.err)
	// The same place in each half of the line.
	assert.Equal(t, want.ByteOffset-int64(len(`{"x":`+obj+`,"ref":`))+int64(len(`{"x":`)), got.ByteOffset, "%s", line)
	assert.Equal(t, strings.Replace(string(want.JSONPointer), "/ref/", "/x/", 1), string(got.JSONPointer), "%s", line)
	assert.Equal(t, want.JSONKind, got.JSONKind, "%s", line)
	assert.Equal(t, want.GoType, got.GoType, "%s", line)
	assert.Equal(t, errors.Is(want, strconv.ErrRange), errors.Is(got, strconv.ErrRange), "%s", line)
}

// TestFieldReadsAsBefore: a Field reads every kind of value into each type
// the decoders use as a read of the value alone did, and the line goes on.
func TestFieldReadsAsBefore(t *testing.T) {
	values := []string{`1`, `-1.5`, `1e400`, `"s"`, `"\u00e9\ud800"`, `true`, `null`, `{}`, `[]`,
		`{"a":[1,{"b":2}],"c":"d"}`, `[1,[2,{"e":[]}],"f"]`, `{"a":1,"a":2}`}
	for _, first := range values {
		for _, second := range values {
			checkFieldLikeRef[string](t, first, second)
			checkFieldLikeRef[*string](t, first, second)
			checkFieldLikeRef[bool](t, first, second)
			checkFieldLikeRef[int](t, first, second)
			checkFieldLikeRef[*int64](t, first, second)
			checkFieldLikeRef[jsontext.Value](t, first, second)
			checkFieldLikeRef[RawString](t, first, second)
			checkFieldLikeRef[RawArray](t, first, second)
			checkFieldLikeRef[RawObject](t, first, second)
		}
	}
}

// TestStringKindReadsAsString: a StringKind member fails a line where a
// string member did, with the same protocol error.
func TestStringKindReadsAsString(t *testing.T) {
	for _, v := range []string{`"s"`, `"\u00e9\ud800"`, `null`, `1`, `-1.5`, `true`, `{}`, `[]`, `{"a":[1]}`, `[1,{"b":2}]`, `[1,}`} {
		line := []byte(`{"x":{"n":1,"a":` + v + `,"b":2}}`)
		var want, got error
		{
			s := newStream()
			s.started = true
			var w struct {
				X struct {
					A string `json:"a"`
				} `json:"x"`
			}
			_, want = s.Unmarshal(line, &w, "x")
		}
		{
			s := newStream()
			s.started = true
			var w struct {
				X struct {
					A StringKind `json:"a"`
				} `json:"x"`
			}
			_, got = s.Unmarshal(line, &w, "x")
		}
		if want == nil {
			assert.NoError(t, got, "%s", line)
			continue
		}
		require.Error(t, got, "%s", line)
		assert.Equal(t, want.Error(), got.Error(), "%s", line)
		assert.Equal(t, want.(*failure.Error).Detail, got.(*failure.Error).Detail, "%s", line)
	}
}
