// Package cursor is everything cursorkit knows about the Cursor CLI,
// `cursor-agent`, in one place above the generic mechanism (discovery,
// shim, launch, supervise, which know no agent):
//
//   - which binary: Candidates (the configured override, EnvBinary, then
//     cursor-agent and cursor on PATH, never the bare name agent, which
//     CheckCandidate refuses), the installer's layout (InstalledBuild),
//     the builds cursorkit is tested with (TestedInterval, ParseVersion,
//     Judge) and the settings file that names an override (LoadSettings,
//     UpdateSettings). Package probe runs the binary's --version, status
//     and models with these rules.
//   - one prompt turn: Run starts it on a Binary (probe's choice) with the
//     prompt on stdin only, through package turn's supervised turn, and
//     returns when nothing the agent started is left. Args builds the
//     agent's argv for a Turn and a Decoder follows its stdout,
//     `cursor-agent --print --output-format stream-json`, turning each
//     line into agent-neutral events (package event) while it enforces
//     the protocol and the turn's tool policy. When nothing is configured
//     and the cursor-agent found on PATH vanished before its start, Run
//     starts the cursor candidate instead, once.
//   - what the agent's failures mean: Diagnose reads any message the
//     Cursor CLI prints (from --version, status, models, a turn's error
//     result or stderr) and names its Cause (the macOS keychain is
//     locked, `cursor` has no Cursor IDE, the network failed, a limit, the
//     login), with its failure kind and fix. It is the one classifier:
//     package probe and the Decoder both read the agent's words with it.
//
// docs/contract.md states the behaviours as the project keeps them; this
// documentation states how this package implements them. The Decoder
// starts no process and reads no file: the caller feeds it lines and stops
// the agent when Feed fails.
//
// # Events
//
// Every line is one JSON object with a "type": system (subtype init),
// user (the prompt's echo), thinking (delta, completed), assistant,
// tool_call (started, completed) and result. Any other type, and a system
// event of another subtype, passes through as an event.TypeUnknown event
// holding the line. Lines are read with encoding/json/v2: a line is JSON
// exactly when jsontext reads it as one value with invalid UTF-8 and
// repeated member names allowed (which is what encoding/json's Valid and
// Node's JSON.parse accept); invalid UTF-8 and lone surrogate escapes in a
// string read as U+FFFD, and of a member given twice the last value
// counts. A member an event type does not use may hold anything; one it
// uses must have the kind Cursor sends (a string, an integer, a boolean,
// an object), null counting as absent.
//
// # Protocol
//
// The first event must be system/init; lines before it that are not JSON
// objects are banners (warnings). After it, a line that is not a
// well-formed event is a failure.Protocol error naming the line number,
// the byte offset within the line and a bounded excerpt of the line
// (turn.Run withholds any text that may hold the prompt's). A
// second system/init is a warning and passes through as unknown. Exactly
// one result comes last: a line after it is a protocol error. An exit of
// 0 without init or without a result is failure.Protocol. A result with
// is_error true or subtype "error" fails the turn with the agent's
// message (at most 500 bytes) and the kind ClassifyMessage finds in it.
//
// # Policy
//
// Each Mode allows some tools: the read-only modes read, grep, glob and
// ls; ModeWrite adds write, edit, delete, shell, updateTodos and
// readTodos. MCP and every other tool are allowed only when Turn.Tools
// names them. A tool call's tool is the first key of its tool_call object
// that ends in "ToolCall" ("readToolCall" is read); a completed call that
// names none takes the name (and, without args, the args) of its started
// call. A tool call outside the list, or one whose tool cannot be
// identified, makes Feed return a failure.Policy error at once.
//
// Turn.MCPServers allows the mcp tool of those servers only (unless
// Tools names "mcp", which allows every server's): the server of a call
// is the string providerIdentifier of its args object, as Cursor's
// mcpToolCall carries it ({"name": "SERVER-TOOL", "args": {...},
// "toolCallId": ..., "providerIdentifier": "SERVER", "toolName": "TOOL"});
// a completed call without args is judged by its started call's. A call
// whose server is not one of them, or cannot be found there, is a
// failure.Policy error like any other tool outside the list. Args passes
// --approve-mcps only for a turn with MCP servers, and never for a
// Sandboxed one, which may name none.
//
// # Deduplication
//
// Cursor can send the same assistant text more than once. Without
// --stream-partial-output a model call's text arrives as one assistant
// event with model_call_id (before its tool calls), and the end of the
// turn may repeat text in an event with neither model_call_id nor
// timestamp_ms. With --stream-partial-output the text first arrives as
// deltas (timestamp_ms, no model_call_id), each model call is then
// recapped whole with its model_call_id, and the end of the turn may again
// be repeated. The Decoder sorts every assistant event into one of three
// kinds and emits only text that is new:
//
//   - delta (timestamp_ms without model_call_id): always new; emitted whole,
//     never compared with anything, so "ha" followed by "ha" is "haha". The
//     deltas since the last snapshot or flush form the open run.
//   - snapshot (model_call_id): the complete text of one model call. If the
//     open run ends with it, it is a recap and adds nothing; if it starts
//     with the open run, only the rest is new. Failing that, a snapshot with
//     the model_call_id of an earlier snapshot (since the last flush) that
//     repeats that call's text adds nothing, and one that extends it, when
//     nothing was said since, adds only the extension. Anything else is new,
//     whole: a different model_call_id is a different model call, so
//     identical text from two model calls (two "Checking." before two tool
//     calls) is emitted twice. A snapshot closes the open run.
//   - flush (neither field): the end-of-turn copy. Compared with the
//     unflushed text (everything emitted since the previous flush): if that
//     text ends with the flush, or one snapshot within it equals the flush,
//     it is a replay and adds nothing; if the flush starts with the
//     unflushed text (or with the open run), only the rest is new; otherwise
//     it is new, whole. A flush closes the run and starts a new unflushed
//     region, so flushes that follow one another (older builds print one per
//     message) are always new, even when identical.
//
// The rule for identical text, stated once: text is dropped only as a copy
// of text that is still unconfirmed (the open run for a snapshot, the
// unflushed region for a flush) or of the same model call. The one
// ambiguity: a flush that really is new text but happens to equal the end
// of the unflushed text, or one of its snapshots, is taken for a replay.
//
// The result is that the concatenation of the text events is what the
// agent said, once. When the agent sent no assistant text at all, the
// result's text is emitted as the turn's text.
//
// A turn can say hundreds of megabytes, so a Decoder keeps only the
// latest megabyte or so of text and, for what it forgets, one 64-bit
// seeded hash per anchor until the next flush. The anchors are the places
// the comparisons above start and end: the start of the turn's text, the
// start and end of every snapshot, the end of every flush, and the end of
// the text at every tool call. A comparison of forgotten text from any
// other place (a recap of the end of a long delta run that starts in its
// middle, beyond the kept window) cannot be made, and the text counts as
// new. Copies of the text are never dropped on a guess: text that cannot
// be compared is emitted. Memory stays bounded by the window and the
// anchors, whatever the number of pieces.
package cursor
