// Package claude is what cursorkit knows about Claude Code, the `claude`
// CLI (tested with 2.1.197): the argv of a prompt turn (Args), the
// decoder of its `-p --output-format stream-json --verbose` stream, the
// classifier of its messages (ClassifyMessage), its version output
// (ParseVersion) and the supervision defaults of a turn (TurnDefaults).
// It is pure: it starts no process and reads no file; package turn runs
// the turn with the prompt on stdin (claude -p without a positional
// prompt reads it there).
//
// # Modes
//
// ModePlan is --permission-mode plan, ModeAsk --permission-mode default,
// ModeWrite --permission-mode acceptEdits with Bash approved through
// --allowedTools. Each passes --tools, the built-in tools the session has
// at all (Read, Grep, Glob, LS, plus Edit, MultiEdit, Write,
// NotebookEdit, Bash and TodoWrite for ModeWrite, plus the built-in names
// of Turn.Tools), and Turn.Tools are approved with --allowedTools: a
// non-interactive turn cannot ask, so a tool that needs an approval
// nobody gave is denied by Claude Code (the model gets an error result).
// What the CLI cannot do, said honestly: --dangerously-skip-permissions
// is refused as root, so ModeWrite is not "no prompts at all": an edit
// outside the working directory (and the --add-dir ones) still needs an
// approval and is denied; settings files (the user's and the project's
// .claude/settings.json) may approve or deny more, and hooks they
// configure run; --tools silently drops a name it does not know; MCP
// servers come from the user's and the project's configuration (their
// tools are not limited by --tools, only by approvals and by the
// decoder).
//
// # Events
//
// Every line is one JSON object with a "type", read with encoding/json/v2
// as Node's JSON.parse reads it: invalid UTF-8 and lone surrogates as
// U+FFFD, the last value of a repeated member name (each value must have
// the member's kind, and an object given twice merges). A member is read
// only when the line's type (or a block's) uses it, and must then have
// the kind Claude Code sends, null counting as absent. The types:
//
//   - system/init: the init event (session_id, model, cwd,
//     permissionMode, apiKeySource). A second one is a duplicate_init
//     warning and passes through as unknown.
//   - system/api_retry: a retry warning (turn.RetryWarning) from its
//     numbers (attempt, max_retries, retry_delay_ms, error_status), its
//     kind from the status, or from the error's category when the
//     request got no answer. Other system subtypes (compact_boundary,
//     hook events, ...) pass through as unknown.
//   - assistant: message.content blocks in order: text is a text event
//     (without --include-partial-messages, which Args never passes, each
//     message arrives once, whole: nothing to dedupe), thinking a thinking
//     delta with its text then a thinking completed, redacted_thinking a
//     thinking completed, tool_use a tool_started (id, name, input as
//     Args). The message's model is the result's Model: the model that
//     answered (not "<synthetic>", Claude Code's own messages, nor the
//     model of one with "error"). An assistant event with "error" (authentication_failed,
//     billing_error, rate_limit, invalid_request, server_error, unknown)
//     is Claude Code's report of a failed API call: its text is a
//     WarnAPIError warning, bounded, never a text event.
//   - user: the tool_result blocks of message.content are tool_completed
//     events (tool_use_id, status "error" when is_error, else "success";
//     content as Result; the started call's name and args). Nothing else
//     of a user event is said: it may echo the prompt.
//   - result: the result event (subtype, is_error, result or else the
//     errors joined, duration_ms, duration_api_ms, session_id, usage:
//     input_tokens, which already excludes the cache, output_tokens,
//     cache_read_input_tokens, cache_creation_input_tokens). When no text
//     was said, a successful result's text is said first.
//   - anything else (stream_event, tool_progress, ...): unknown, whole.
//
// # Protocol
//
// Lines that are not JSON objects before the first event are banners
// (warnings). The first event is system/init, or a result: Claude Code
// prints only a result when --resume names no session. An event of an
// unknown type may come before either and passes through; another known
// event before them is failure.Protocol. After the first event a line
// that is not a well-formed event is failure.Protocol, naming the line,
// the byte offset, the culprit's JSON pointer and a bounded excerpt
// (package turn withholds the prompt's text). Exactly one result comes
// last. A result fails the turn when is_error is true (the
// unauthenticated result is subtype "success" with is_error true:
// is_error decides) or its subtype starts with "error"; the failure
// carries the message (at most 500 bytes) and the kind ClassifyMessage
// finds in it, else the kind of the assistant error before it. Claude
// Code documents no exit codes: 0 after a good turn, 1 after a failed
// one.
//
// # Policy
//
// ModePlan allows Read, Grep, Glob, LS and ExitPlanMode; ModeAsk Read,
// Grep, Glob and LS; ModeWrite adds Edit, MultiEdit, Write, NotebookEdit,
// Bash and TodoWrite. Turn.Tools adds names: a built-in tool by its name,
// an MCP tool as mcp__SERVER__TOOL, every tool of a server as
// mcp__SERVER (Claude Code's own rule syntax). A tool_use outside the
// list (a subagent's included) makes Feed return failure.Policy at once.
//
// # The MCP tool bridge
//
// A Turn with a Bridge (package mcpbridge) runs with the bridge's config
// file as its only MCP configuration (--mcp-config FILE
// --strict-mcp-config) and each of its tools approved (--allowedTools
// mcp__SERVER__fn_NAME), in every mode. The tools of the bridge's server
// are the bridge's alone: a call of one it publishes is reported by the
// tool's own name (NAME) with its input and its text as the result; a
// call of any other tool of that server is a policy failure, whatever
// Turn.Tools say.
package claude
