package claude

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"math"

	"github.com/cursorkit/cursorkit/event"
)

// This file is the first of the two ways a line is read (decode.go holds
// the second, the member walk): one json.Unmarshal into wireLine, which
// holds every member any event type uses, each with the Go type of the
// kind Claude Code sends. It reads every well-formed line of a normal
// turn. It refuses what it cannot read exactly as the walk would (a
// member name given twice, a member of another kind, a null block, a
// number out of range, anything that is not an object), even when the
// line's type does not use that member: the Decoder then reads the line
// with the walk, which gives the verdict, the byte offset of the culprit
// or the events of a line the protocol allows. Both read values with the
// same json/v2 options, so when this way succeeds it yields what the walk
// would: FuzzFastSlow holds them to that.

// wireLine is one line read the first way. A Decoder keeps one and reads
// every line into it, so the blocks keep their capacity from line to line.
type wireLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`

	// system/init
	Model          string `json:"model"`
	CWD            string `json:"cwd"`
	PermissionMode string `json:"permissionMode"`
	APIKeySource   string `json:"apiKeySource"`

	// system/api_retry; error is an assistant event's too
	Attempt      optNumber `json:"attempt"`
	MaxRetries   optNumber `json:"max_retries"`
	RetryDelayMs optNumber `json:"retry_delay_ms"`
	ErrorStatus  optNumber `json:"error_status"`
	Error        string    `json:"error"`

	// assistant, user
	Message wireMessage `json:"message"`

	// result
	IsError       bool       `json:"is_error"`
	Result        string     `json:"result"`
	DurationMs    optNumber  `json:"duration_ms"`
	DurationAPIMs optNumber  `json:"duration_api_ms"`
	Errors        wireErrors `json:"errors"`
	Usage         wireUsage  `json:"usage"`
}

// wireMessage is the message of an assistant or user event.
type wireMessage struct {
	Content wireContent `json:"content"`
}

// wireContent is message.content: an array of blocks, or a string (a
// prompt's echo) or null, which have none.
type wireContent struct {
	blocks []wireBlock
}

// wireBlock is one element of message.content: the members of every
// block type the Decoder reads.
type wireBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`     // text
	Thinking string `json:"thinking"` // thinking
	// tool_use
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input jsontext.Value `json:"input"`
	// tool_result
	ToolUseID string         `json:"tool_use_id"`
	IsError   bool           `json:"is_error"`
	Content   jsontext.Value `json:"content"`
}

// errShape makes json.Unmarshal fail: the walk then reads the line.
var errShape = errors.New("claude: not the shape of a Claude Code event")

var (
	// fastOptions refuse a member name given twice: the walk keeps the
	// last value.
	fastOptions = json.JoinOptions(jsontext.AllowInvalidUTF8(true))
	// numberOptions read a number as the walk reads it.
	numberOptions = readOptions()
)

func (c *wireContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	blocks := c.blocks[:0]
	c.blocks = blocks
	switch dec.PeekKind() {
	case 'n', '"':
		_, err := dec.ReadToken()
		return err
	case '[':
	default:
		return errShape
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != ']' {
		// json/v2 would read null as an empty block: the protocol wants an
		// object.
		if dec.PeekKind() != '{' {
			return errShape
		}
		blocks = append(blocks, wireBlock{})
		c.blocks = blocks
		if err := json.UnmarshalDecode(dec, &blocks[len(blocks)-1]); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// optNumber is a number that may be absent or null, read as the walk's
// reader.number reads it.
type optNumber struct {
	n  float64
	ok bool
}

func (o *optNumber) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*o = optNumber{}
	v, err := dec.ReadValue()
	switch {
	case err != nil:
		return err
	case v.Kind() == 'n':
		return nil
	case v.Kind() != '0':
		return errShape
	}
	if json.Unmarshal(v, &o.n, numberOptions) != nil || math.IsInf(o.n, 0) {
		return errShape
	}
	o.ok = true
	return nil
}

// integer is the number as reader.integer returns it.
func (o optNumber) integer() (int64, bool) {
	if !o.ok {
		return 0, false
	}
	return clampInt(o.n), true
}

// wireErrors is a result's errors: an array of strings (null ones
// skipped, as empty ones are), or null.
type wireErrors struct {
	list []string
}

func (e *wireErrors) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*e = wireErrors{}
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadToken()
		return err
	case '[':
	default:
		return errShape
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for {
		switch dec.PeekKind() {
		case ']':
			_, err := dec.ReadToken()
			return err
		case 'n':
			if _, err := dec.ReadToken(); err != nil {
				return err
			}
		case '"':
			var s string
			if err := json.UnmarshalDecode(dec, &s); err != nil {
				return err
			}
			if s != "" {
				e.list = append(e.list, s)
			}
		default:
			return errShape
		}
	}
}

// wireUsage is a result's usage; reported is false when it is absent or
// null.
type wireUsage struct {
	reported bool
	counts   wireCounts
}

type wireCounts struct {
	InputTokens      optNumber `json:"input_tokens"`
	OutputTokens     optNumber `json:"output_tokens"`
	CacheReadTokens  optNumber `json:"cache_read_input_tokens"`
	CacheWriteTokens optNumber `json:"cache_creation_input_tokens"`
}

func (u *wireUsage) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*u = wireUsage{}
	switch dec.PeekKind() {
	case 'n':
		_, err := dec.ReadToken()
		return err
	case '{':
	default:
		return errShape
	}
	u.reported = true
	return json.UnmarshalDecode(dec, &u.counts)
}

// lineReader reads lines the first way, reusing its wireLine.
type lineReader struct {
	w wireLine
}

// decode reads line (without its terminator) the first way; nil when it
// cannot, and the walk must. The result is valid until the next call;
// its strings and values do not view line.
func (r *lineReader) decode(line []byte) *wireLine {
	blocks := r.w.Message.Content.blocks[:0]
	r.w = wireLine{}
	r.w.Message.Content.blocks = blocks
	// json.Unmarshal reads a null into a struct without complaint: only an
	// object may be an event.
	if !isObject(line) || json.Unmarshal(line, &r.w, fastOptions) != nil {
		return nil
	}
	return &r.w
}

// isObject reports whether line starts (after JSON whitespace) like an
// object.
func isObject(line []byte) bool {
	line = bytes.TrimLeft(line, " \t\r\n")
	return len(line) > 0 && line[0] == '{'
}

// event is the event.Usage of a reported usage, as reader.usage reads it.
func (u *wireUsage) event() event.Usage {
	count := func(n optNumber) *int64 {
		if v, ok := n.integer(); ok {
			return &v
		}
		return nil
	}
	c := &u.counts
	return event.Usage{Reported: true, InputTokens: count(c.InputTokens), OutputTokens: count(c.OutputTokens),
		CacheReadTokens: count(c.CacheReadTokens), CacheWriteTokens: count(c.CacheWriteTokens)}
}

// rawValue is a member read into a jsontext.Value as raw returns it: nil
// when absent or null.
func rawValue(v jsontext.Value) jsontext.Value {
	if len(v) == 0 || v.Kind() == 'n' {
		return nil
	}
	return v
}
