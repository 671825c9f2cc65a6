// Package jsonobj joins JSON objects: the members of several values, each
// marshalling to an object, written as one object, as `cursorkit status
// --json` shows a probe report and an auth verdict side by side.
package jsonobj

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
)

// Merge marshals each value (json/v2, honouring MarshalJSON methods) and
// returns one object holding every member, in order; a member of a later
// value replaces an earlier one of the same name in place. A value that is
// not an object is an error.
func Merge(values ...any) (jsontext.Value, error) {
	type member struct {
		name  string
		value jsontext.Value
	}
	var members []member
	index := map[string]int{}
	for _, v := range values {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		dec := jsontext.NewDecoder(bytes.NewReader(raw))
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if tok.Kind() != '{' {
			return nil, fmt.Errorf("jsonobj: %T does not marshal to an object", v)
		}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // read before the next call voids tok
			value, err := dec.ReadValue()
			if err != nil {
				return nil, err
			}
			m := member{name: name, value: value.Clone()}
			if i, ok := index[m.name]; ok {
				members[i] = m
				continue
			}
			index[m.name] = len(members)
			members = append(members, m)
		}
	}
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out)
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return nil, err
	}
	for _, m := range members {
		if err := enc.WriteToken(jsontext.String(m.name)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(m.value); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(out.Bytes()), nil
}
