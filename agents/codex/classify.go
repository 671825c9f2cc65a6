package codex

import (
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/internal/phrases"
)

// maxAgentMessage bounds Codex's own error text carried in a failure.
const maxAgentMessage = 500

// kindPhrases returns, for each failure kind in order of precedence, the
// lower-case phrases of Codex's messages that mean it: when a text holds
// phrases of several kinds, the first kind wins. Local states come first
// (they explain everything after them), then a failed connection (a
// request that never reached OpenAI cannot have been refused by it), then
// what OpenAI answered. The phrases are the stable cores of the texts in
// codex-rs (protocol/src/error.rs CodexErr and UsageLimitReachedError,
// exec/src/lib.rs) and of reqwest/hyper's connection errors, as recorded
// from codex 0.171.0 (testdata/README.md).
func kindPhrases() []phrases.Entry[failure.Kind] {
	return []phrases.Entry[failure.Kind]{
		{Value: failure.Setup, Phrases: []string{
			// exec/src/lib.rs: outside a git repository without --skip-git-repo-check.
			"not inside a trusted directory", "skip-git-repo-check",
			"error loading config.toml", "error loading rules", "error parsing -c overrides",
			"error finding codex home", "failed to initialize in-process app-server client",
			"no default oss provider configured", "oss setup failed",
		}},
		{Value: failure.Sandbox, Phrases: []string{
			"sandbox error", "codex-linux-sandbox was required", "landlock was not able", "seccomp setup error",
			"seccomp backend error", "command failed inside sandbox",
		}},
		{Value: failure.Network, Phrases: []string{
			// "Reconnecting... waiting for network (...)": Codex waits forever.
			"waiting for network",
			// DNS (getaddrinfo through reqwest/hyper)
			"failed to lookup address information", "name does not resolve", "name or service not known",
			"temporary failure in name resolution", "nodename nor servname", "no such host is known", "dns error",
			// connections
			"connection failed:", "error sending request", "error trying to connect", "tcp connect error",
			"connection refused", "connection reset", "connection closed before message completed",
			"network is unreachable", "host is unreachable", "stream disconnected before completion",
			"error while reading the server response", "request timed out", "operation timed out",
			"failed to connect to websocket", "falling back from websockets",
			// TLS
			"invalid peer certificate", "certificate verify failed", "unknownissuer", "tls handshake",
			// proxies
			"proxy authentication required", "proxy error", "tunnel error",
			// unexpected status 403 from Cloudflare: the network path, not the login
			"access blocked by cloudflare",
		}},
		{Value: failure.Quota, Phrases: []string{
			"usage limit", "quota exceeded", "out of credits", "spend cap", "upgrade to plus",
			"insufficient_quota",
		}},
		{Value: failure.RateLimited, Phrases: []string{
			"rate limit", "rate_limit", "too many requests", "status 429", "at capacity", "high demand", "server overloaded",
			"overloaded",
		}},
		{Value: failure.Auth, Phrases: []string{
			"status 401", "status 403", "unauthorized", "forbidden", "missing bearer", "invalid api key", "incorrect api key",
			"invalid_api_key", "not logged in", "please log in", "log in again", "sign in again", "login again",
			"access token could not be refreshed", "refresh token", "missing environment variable: `openai_api_key`",
			"missing environment variable: `codex_api_key`",
		}},
		{Value: failure.Input, Phrases: []string{
			"model is not supported", "does not exist or you do not have access", "model_not_found",
			"unknown model", "no prompt provided", "failed to read prompt from stdin", "invalid_request_error",
			"review prompt cannot be empty",
		}},
	}
}

// ClassifyMessage reads any message Codex prints (a top-level error
// event's or a failed turn's message, the stderr tail of a failed exit)
// and returns the failure kind it means, failure.Unclassified when it names no
// known cause. Matching ignores case and terminal escape sequences; a
// text naming several causes gets the kind of highest precedence (see
// kindPhrases). Codex's refusal to run outside a git repository is
// failure.Setup: the fix is to run the turn in a repository (cursorkit
// never passes --skip-git-repo-check).
func ClassifyMessage(text string) failure.Kind {
	return phrases.First(text, kindPhrases(), failure.Unclassified)
}

// fixOf says what to do about a failure kind, for the kinds whose fix is
// Codex's own; "" otherwise.
func fixOf(k failure.Kind, text string) string {
	switch {
	case k == failure.Setup && strings.Contains(strings.ToLower(text), "skip-git-repo-check"):
		return "run the turn in a git repository (git init), which Codex requires; cursorkit does not pass --skip-git-repo-check"
	case k == failure.Network:
		return "check the network connection, DNS and proxy settings (HTTPS_PROXY, NO_PROXY) between this machine and OpenAI"
	case k == failure.Auth:
		return "log in with `codex login`, or set OPENAI_API_KEY (CODEX_API_KEY) for the agent"
	}
	return ""
}

// messageFailure is the failure a Codex message reports: what prefix
// says, the kind ClassifyMessage finds, and the bounded message as the
// detail, with the fix when the kind has one.
func messageFailure(prefix, msg string) *failure.Error {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		msg = "(no message)"
	}
	k := ClassifyMessage(msg)
	m := prefix
	if fix := fixOf(k, msg); fix != "" {
		m += " (" + fix + ")"
	}
	return &failure.Error{Kind: k, Message: m, Detail: detail.Cut(detail.Bound(msg), maxAgentMessage)}
}
