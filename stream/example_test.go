package stream_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/cursorkit/cursorkit/stream"
)

// A prompt turn as `cursorkit run --json` drives it: the argv for the mode,
// a Turn with the mode's policy, every stdout line through Feed (stop the
// agent when Feed fails), End with how the agent ended, and the outcome.
func Example() {
	args, err := stream.Args(stream.ArgsOptions{Mode: stream.ModeAsk, Model: "gpt-5"})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Join(args, " "))

	policy, err := stream.NewPolicy(stream.ModeAsk)
	if err != nil {
		panic(err)
	}
	turn := stream.NewTurn(policy)
	stdout := []string{
		`{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/repo","session_id":"abc","model":"GPT-5","permissionMode":"default"}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"What is in README.md?"}]},"session_id":"abc"}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Let me read it."}]},"session_id":"abc","model_call_id":"m1","timestamp_ms":1}`,
		`{"type":"tool_call","subtype":"started","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"args":{"path":"README.md"}}},"session_id":"abc"}`,
		`{"type":"tool_call","subtype":"completed","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"result":{"success":{"content":"# Demo"}}}},"session_id":"abc"}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Let me read it."}]},"session_id":"abc"}`,
		`{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"duration_api_ms":1200,"result":"Let me read it.","session_id":"abc","request_id":"r1"}`,
	}
	var line []byte
	for _, l := range stdout {
		outs, err := turn.Feed([]byte(l))
		for _, o := range outs {
			line = append(o.AppendJSON(line[:0]), '\n')
			os.Stdout.Write(line)
		}
		if err != nil {
			break // stop the agent's process group here
		}
	}
	verdict := turn.End(0, true)
	outcome, _ := json.Marshal(turn.Outcome(verdict))
	fmt.Println(string(outcome))
	// Output:
	// --print --output-format stream-json --mode ask --trust --model gpt-5
	// {"type":"init","sessionId":"abc","model":"GPT-5","cwd":"/repo","permissionMode":"default","apiKeySource":"login"}
	// {"type":"text","text":"Let me read it."}
	// {"type":"tool_started","callId":"toolu_1\nx","tool":"read","args":{"path":"README.md"}}
	// {"type":"tool_completed","callId":"toolu_1\nx","tool":"read","args":{"path":"README.md"},"status":"success","result":{"content":"# Demo"}}
	// {"type":"result","subtype":"success","isError":false,"result":"Let me read it.","durationMs":1234,"durationApiMs":1200,"sessionId":"abc","requestId":"r1","usage":{"reported":false}}
	// {"type":"outcome","status":"done","kind":null,"sessionId":"abc","model":"GPT-5","usage":{"reported":false},"warnings":[]}
}
