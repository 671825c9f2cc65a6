// Package modelapi is a stand-in for the model APIs that the real agent
// CLIs talk to, on the loopback, so that tests run complete turns of the
// real Claude Code, Codex and Gemini CLI: the CLI plans, calls its real
// tools on real files, retries, and prints its real stream, while the
// model's side of the conversation is a Script.
//
// One Server speaks three streaming APIs, told apart by the request path:
//
//	POST /v1/messages                                     Anthropic Messages (Claude Code)
//	POST /v1/responses                                    OpenAI Responses (Codex)
//	POST /v1beta/models/MODEL:streamGenerateContent       Gemini (Gemini CLI)
//
// Each request that asks the model for the next step of a turn takes the
// next Reply of the script: text (in chunks), thinking, tool calls, an
// HTTP error (rate limit, refused credentials, overload) or a fault in
// the stream (a stall, a dropped connection, a malformed event). The
// requests a CLI makes beside its turn (Claude Code's HEAD /, token
// counts, Gemini CLI's model-routing classifier) are answered without
// taking a reply. Every request is recorded (Requests), with the tool
// results it carries, so a test can see that the CLI really ran a tool.
//
// The shapes follow each API's public reference and its official SDKs:
// the event names, their order and the members each CLI reads (the
// Anthropic Messages streaming reference and anthropic-sdk-go; the
// OpenAI Responses streaming events and openai-go; the Gemini API's
// GenerateContentResponse and js-genai). Error bodies are each API's own:
//
//	Anthropic  {"type":"error","error":{"type":"rate_limit_error","message":...}}
//	OpenAI     {"error":{"message":...,"type":...,"param":null,"code":...}}
//	Gemini     {"error":{"code":429,"message":...,"status":"RESOURCE_EXHAUSTED"}}
//
// It is for tests and benchmarks only.
package modelapi
