// Package codex is everything cursorkit knows about the OpenAI Codex CLI,
// `codex` (@openai/codex on npm; tested with codex-cli 0.171.0), above the
// generic mechanism (discovery, shim, launch, supervise): the argv of one
// prompt turn (Args), a decoder of its `codex exec --json` stream, what
// its messages mean (ClassifyMessage), its --version (ParseVersion) and
// the supervision defaults of a turn (TurnDefaults). It starts no process
// and reads no file.
//
// # Invocation
//
// A turn runs `codex exec --json --color never --sandbox S [--model M] -`,
// or `... resume THREAD_ID -` to go on with a thread; the "-" makes Codex
// read the whole prompt from stdin. plan and ask run with --sandbox
// read-only, write with --sandbox workspace-write. Exec sets the approval
// policy "never" itself and rejects every approval request, so no approval
// flag exists to pass. Codex refuses to run outside a git repository
// ("Not inside a trusted directory and --skip-git-repo-check was not
// specified.", exit 1): cursorkit keeps that check (it never passes
// --skip-git-repo-check) and reports the refusal as failure.Setup.
//
// # Events
//
// Every line is one JSON object with a "type" (exec/src/exec_events.rs):
//
//   - thread.started {thread_id}: init, SessionID = thread_id. The stream
//     names no model, cwd or sandbox: Init.Model and the rest stay "".
//   - turn.started: known, no event.
//   - item.started, item.updated, item.completed {item: {id, type, ...}}:
//     agent_message is text (on item.completed only, once per item id);
//     reasoning is thinking (its text as a "delta", then "completed");
//     command_execution is the tool "shell" (Args {"command"}, Status
//     completed/failed/declined, Result {"exit_code", "aggregated_output"});
//     file_change is "file_change" (Args {"changes"}, Status);
//     mcp_tool_call is "mcp" (Args {"server", "tool", "arguments"},
//     Result {"result", "error"}); web_search is "web_search" (Args
//     {"query", "action"}); collab_tool_call (sub-agents) is "collab";
//     an error item is a WarnItemError warning (Codex: non-fatal). A
//     tool's item.started is tool_started, its item.completed
//     tool_completed, its item.updated is checked against the policy and
//     yields nothing. todo_list, plan and unknown item types pass through
//     as unknown events.
//   - turn.completed {usage}: the result (subtype "success"), its text
//     the last agent_message's (Codex's answer). OpenAI's
//     input_tokens include the cached ones: InputTokens is input_tokens -
//     cached_input_tokens, CacheReadTokens cached_input_tokens.
//   - turn.failed {error: {message}}: the result (subtype "error",
//     IsError); the turn fails with the message's kind.
//   - error {message}: "Reconnecting... N/M (CAUSE)" is a retry warning
//     (turn.RetryWarning): attempt N of M, the HTTP status the cause
//     names ("last status: 429 ..."), the kind from it, else from the
//     cause's words, else network. "Reconnecting... waiting for network (...)" means Codex
//     waits for the network with no bound (recorded: it never exits), so
//     Feed fails the turn with failure.Network at once and the supervisor
//     stops the tree. Any other error is fatal (Codex exits 1 after it): a
//     WarnError warning, and the turn's verdict once Codex ends the turn.
//   - any other type passes through as unknown.
//
// Lines are read with encoding/json/v2 as turn.Stream reads them
// (invalid UTF-8 and lone surrogates read as U+FFFD, a member given twice
// allowed): first for their type, then for the members that type uses,
// each of which must have the kind Codex sends, null counting as absent. A
// member a type does not use, and every member of a type the decoder does
// not know, may hold anything.
//
// # Protocol
//
// The stream follows turn.Stream's protocol. The first event must be
// thread.started; lines before it that are not JSON objects are banners
// (warnings). After it a line that is not a well-formed event is a
// failure.Protocol error naming the line number and byte offset, with a
// bounded excerpt. Exactly one final event (turn.completed or
// turn.failed) comes last; a line after it is a protocol error. Exit 0 without thread.started
// or without the final event is failure.Protocol; a non-zero exit without
// it is failure.Process, or the kind ClassifyMessage finds in the stderr
// tail. Codex exits 0 or 1, nothing else.
//
// # Policy
//
// Codex has no tool that only reads: it reads files with shell commands.
// So every mode allows shell and web_search, and write adds file_change;
// what keeps plan and ask read-only is Codex's own sandbox (--sandbox
// read-only), which the decoder cannot see into. Turn.Tools adds
// file_change, collab (sub-agents), "mcp" (every MCP server's tools) or
// "mcp:SERVER" (one server's). A tool item outside the list makes Feed
// return a failure.Policy error at once. Codex has no flag that removes a
// tool, so Args cannot restrict tools beyond the sandbox; MCP servers
// configured in Codex's config.toml are started by Codex whatever the
// turn allows, and only their calls are refused.
//
// # The MCP tool bridge
//
// A Turn with a Bridge (package mcpbridge) adds the bridge's server to the
// run with -c options (no file is written), required, its tools approved
// (exec's approval policy is "never", under which an MCP call needing
// approval fails). Codex 0.171 offers MCP tools to the model through its
// code mode: the model calls tools.mcp__SERVER__fn_NAME inside exec, and
// the call is an mcp_tool_call item of the bridge's server. The tools of
// that server are the bridge's alone: a call of one it publishes is
// reported by the tool's own name (NAME) with its arguments and its text
// as the result; any other tool of that server is a policy failure,
// whatever Turn.Tools say (code mode does not even offer one the server
// did not list).
package codex
