// Package modelapi is a stand-in, on the loopback, for the model APIs the
// real agent CLIs talk to: tests run whole turns of the real Claude Code,
// Codex and Gemini CLI (its planning, real tools on real files, retries,
// real stream) while the model's side is a Script. For tests and
// benchmarks only.
//
// One Server speaks three streaming APIs, told apart by the path:
//
//	POST /v1/messages                                Anthropic Messages (Claude Code)
//	POST /v1/responses                               OpenAI Responses (Codex)
//	POST /v1beta/models/MODEL:streamGenerateContent  Gemini (Gemini CLI)
//
// Each model request takes the script's next Reply; what a CLI asks
// beside its turn (Claude Code's HEAD /, token counts, Gemini CLI's
// model-routing classifier) takes none. Every request is recorded
// (Requests) with the tool results it carries, so a test sees that the
// CLI really ran a tool.
//
// Event names, order and members, and the error bodies, are each API's
// own, as its streaming reference and official SDK have them
// (anthropic-sdk-go, openai-go, js-genai).
package modelapi
