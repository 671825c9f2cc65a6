package cursor_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/turn"
)

// A prompt turn as `cursorkit run --json` drives it: the argv for the
// turn, a Decoder for it, every stdout line through Feed (stop the agent
// when Feed fails), each event written as a line, and End once the agent
// has exited.
func Example() {
	req := cursor.Turn{Prompt: "What is in README.md?", Mode: turn.ModeAsk, Model: "gpt-5"}
	args, err := cursor.Args(req)
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Join(args, " "))

	dec, err := cursor.NewDecoder(req)
	if err != nil {
		panic(err)
	}
	stdout := []string{
		`{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/repo","session_id":"abc","model":"GPT-5","permissionMode":"default"}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"What is in README.md?"}]},"session_id":"abc"}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Let me read it."}]},"session_id":"abc","model_call_id":"m1","timestamp_ms":1}`,
		`{"type":"tool_call","subtype":"started","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"args":{"path":"README.md"}}},"session_id":"abc"}`,
		`{"type":"tool_call","subtype":"completed","call_id":"toolu_1\nx","tool_call":{"readToolCall":{"result":{"success":{"content":"# Demo"}}}},"session_id":"abc"}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Let me read it."}]},"session_id":"abc"}`,
		`{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"duration_api_ms":1200,"result":"Let me read it.","session_id":"abc","request_id":"r1"}`,
	}
	enc := event.NewEncoder(os.Stdout)
	for _, line := range stdout {
		events, err := dec.Feed([]byte(line))
		for _, ev := range events {
			if err := ev.MarshalJSONTo(enc); err != nil {
				panic(err)
			}
		}
		if err != nil {
			fmt.Println(err) // and stop the agent's process tree
			break
		}
	}
	fmt.Println("done:", dec.Done(), "verdict:", dec.End(0, ""))
	// Output:
	// --print --output-format stream-json --mode ask --trust --model gpt-5
	// {"type":"init","sessionId":"abc","model":"GPT-5","cwd":"/repo","permissionMode":"default","apiKeySource":"login"}
	// {"type":"text","text":"Let me read it."}
	// {"type":"tool_started","callId":"toolu_1\nx","tool":"read","args":{"path":"README.md"}}
	// {"type":"tool_completed","callId":"toolu_1\nx","tool":"read","args":{"path":"README.md"},"status":"success","result":{"content":"# Demo"}}
	// {"type":"result","subtype":"success","isError":false,"result":"Let me read it.","durationMs":1234,"durationApiMs":1200,"sessionId":"abc","requestId":"r1","model":"","usage":{"reported":false}}
	// done: true verdict: <nil>
}

// A tool outside the turn's mode stops the turn: Feed fails with a
// failure.Policy error, and End repeats it.
func ExampleNewDecoder_policy() {
	dec, err := cursor.NewDecoder(cursor.Turn{Mode: turn.ModePlan})
	if err != nil {
		panic(err)
	}
	for _, line := range []string{
		`{"type":"system","subtype":"init","session_id":"abc"}`,
		`{"type":"tool_call","subtype":"started","call_id":"s1","tool_call":{"shellToolCall":{"args":{"command":"rm -rf /"}}}}`,
	} {
		if _, err := dec.Feed([]byte(line)); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Println(dec.End(0, "") != nil)
	// Output:
	// the agent called the tool "shell", which the plan mode does not allow (allowed: glob, grep, ls, read): line 2, call id "s1"
	// true
}
