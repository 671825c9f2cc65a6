package turn

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"reflect"
)

// Field is a member of an object whose members depend on its type (a
// message's content block, a Codex item), so that the object is read
// once, into one struct holding the members of every type, and a member
// its type does not use may hold anything: a value that does not fit T
// is held as its error (Err) instead of failing the read. The decoder
// then checks the members its type uses (Stream.Invalid).
//
// A Field is read within the line's own read (Stream.Unmarshal), on the
// line's own decoder, so that its error names the byte offset and JSON
// pointer in the line. Null reads as the zero T. Of a member given twice
// the last value stays, and the first error.
type Field[T any] struct {
	v   T
	err error
}

// UnmarshalJSONFrom reads the next value of dec, which must be valid
// JSON, into f: a value that does not fit T is read to its end and held
// as its error.
func (f *Field[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	depth, start := dec.StackDepth(), dec.InputOffset()
	err := json.UnmarshalDecode(dec, &f.v)
	serr, ok := errors.AsType[*json.SemanticError](err)
	if !ok {
		return err // nil, or the line is not valid JSON
	}
	if err := skipRest(dec, depth, start); err != nil {
		return err
	}
	if f.err == nil {
		f.err = serr
	}
	return nil
}

// skipRest reads what is left of a value json/v2 refused, which began at
// dec's depth and input offset start: json/v2 stops where it refused it,
// before the value or within an array or object it opened.
func skipRest(dec *jsontext.Decoder, depth int, start int64) error {
	if dec.StackDepth() == depth && dec.InputOffset() == start {
		return dec.SkipValue() // refused before reading any of it
	}
	for dec.StackDepth() > depth {
		var err error
		switch dec.PeekKind() {
		case '}', ']':
			_, err = dec.ReadToken()
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Value is the member's value: the zero T when it is absent, null or held
// an error.
func (f *Field[T]) Value() T {
	if f.err != nil {
		var zero T
		return zero
	}
	return f.v
}

// Err is the error json/v2 gave for the member's value, nil when it fit.
func (f *Field[T]) Err() error { return f.err }

// RawString, RawArray and RawObject are members passed on as the agent
// wrote them, quotes and escapes included, which must be a JSON string,
// array or object; null reads as absent (nil), any other kind is the
// error json/v2 gives for a Go string, slice or map.
type (
	RawString jsontext.Value
	RawArray  jsontext.Value
	RawObject jsontext.Value
)

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (r *RawString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readRaw(dec, (*jsontext.Value)(r), '"', reflect.TypeFor[string]())
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (r *RawArray) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readRaw(dec, (*jsontext.Value)(r), '[', reflect.TypeFor[[]any]())
}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (r *RawObject) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	return readRaw(dec, (*jsontext.Value)(r), '{', reflect.TypeFor[map[string]any]())
}

// readRaw reads the next value into dst, a copy, when it is of kind want,
// nil when it is null; a value of another kind is the error json/v2
// gives for a Go value of type goType (json/v2 adds where).
func readRaw(dec *jsontext.Decoder, dst *jsontext.Value, want jsontext.Kind, goType reflect.Type) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	switch k := v.Kind(); k {
	case 'n':
		*dst = nil
	case want:
		*dst = v.Clone()
	default:
		return &json.SemanticError{JSONKind: k, GoType: goType}
	}
	return nil
}

// StringKind is a member of which only the kind is checked, its text not
// kept (nothing to allocate): a JSON string, or null; any other kind is
// the error json/v2 gives for a Go string (json/v2 adds where).
type StringKind struct{}

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (*StringKind) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if k := v.Kind(); k != '"' && k != 'n' {
		return &json.SemanticError{JSONKind: k, GoType: reflect.TypeFor[string]()}
	}
	return nil
}
