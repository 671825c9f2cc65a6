package review

import (
	"encoding/json/jsontext"
	"encoding/json/v2"

	"github.com/cursorkit/cursorkit/failure"
)

// CheckVerdict is a review task's check (task.Options.Check): the verdict
// in a reply's text, strictly validated by ParseVerdict, as one JSON
// object. A reply without a valid verdict is ParseVerdict's error.
func CheckVerdict(text string) (jsontext.Value, error) {
	v, err := ParseVerdict(text)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, failure.Wrap(failure.Unclassified, err, "encoding the verdict")
	}
	return data, nil
}
