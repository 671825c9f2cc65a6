package modelapi_test

import (
	"bufio"
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/modelapi"
)

// sseEvent is one server-sent event: its name ("" when it has none) and
// its data.
type sseEvent struct {
	name, data string
}

// post sends body to the stand-in's path and returns the response.
func post(t *testing.T, ctx context.Context, s *modelapi.Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readSSE reads every event of a stream, and the error that ended it
// (nil at a clean end).
func readSSE(r io.Reader) ([]sseEvent, error) {
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			out = append(out, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return out, sc.Err()
}

// typeOf is the "type" member of an event's data, "" when it has none.
func typeOf(t *testing.T, data string) string {
	t.Helper()
	var v struct {
		Type string `json:"type"`
	}
	require.NoError(t, json.Unmarshal([]byte(data), &v), "%s", data)
	return v.Type
}

func start(t *testing.T, script modelapi.Script) *modelapi.Server {
	t.Helper()
	s, err := modelapi.Start(script, map[string]string{"workspace": `C:\ws "x"`})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s
}

// Requests as the CLIs send them, reduced to what the stand-in reads.
const (
	anthropicBody = `{"model":"claude-x","stream":true,"tools":[{"name":"Read"}],"messages":[{"role":"user","content":"hi"},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"file text"},{"type":"tool_result","tool_use_id":"u","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}]}`
	responsesBody = `{"model":"gpt-x","stream":true,"input":[{"type":"additional_tools","tools":[{"type":"namespace","name":"functions","tools":[{"type":"custom","name":"exec"}]}]},` +
		`{"type":"custom_tool_call_output","call_id":"c","output":"out"}],"tools":[{"type":"web_search"}]}`
	geminiBody = `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"user","parts":[{"functionResponse":{"name":"read_file","response":{"output":"file text"}}}]}],` +
		`"tools":[{"functionDeclarations":[{"name":"read_file"}]}]}`
)

func TestAnthropicStream(t *testing.T) {
	s := start(t, modelapi.Script{Replies: []modelapi.Reply{
		{Thinking: "hm", Text: []string{"a", "b"}, Calls: []modelapi.Call{{Name: "Read", Input: jsontext.Value(`{"file_path":"{{workspace}}/a.txt"}`)}}},
	}})
	resp := post(t, context.Background(), s, "/v1/messages?beta=true", anthropicBody)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	events, err := readSSE(resp.Body)
	require.NoError(t, err)
	var names []string
	var input strings.Builder
	for _, e := range events {
		names = append(names, e.name)
		assert.Equal(t, e.name, typeOf(t, e.data), "the event's name is its type")
		var d struct {
			Delta struct {
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		require.NoError(t, json.Unmarshal([]byte(e.data), &d))
		input.WriteString(d.Delta.PartialJSON)
	}
	assert.Equal(t, []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}, names)
	assert.JSONEq(t, `{"file_path":"C:\\ws \"x\"/a.txt"}`, input.String(), "the placeholder, JSON-escaped")
	assert.Contains(t, events[len(events)-2].data, `"stop_reason":"tool_use"`)

	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, modelapi.Anthropic, reqs[0].API)
	assert.Equal(t, "claude-x", reqs[0].Model)
	assert.Equal(t, []string{"Read"}, reqs[0].Tools)
	assert.Equal(t, []string{"file text", "ab"}, reqs[0].ToolResults)
	assert.Equal(t, 0, reqs[0].Reply)
}

func TestResponsesStream(t *testing.T) {
	s := start(t, modelapi.Script{Replies: []modelapi.Reply{
		{Thinking: "hm", Text: []string{"a", "b"}, Calls: []modelapi.Call{{Name: "exec", Code: "text(1)"}, {Name: "f", Input: jsontext.Value(`{"x":1}`)}}},
	}})
	resp := post(t, context.Background(), s, "/v1/responses", responsesBody)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	events, err := readSSE(resp.Body)
	require.NoError(t, err)
	var done []string
	seq := 0
	for _, e := range events {
		assert.Equal(t, e.name, typeOf(t, e.data))
		var d struct {
			Seq  int `json:"sequence_number"`
			Item struct {
				Type string `json:"type"`
			} `json:"item"`
		}
		require.NoError(t, json.Unmarshal([]byte(e.data), &d))
		assert.Equal(t, seq, d.Seq, "sequence numbers count up")
		seq++
		if e.name == "response.output_item.done" {
			done = append(done, d.Item.Type)
		}
	}
	assert.Equal(t, "response.created", events[0].name)
	assert.Equal(t, "response.completed", events[len(events)-1].name)
	assert.Equal(t, []string{"reasoning", "message", "custom_tool_call", "function_call"}, done)
	assert.Contains(t, events[len(events)-1].data, `"usage":{`)
	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, []string{"web_search", "exec"}, reqs[0].Tools)
	assert.Equal(t, []string{"out"}, reqs[0].ToolResults)
}

func TestGeminiStream(t *testing.T) {
	s := start(t, modelapi.Script{Replies: []modelapi.Reply{
		{Thinking: "hm", Text: []string{"a", "b"}, Calls: []modelapi.Call{{Name: "read_file", Input: jsontext.Value(`{"file_path":"a"}`)}}},
	}})
	resp := post(t, context.Background(), s, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", geminiBody)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	events, err := readSSE(resp.Body)
	require.NoError(t, err)
	require.Len(t, events, 4, "thinking, two texts, the calls")
	var last struct {
		Candidates []struct {
			FinishReason string `json:"finishReason"`
			Content      struct {
				Parts []struct {
					FunctionCall *struct {
						Name string `json:"name"`
					} `json:"functionCall"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
		UsageMetadata *struct {
			Total int `json:"totalTokenCount"`
		} `json:"usageMetadata"`
		ModelVersion string `json:"modelVersion"`
	}
	for _, e := range events {
		assert.Empty(t, e.name, "Gemini's events have no names")
	}
	require.NoError(t, json.Unmarshal([]byte(events[3].data), &last))
	assert.Equal(t, "STOP", last.Candidates[0].FinishReason)
	assert.Equal(t, "read_file", last.Candidates[0].Content.Parts[0].FunctionCall.Name)
	require.NotNil(t, last.UsageMetadata)
	assert.Equal(t, "gemini-x", last.ModelVersion)
	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "gemini-x", reqs[0].Model)
	assert.Equal(t, []string{"read_file"}, reqs[0].Tools)
	assert.Equal(t, []string{"file text"}, reqs[0].ToolResults)
}

// TestSideRequests: what the CLIs ask beside the turn is answered without
// taking a reply of the script.
func TestSideRequests(t *testing.T) {
	s := start(t, modelapi.Script{Replies: []modelapi.Reply{{Text: []string{"x"}}}})
	resp := post(t, context.Background(), s, "/v1beta/models/flash-lite:generateContent",
		`{"generationConfig":{"responseJsonSchema":{"type":"object","properties":{"complexity_score":{"type":"INTEGER"},"why":{"type":"string"},"pick":{"enum":["flash","pro"]}}}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var answer struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	require.NoError(t, json.UnmarshalRead(resp.Body, &answer))
	assert.JSONEq(t, `{"complexity_score":10,"why":"the stand-in's answer","pick":"flash"}`, answer.Candidates[0].Content.Parts[0].Text)
	head, err := http.Head(s.URL() + "/")
	require.NoError(t, err)
	head.Body.Close()
	assert.Equal(t, http.StatusOK, head.StatusCode)
	resp = post(t, context.Background(), s, "/v1/messages/count_tokens", `{}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	for _, r := range s.Requests() {
		assert.Equal(t, -1, r.Reply)
	}
}

// TestErrorsAndExhaustion: an error reply is the API's status and body
// (retry-after when asked), as many times as it says; a request after the
// script's end is a 400 recorded as exhausted.
func TestErrorsAndExhaustion(t *testing.T) {
	tests := []struct {
		path, body string
		status     map[string]int
		marker     string // in every error body
	}{
		{"/v1/messages", anthropicBody, map[string]int{modelapi.ErrRateLimit: 429, modelapi.ErrOverloaded: 529, modelapi.ErrUnauthorized: 401,
			modelapi.ErrForbidden: 403, modelapi.ErrServer: 500}, `"type":"error"`},
		{"/v1/responses", responsesBody, map[string]int{modelapi.ErrRateLimit: 429, modelapi.ErrOverloaded: 503, modelapi.ErrUnauthorized: 401,
			modelapi.ErrForbidden: 403, modelapi.ErrServer: 500}, `"code":`},
		{"/v1beta/models/g:streamGenerateContent", geminiBody, map[string]int{modelapi.ErrRateLimit: 429, modelapi.ErrOverloaded: 503,
			modelapi.ErrUnauthorized: 401, modelapi.ErrForbidden: 403, modelapi.ErrServer: 500}, `"status":`},
	}
	for _, tt := range tests {
		for errName, status := range tt.status {
			s := start(t, modelapi.Script{Replies: []modelapi.Reply{{Error: errName, RetryAfter: 2, Times: 2}}})
			for range 2 {
				resp := post(t, context.Background(), s, tt.path, tt.body)
				assert.Equal(t, status, resp.StatusCode, "%s %s", tt.path, errName)
				assert.Equal(t, "2", resp.Header.Get("Retry-After"))
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.Contains(t, string(b), tt.marker)
			}
			resp := post(t, context.Background(), s, tt.path, tt.body)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "exhausted")
			reqs := s.Requests()
			require.Len(t, reqs, 3)
			assert.True(t, reqs[2].Exhausted)
			assert.Equal(t, -1, reqs[2].Reply)
			_, sent := s.FirstSent(errName)
			assert.True(t, sent)
		}
	}
}

// TestFaults: a stall holds the stream open until the client leaves, a
// drop cuts it, a malformed event is not JSON; each after the first part.
func TestFaults(t *testing.T) {
	t.Run("stall", func(t *testing.T) {
		s := start(t, modelapi.Script{Replies: []modelapi.Reply{{Text: []string{"a", "b"}, Fault: modelapi.FaultStall}}})
		ctx, cancel := context.WithCancel(context.Background())
		resp := post(t, ctx, s, "/v1/messages", anthropicBody)
		r := bufio.NewReader(resp.Body)
		var seen string
		for !strings.Contains(seen, "text_delta") {
			line, err := r.ReadString('\n')
			require.NoError(t, err)
			seen += line
		}
		assert.NotContains(t, seen, `"text":"b"`, "the stream stops after its first part")
		cancel()
		require.Eventually(t, func() bool { return len(s.Requests()) == 1 }, 10*time.Second, 10*time.Millisecond,
			"the stand-in sees the client leave")
	})
	t.Run("drop", func(t *testing.T) {
		s := start(t, modelapi.Script{Replies: []modelapi.Reply{{Text: []string{"a", "b"}, Fault: modelapi.FaultDrop}}})
		resp := post(t, context.Background(), s, "/v1/responses", responsesBody)
		events, err := readSSE(resp.Body)
		assert.Error(t, err, "the connection is cut")
		assert.NotEmpty(t, events)
	})
	t.Run("malformed", func(t *testing.T) {
		s := start(t, modelapi.Script{Replies: []modelapi.Reply{{Text: []string{"a", "b"}, Fault: modelapi.FaultMalformed}}})
		resp := post(t, context.Background(), s, "/v1beta/models/g:streamGenerateContent", geminiBody)
		events, err := readSSE(resp.Body)
		require.NoError(t, err)
		bad := 0
		for _, e := range events {
			if !jsontext.Value(e.data).IsValid() {
				bad++
			}
		}
		assert.Equal(t, 1, bad)
		assert.Len(t, events, 3, "the rest of the reply follows")
	})
}

func TestScriptCheck(t *testing.T) {
	bad := []modelapi.Reply{
		{},
		{Error: "teapot"},
		{Fault: "melt", Text: []string{"x"}},
		{Error: modelapi.ErrRateLimit, Text: []string{"x"}},
		{Times: -1, Text: []string{"x"}},
		{Calls: []modelapi.Call{{Name: ""}}},
		{Calls: []modelapi.Call{{Name: "x"}}},
		{Calls: []modelapi.Call{{Name: "x", Input: jsontext.Value(`[1]`)}}},
		{Calls: []modelapi.Call{{Name: "x", Input: jsontext.Value(`{}`), Code: "y"}}},
	}
	for _, r := range bad {
		_, err := modelapi.Start(modelapi.Script{Replies: []modelapi.Reply{r}}, nil)
		assert.Error(t, err, "%+v", r)
	}
}

// FuzzScript: any script document either is refused or plays: every reply
// it accepts is served without a panic, a call's input (after the
// placeholders) still one JSON object.
func FuzzScript(f *testing.F) {
	f.Add(`{"replies":[{"text":["a"]},{"calls":[{"name":"Read","input":{"p":"{{workspace}}"}}]}]}`, `C:\ws "x"`)
	f.Add(`{"replies":[{"error":"rate_limit","times":2,"retryAfter":1},{"thinking":"t","fault":"malformed","text":["x"]}]}`, "")
	f.Fuzz(func(t *testing.T, doc, ws string) {
		script, err := modelapi.Parse([]byte(doc))
		if err != nil {
			return
		}
		for i := range script.Replies {
			script.Replies[i].Fault = "" // a stall would hold the test
			script.Replies[i].Times = min(script.Replies[i].Times, 2)
		}
		s, err := modelapi.Start(script, map[string]string{"workspace": ws})
		require.NoError(t, err)
		defer s.Close()
		for range len(script.Replies) {
			resp := post(t, context.Background(), s, "/v1/messages", anthropicBody)
			events, err := readSSE(resp.Body)
			require.NoError(t, err)
			for _, e := range events {
				assert.True(t, jsontext.Value(e.data).IsValid(), "%s", e.data)
			}
		}
	})
}

func TestWatchedWords(t *testing.T) {
	s := start(t, modelapi.Script{Replies: []modelapi.Reply{{Text: []string{"a"}}, {Text: []string{"b"}}},
		Watch: []string{"web_search", "read_file", "custom_tool_call_output"}})
	for _, body := range []string{responsesBody, geminiBody} {
		resp := post(t, context.Background(), s, "/v1/responses", body)
		_, err := readSSE(resp.Body)
		require.NoError(t, err)
	}
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, []string{"web_search", "custom_tool_call_output"}, reqs[0].Mentioned)
	assert.Equal(t, []string{"read_file"}, reqs[1].Mentioned)

	_, err := modelapi.Start(modelapi.Script{Replies: []modelapi.Reply{{Text: []string{"a"}}}, Watch: []string{""}}, nil)
	assert.Error(t, err, "an empty watched word")
}
