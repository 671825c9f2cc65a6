package event

import (
	"encoding/json/jsontext"
	"encoding/json/v2"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fastOptions reports whether, under opts, one WriteValue of the object
// appendJSON builds for an event of type t writes the bytes that
// marshalTokens writes. Raw objects reordered would reorder the event's
// own members; canonical raw numbers would rewrite its integers; and
// Usage is written by hand only when no marshal option could change what
// json.MarshalEncode writes for it.
func fastOptions(opts jsontext.Options, t Type) bool {
	if v, _ := json.GetOption(opts, jsontext.ReorderRawObjects); v {
		return false
	}
	switch t {
	case TypeResult, TypeFallbackEngaged:
		if v, _ := json.GetOption(opts, jsontext.CanonicalizeRawInts); v {
			return false
		}
		if t == TypeResult {
			if v, _ := json.GetOption(opts, json.StringifyNumbers); v {
				return false
			}
			if v, _ := json.GetOption(opts, json.OmitZeroStructFields); v {
				return false
			}
			if _, ok := json.GetOption(opts, json.WithMarshalers); ok {
				return false
			}
		}
	}
	return true
}

// appendJSON appends e as one compact JSON object with marshalTokens's
// members. It reports false, leaving the caller to write e token by token,
// when a string is not simple (appendString), or with quoted, not one
// quoteString writes.
func (e Event) appendJSON(b []byte, quoted bool) ([]byte, bool) {
	ok := true
	str := func(prefix, s string) {
		b = append(b, prefix...)
		if quoted {
			b, ok = quoteString(b, s, ok)
		} else {
			b, ok = appendString(b, s, ok)
		}
	}
	raw := func(prefix string, v jsontext.Value) {
		b = append(b, prefix...)
		switch {
		case len(v) == 0:
			b = append(b, "null"...)
		case !quoted && !v.IsValid(rawOptions):
			// Not one value: pasted in, it could carry on the object
			// ("0,\"type\":\"text\"") and pass the check of the whole.
			// The Writer (quoted) checks its raw values itself.
			ok = false
		default:
			b = append(b, v...)
		}
	}
	switch e.Type {
	case TypeInit:
		in := e.Init
		if in == nil {
			in = &Init{}
		}
		str(`{"type":"init","sessionId":`, in.SessionID)
		str(`,"model":`, in.Model)
		str(`,"cwd":`, in.CWD)
		str(`,"permissionMode":`, in.PermissionMode)
		str(`,"apiKeySource":`, in.APIKeySource)
	case TypeText:
		str(`{"type":"text","text":`, e.Text)
	case TypeThinking:
		str(`{"type":"thinking","subtype":`, e.Subtype)
		str(`,"text":`, e.Text)
	case TypeToolStarted, TypeToolCompleted:
		t := e.Tool
		if t == nil {
			t = &Tool{}
		}
		if e.Type == TypeToolStarted {
			str(`{"type":"tool_started","callId":`, t.CallID)
		} else {
			str(`{"type":"tool_completed","callId":`, t.CallID)
		}
		str(`,"tool":`, t.Name)
		raw(`,"args":`, t.Args)
		if e.Type == TypeToolCompleted {
			if t.Status == "" {
				b = append(b, `,"status":null`...)
			} else {
				str(`,"status":`, t.Status)
			}
			raw(`,"result":`, t.Result)
		}
	case TypeResult:
		r := e.Result
		if r == nil {
			r = &Result{}
		}
		str(`{"type":"result","subtype":`, r.Subtype)
		b = append(b, `,"isError":`...)
		b = strconv.AppendBool(b, r.IsError)
		str(`,"result":`, r.Text)
		b = append(b, `,"durationMs":`...)
		b = strconv.AppendInt(b, r.DurationMs, 10)
		b = append(b, `,"durationApiMs":`...)
		b = strconv.AppendInt(b, r.DurationAPIMs, 10)
		str(`,"sessionId":`, r.SessionID)
		str(`,"requestId":`, r.RequestID)
		str(`,"model":`, r.Model)
		b = append(b, `,"usage":{"reported":`...)
		b = strconv.AppendBool(b, r.Usage.Reported)
		// The counts in Usage's order, each omitted when nil (omitzero).
		for _, c := range [...]struct {
			name string
			n    *int64
		}{
			{`,"inputTokens":`, r.Usage.InputTokens},
			{`,"outputTokens":`, r.Usage.OutputTokens},
			{`,"cacheReadTokens":`, r.Usage.CacheReadTokens},
			{`,"cacheWriteTokens":`, r.Usage.CacheWriteTokens},
		} {
			if c.n != nil {
				b = append(b, c.name...)
				b = strconv.AppendInt(b, *c.n, 10)
			}
		}
		b = append(b, '}')
	case TypeWarning:
		wa := e.Warning
		if wa == nil {
			wa = &Warning{}
		}
		str(`{"type":"warning","code":`, wa.Code)
		str(`,"message":`, wa.Message)
		if wa.Retry != nil {
			ok = false // written by the encoder, a struct of its own
		}
	case TypeUnknown:
		u := e.Unknown
		if u == nil {
			u = &Unknown{}
		}
		str(`{"type":"unknown","eventType":`, u.Type)
		str(`,"subtype":`, u.Subtype)
		raw(`,"raw":`, u.Raw)
	case TypeFallbackEngaged:
		f := e.Fallback
		if f == nil {
			f = &Fallback{}
		}
		str(`{"type":"cross-runtime-fallback-engaged","sessionPurpose":`, f.SessionPurpose)
		str(`,"primaryAgent":`, f.PrimaryAgent)
		str(`,"primaryProvider":`, f.PrimaryProvider)
		str(`,"primaryModel":`, f.PrimaryModel)
		str(`,"fallbackAgent":`, f.FallbackAgent)
		str(`,"fallbackProvider":`, f.FallbackProvider)
		str(`,"fallbackModel":`, f.FallbackModel)
		str(`,"triggerPoint":`, f.TriggerPoint)
		b = append(b, `,"promptIndex":`...)
		b = strconv.AppendInt(b, int64(f.PromptIndex), 10)
		str(`,"failureCategory":`, f.FailureCategory)
		b = append(b, `,"contextTransferred":`...)
		b = strconv.AppendBool(b, f.ContextTransferred)
	default:
		str(`{"type":`, string(e.Type))
	}
	b = append(b, '}')
	return b, ok
}

// rawOptions check that a raw value is one value, and no more: its
// strings and names are the encoder's to check.
var rawOptions = json.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// simple marks the bytes a string may hold for appendString to write it:
// printable ASCII but '"' and '\\'.
var simple = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s quoted, and ok, when s is a simple JSON string
// (printable ASCII but '"' and '\\': what WriteValue copies after one
// quick scan, and WriteToken writes as is); else it reports false, for
// the event to go token by token: WriteToken quotes any other string in
// one pass, where WriteValue would scan it thrice.
func appendString(b []byte, s string, ok bool) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if !simple[s[i]] {
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	b = append(b, '"')
	return b, ok
}

// quoteString appends s quoted as NewEncoder's encoder writes the string
// token s, and ok, when s is valid UTF-8 without U+2028 or U+2029 (which
// that encoder escapes and jsontext.AppendQuote does not); else it reports
// false.
func quoteString(b []byte, s string, ok bool) ([]byte, bool) {
	if b2, plain := appendString(b, s, true); plain {
		return b2, ok
	}
	if strings.Contains(s, "\u2028") || strings.Contains(s, "\u2029") {
		return b, false
	}
	b2, err := jsontext.AppendQuote(b, s)
	if err != nil { // invalid UTF-8
		return b, false
	}
	return b2, ok
}
