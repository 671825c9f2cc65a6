// Package gemini is everything cursorkit knows about Google's Gemini CLI
// (`gemini`, npm @google/gemini-cli, tested with 0.61.0): the argv of a
// headless turn (Args), the stream-json decoder that turns its stdout into
// package event's events while it enforces the protocol and the turn's
// tool policy, the classifier of its messages (ClassifyMessage), its
// --version (ParseVersion) and the supervision defaults of a turn
// (TurnDefaults). It starts no process and reads no file.
//
// On Windows npm installs gemini.cmd, a shim that runs node on
// bundle/gemini.js; packages discovery and shim find and start it.
//
// # Invocation
//
// `gemini --output-format stream-json --skip-trust --approval-mode MODE
// [--model ID] [--resume SESSION] -p ""` with the prompt on stdin (Args
// says why each flag). Gemini reads stdin to its end, but gives up on a
// pipe that stays empty for 500 ms (readStdin): package turn writes the
// prompt at once. When gemini's settings enable its sandbox it relaunches
// itself inside it with the prompt as a --prompt argument: that is
// gemini's behaviour, outside cursorkit's control.
//
// # Events
//
// Every line is one JSON object with a "type"
// (packages/core/src/output/types.ts, JsonStreamEventType):
//
//	init         {timestamp, session_id, model}             init
//	message      {role:"user", content}                     nothing: the prompt's echo
//	message      {role:"assistant", content, delta:true}    text, each delta once
//	tool_use     {tool_name, tool_id, parameters}           tool_started
//	tool_result  {tool_id, status, output?, error?}         tool_completed (Result: output, or the error object)
//	error        {severity:"warning", message}              warning WarnGemini
//	error        {severity:"error", message}                warning WarnGeminiError; the turn fails
//	result       {status, error?{type,message}, stats}      result (Usage from stats)
//
// The result's Text is, when the turn succeeded, what the agent said
// since its last tool call (gemini's result carries no text), and its
// Model the entry of stats.models with the most tokens (the turn's own
// model: with --model auto, init names only "auto", and a routing
// classifier's small call has an entry too). Any other type, or a message
// of another role, passes through as an event.TypeUnknown event. Gemini
// streams no thinking, so there are no thinking events, and it says that
// it retries a model request on stderr only: FeedStderr reads those
// notices as retry warnings (the decoder is a turn.StderrDecoder).
// Lines are read with encoding/json/v2 as Node's JSON.parse reads them
// (invalid UTF-8 as U+FFFD, the last of a member given twice). A member a
// type uses must have the kind gemini sends (null counts as absent); the
// members of a type the decoder does not know, and those its type does
// not use, may hold anything.
//
// # Protocol
//
// The first event is init, or a failed result: gemini reports an error
// thrown before its init (a session that cannot be resumed) as a result of
// status "error" alone. Lines before it that are not JSON objects are
// banners. After it, a line that is not a well-formed event is a
// failure.Protocol error naming the line, the byte offset and the member
// at fault, with a bounded excerpt (turn.Stream; package turn withholds
// what may hold the prompt). Exactly one result comes last; a line after
// it is a protocol error. End: exit 0 without init or result is failure.Protocol;
// a failed result, or an error event of severity "error" (gemini goes on
// to a result after one), fails the turn with gemini's message, bounded,
// and the kind its error type or text means; a non-zero exit without a
// result has the kind of gemini's exit code (41 auth, 42 input, 44
// sandbox, 52 and 55 setup, 53 and 54 error, 130 process), else what
// ClassifyMessage finds in the stderr tail, else failure.Process.
//
// # Policy
//
// plan and ask allow read_file, read_many_files, list_directory, glob,
// grep_search (and its legacy alias search_file_content),
// google_web_search and web_fetch; write adds write_file, replace,
// run_shell_command, save_memory, write_todos, enter_plan_mode and
// exit_plan_mode. Turn.Tools adds names; MCP tools (gemini names them
// mcp_SERVER_TOOL) are allowed when named exactly, or all of them with
// "mcp". A tool_use outside the list, or a tool_result whose tool_use was
// not seen, makes Feed return a failure.Policy error at once. Gemini emits
// tool_use before it runs the tool, so the supervisor stops the tree
// before the call runs, unless gemini got there first.
//
// Gemini restricts itself too (Args: plan, default and yolo approval
// modes), but cursorkit cannot restrict which MCP servers gemini starts
// or which tools it declares to the model: the user's settings decide
// that, and write's yolo approves every tool gemini has. The decoder's
// allowlist is the only restriction that does not depend on gemini's
// settings.
//
// # The MCP tool bridge
//
// Gemini reads MCP servers only from settings files. A Turn with a Bridge
// (package mcpbridge) runs with a private home (BridgeHome, whose
// GEMINI_CLI_HOME agents.Agent.Run adds to the turn's environment): the
// user's settings plus the bridge's server, trusted, beside links to the
// user's credentials and sessions; nothing is written into the user's
// workspace or home. Plan mode offers gemini no MCP tool, so a plan Turn
// with a Bridge is refused (failure.Input). The tools of the bridge's
// server are the bridge's alone: a call of one it publishes
// (mcp_SERVER_fn_NAME) is reported by the tool's own name (NAME) with its
// parameters and its text as the result, also when the tool failed; any
// other tool of that server is a policy failure, whatever Turn.Tools say.
package gemini
