package turn

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"reflect"
	"strings"
)

// Member is a member of an object UnmarshalTyped reads first: its name,
// and the string it is read into.
type Member struct {
	Name  string
	Value *string
}

// UnmarshalTyped reads the next value of dec, an object whose members
// depend on its type (a message's content block, an item), so that a
// member its type does not use may hold anything. It reads the object
// twice: first member by member, the members head names each into its
// Value as json/v2 reads a string field (null reads as "", another kind
// is an error; of a member given twice the last stays), every other
// member skipped; then, when members returns a Go value for what the
// head holds (the struct of the members its type uses), whole into it.
// A value that is not an object is an error.
//
// dec must be reading line: the decoder Stream.Unmarshal reads it with,
// or the one json/v2 hands an UnmarshalJSONFrom method within that call.
// The second read takes the object's bytes from line, and every error
// names its byte offset and JSON pointer in the line, as an error of the
// line's own members does.
func UnmarshalTyped(dec *jsontext.Decoder, line []byte, head []Member, members func() any) error {
	if k := dec.PeekKind(); k != '{' {
		return notObject(dec, k)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	start, depth := dec.InputOffset()-1, dec.StackDepth()
	if err := readHead(dec, head); err != nil {
		return wholeError(dec, line[start:], start, depth, err)
	}
	v := members()
	if v == nil {
		return nil
	}
	err := json.Unmarshal(line[start:dec.InputOffset()], v, dec.Options())
	if serr, ok := errors.AsType[*json.SemanticError](err); ok {
		serr.ByteOffset += start
		serr.JSONPointer = dec.StackPointer() + serr.JSONPointer
	}
	return err
}

// readHead reads the members of an object after its '{' up to its '}':
// those head names into their Values, the others skipped.
func readHead(dec *jsontext.Decoder, head []Member) error {
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if v := headValue(head, name); v != nil {
			err = readString(dec, v)
		} else {
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// wholeError is the error of the object at depth depth of dec, which
// starts rest (line from offset start on), once reading its members
// failed with err. A broken object is the syntax error json/v2 reports
// when it reads a nested object whole (for a json.Unmarshaler): the same
// offset for the same break, and before a member of another kind.
func wholeError(dec *jsontext.Decoder, rest []byte, start int64, depth int, err error) error {
	_, rerr := jsontext.NewDecoder(bytes.NewReader(rest), dec.Options()).ReadValue()
	serr, ok := errors.AsType[*jsontext.SyntacticError](rerr)
	if !ok {
		return err
	}
	object := dec.StackPointer() // within the object: its pointer has depth-1 tokens
	for strings.Count(string(object), "/") >= depth {
		object = object.Parent()
	}
	serr.ByteOffset += start
	serr.JSONPointer = object + serr.JSONPointer
	return serr
}

// headValue is the Value of the member of head named name, nil for none.
func headValue(head []Member, name jsontext.Token) *string {
	n := name.String()
	for _, m := range head {
		if n == m.Name {
			return m.Value
		}
	}
	return nil
}

// readString reads the next value of dec into s as json/v2 reads a string.
func readString(dec *jsontext.Decoder, s *string) error {
	if dec.PeekKind() != '"' {
		return json.UnmarshalDecode(dec, s)
	}
	tok, err := dec.ReadToken()
	*s = tok.String()
	return err
}

// notObject reads the next value of dec, of kind k, and returns the error
// json/v2 gives for a value that is not an object where a struct is read.
func notObject(dec *jsontext.Decoder, k jsontext.Kind) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return &json.SemanticError{ByteOffset: dec.InputOffset() - int64(len(v)), JSONPointer: dec.StackPointer(),
		JSONKind: k, GoType: reflect.TypeFor[map[string]any]()}
}
