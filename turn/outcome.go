package turn

import (
	"encoding/json/jsontext"
	"encoding/json/v2"

	"github.com/cursorkit/cursorkit/event"
)

// MarshalJSONTo writes the outcome as the last line of `cursorkit run
// --json`, its members in this order:
//
//	{"type":"outcome","status","kind","message","sessionId","model","usage","warnings"}
//
// kind is null when done; message is absent when done; sessionId is null
// when the agent reported none; model is absent when unknown; warnings is
// always an array. Process is not written.
func (o Outcome) MarshalJSONTo(enc *jsontext.Encoder) error {
	var kind, session *string
	if o.Kind != "" {
		k := string(o.Kind)
		kind = &k
	}
	if o.SessionID != "" {
		session = &o.SessionID
	}
	warnings := o.Warnings
	if warnings == nil {
		warnings = []event.Warning{}
	}
	return json.MarshalEncode(enc, struct {
		Type      string          `json:"type"`
		Status    string          `json:"status"`
		Kind      *string         `json:"kind"`
		Message   string          `json:"message,omitzero"`
		SessionID *string         `json:"sessionId"`
		Model     string          `json:"model,omitzero"`
		Usage     event.Usage     `json:"usage"`
		Warnings  []event.Warning `json:"warnings"`
	}{"outcome", o.Status, kind, o.Message, session, o.Model, o.Usage, warnings})
}
