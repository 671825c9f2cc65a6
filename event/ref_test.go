package event

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
)

// refMarshal is Event.MarshalJSONTo as it was before it built events in
// one buffer (commit 6665522): every name and value through WriteToken,
// Usage through json.MarshalEncode. The differential tests hold the new
// implementation to its bytes and errors.
func refMarshal(e Event, enc *jsontext.Encoder) error {
	w := refWriter{enc: enc}
	w.token(jsontext.BeginObject)
	w.str("type", string(e.Type))
	switch e.Type {
	case TypeInit:
		in := e.Init
		if in == nil {
			in = &Init{}
		}
		w.str("sessionId", in.SessionID)
		w.str("model", in.Model)
		w.str("cwd", in.CWD)
		w.str("permissionMode", in.PermissionMode)
		w.str("apiKeySource", in.APIKeySource)
	case TypeText:
		w.str("text", e.Text)
	case TypeThinking:
		w.str("subtype", e.Subtype)
		w.str("text", e.Text)
	case TypeToolStarted, TypeToolCompleted:
		t := e.Tool
		if t == nil {
			t = &Tool{}
		}
		w.str("callId", t.CallID)
		w.str("tool", t.Name)
		w.raw("args", t.Args)
		if e.Type == TypeToolCompleted {
			w.name("status")
			if t.Status == "" {
				w.token(jsontext.Null)
			} else {
				w.token(jsontext.String(t.Status))
			}
			w.raw("result", t.Result)
		}
	case TypeResult:
		r := e.Result
		if r == nil {
			r = &Result{}
		}
		w.str("subtype", r.Subtype)
		w.name("isError")
		w.token(jsontext.Bool(r.IsError))
		w.str("result", r.Text)
		w.int("durationMs", r.DurationMs)
		w.int("durationApiMs", r.DurationAPIMs)
		w.str("sessionId", r.SessionID)
		w.str("requestId", r.RequestID)
		w.str("model", r.Model)
		w.name("usage")
		if w.err == nil {
			w.err = json.MarshalEncode(enc, r.Usage)
		}
	case TypeWarning:
		wa := e.Warning
		if wa == nil {
			wa = &Warning{}
		}
		w.str("code", wa.Code)
		w.str("message", wa.Message)
		if wa.Retry != nil {
			w.name("retry")
			if w.err == nil {
				w.err = json.MarshalEncode(enc, wa.Retry)
			}
		}
	case TypeUnknown:
		u := e.Unknown
		if u == nil {
			u = &Unknown{}
		}
		w.str("eventType", u.Type)
		w.str("subtype", u.Subtype)
		w.raw("raw", u.Raw)
	case TypeFallbackEngaged:
		f := e.Fallback
		if f == nil {
			f = &Fallback{}
		}
		w.str("sessionPurpose", f.SessionPurpose)
		w.str("primaryAgent", f.PrimaryAgent)
		w.str("primaryProvider", f.PrimaryProvider)
		w.str("primaryModel", f.PrimaryModel)
		w.str("fallbackAgent", f.FallbackAgent)
		w.str("fallbackProvider", f.FallbackProvider)
		w.str("fallbackModel", f.FallbackModel)
		w.str("triggerPoint", f.TriggerPoint)
		w.int("promptIndex", int64(f.PromptIndex))
		w.str("failureCategory", f.FailureCategory)
		w.name("contextTransferred")
		w.token(jsontext.Bool(f.ContextTransferred))
	}
	w.token(jsontext.EndObject)
	return w.err
}

// refWriter writes the members of one object, keeping the first error.
type refWriter struct {
	enc *jsontext.Encoder
	err error
}

func (w *refWriter) token(t jsontext.Token) {
	if w.err == nil {
		w.err = w.enc.WriteToken(t)
	}
}

func (w *refWriter) name(k string) { w.token(jsontext.String(k)) }

func (w *refWriter) str(k, v string) {
	w.name(k)
	w.token(jsontext.String(v))
}

func (w *refWriter) int(k string, v int64) {
	w.name(k)
	w.token(jsontext.Int(v))
}

// raw writes k with the agent's value v, or null when v is empty.
func (w *refWriter) raw(k string, v jsontext.Value) {
	w.name(k)
	if len(v) == 0 {
		w.token(jsontext.Null)
	} else if w.err == nil {
		w.err = w.enc.WriteValue(v)
	}
}
