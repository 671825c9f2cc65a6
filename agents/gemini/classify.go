package gemini

import (
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/internal/phrases"
)

// maxAgentMessage bounds the CLI's own error text carried in a failure.
const maxAgentMessage = 500

// kindPhrases holds, for each kind in order of precedence, the lower-case
// phrases of gemini 0.61.0's own messages that mean it: local states first
// (they explain everything after them), then a failed connection (a request
// that never reached Google cannot have been refused by it), then what
// Google's API answered, then input problems. Sources: the bundle's texts
// (validateNonInteractiveAuth, the trusted-folder check, resolveSessionId,
// googleQuotaErrors, parseAndFormatApiError, retryWithBackoff) and the
// outputs recorded on this machine (testdata/README.md). The table is
// built fresh on each call and never written.
func kindPhrases() []phrases.Entry[failure.Kind] {
	return []phrases.Entry[failure.Kind]{
		{Value: failure.Setup, Phrases: []string{
			"not running in a trusted directory", "fataluntrustedworkspaceerror", "trust this directory",
			"yolo mode is disabled", "fatalconfigerror", "invalid telemetry configuration",
			"approval mode \"plan\" is disabled", "is disabled by your administrator",
		}},
		{Value: failure.Sandbox, Phrases: []string{"fatalsandboxerror", "sandbox image", "failed to start sandbox", "sandbox-exec", "sandbox error"}},
		{Value: failure.Network, Phrases: []string{
			// DNS
			"enotfound", "eai_again", "getaddrinfo", "could not resolve host", "name resolution",
			// connections ("fetch failed sending request" is the recorded text)
			"econnrefused", "econnreset", "etimedout", "econnaborted", "enetunreach", "enetdown", "ehostunreach",
			"connection refused", "connection reset", "connection timed out", "network is unreachable",
			"network error", "socket hang up", "fetch failed", "und_err_connect_timeout", "und_err_socket",
			// a response that broke off: undici's "TypeError: terminated"
			// ("[API Error: terminated]"), and a stream cut inside an event
			// ("Incomplete JSON segment at the end")
			"api error: terminated", "incomplete json segment",
			// TLS
			"unable to get local issuer certificate", "unable to verify the first certificate",
			"self signed certificate", "self-signed certificate", "certificate has expired", "cert_has_expired",
			"self_signed_cert_in_chain", "depth_zero_self_signed_cert", "err_tls_", "eproto",
			// proxies
			"proxy authentication required", "tunneling socket",
		}},
		{Value: failure.Quota, Phrases: []string{
			"daily quota", "exhausted your capacity", "capacity exceeded", "model_capacity_exhausted",
			"terminalquotaerror", "quota exceeded", "usage limit",
		}},
		{Value: failure.RateLimited, Phrases: []string{
			"rate limit", "ratelimit", "too many requests", "resource_exhausted", "status: 429", "retryablequotaerror",
			"please wait and try again later",
			// 503 UNAVAILABLE: "The model is overloaded. Please try again later."
			"model is overloaded",
		}},
		{Value: failure.Auth, Phrases: []string{
			"please set an auth method", "fatalauthenticationerror", "api key not valid", "api_key_invalid",
			"invalid api key", "unauthenticated", "permission_denied", "status: 401", "status: 403",
			"enforced authentication type", "no authentication is configured", "authentication", "not logged in",
			"failed to login", "login required",
		}},
		{Value: failure.Input, Phrases: []string{
			"error resuming session", "invalid session identifier", "no previous sessions found", "session not found",
			"no input provided", "fatalinputerror", "error processing the @ command", "invalid approval mode",
			"is not found for api version", "model not found", "invalid model",
		}},
	}
}

// ClassifyMessage returns the failure kind a gemini message means (an
// error event's text, a failed result's error message, the stderr tail of
// a failed exit): failure.Setup (an untrusted folder, a configuration
// gemini refuses), failure.Sandbox, failure.Network (DNS, connection, TLS,
// proxy; "fetch failed"), failure.Quota (a daily quota or capacity),
// failure.RateLimited (429 RESOURCE_EXHAUSTED, "please wait and try again
// later"), failure.Auth (no auth method set, a key refused, 401/403),
// failure.Input (a session to resume that is not there, no input, an
// unknown model), else failure.Unclassified. Matching ignores case and terminal
// escapes; a text naming several causes gets the first in that order.
func ClassifyMessage(text string) failure.Kind {
	return phrases.First(text, kindPhrases(), failure.Unclassified)
}

// errorTypeKind is the kind a failed result's error.type names: gemini's
// fatal error classes (packages/core/src/utils/errors.ts), "" when the
// type says nothing (the message decides then).
func errorTypeKind(typ string) failure.Kind {
	switch typ {
	case "FatalAuthenticationError":
		return failure.Auth
	case "FatalInputError":
		return failure.Input
	case "FatalSandboxError":
		return failure.Sandbox
	case "FatalConfigError", "FatalUntrustedWorkspaceError":
		return failure.Setup
	}
	return ""
}

// exitMeaning says what one of gemini's documented exit codes means
// (the FatalError classes of packages/core/src/utils/errors.ts, which
// gemini exits with, as the 0.61.0 bundle defines them), with the kind it
// maps to; ok is false for another code.
//
//	41  FatalAuthenticationError: no auth method, or it failed  auth
//	42  FatalInputError: no input, a bad @ command or resume     input
//	44  FatalSandboxError: the sandbox could not start          sandbox
//	52  FatalConfigError: settings gemini refuses               setup
//	53  FatalTurnLimitedError: maxSessionTurns reached          error
//	54  FatalToolExecutionError: a fatal tool error (no space)  error
//	55  FatalUntrustedWorkspaceError: folder not trusted        setup
//	130 FatalCancellationError: cancelled (SIGINT, Ctrl-C)      process
func exitMeaning(code int) (kind failure.Kind, meaning string, ok bool) {
	switch code {
	case 41:
		return failure.Auth, "authentication failed or is not configured", true
	case 42:
		return failure.Input, "gemini refused its input", true
	case 44:
		return failure.Sandbox, "gemini's sandbox could not start", true
	case 52:
		return failure.Setup, "gemini refused its configuration", true
	case 53:
		return failure.Unclassified, "gemini reached its session turn limit (maxSessionTurns)", true
	case 54:
		return failure.Unclassified, "a tool failed fatally", true
	case 55:
		return failure.Setup, "the working directory is not trusted", true
	case 130:
		return failure.Process, "gemini reports it was cancelled", true
	}
	return "", "", false
}

// resultFailure is the failure a failed result reports: gemini's message,
// bounded, with the kind its error type names, else the kind its text
// indicates.
func resultFailure(errType, msg string) *failure.Error {
	kind := errorTypeKind(errType)
	if kind == "" {
		kind = ClassifyMessage(msg)
	}
	msg = strings.TrimSpace(msg)
	if msg == "" {
		msg = "(no message)"
	}
	head := "gemini reported an error"
	if errType != "" {
		head += " (" + strconv.Quote(detail.Cut(errType, 64)) + ")"
	}
	return &failure.Error{Kind: kind, Message: head, Detail: detail.Cut(msg, maxAgentMessage)}
}
