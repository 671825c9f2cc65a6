package claude

import (
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/cliversion"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/internal/phrases"
)

// kindPhrases returns, for each kind in order of precedence, the
// lower-case phrases of Claude Code's messages that mean it (the texts of
// its 2.1.197 binary, quoted in the comments, and Node's error codes).
// The first kind with a phrase in a text wins: a CLI that refuses our
// options explains everything after it; the caller's own input next; a
// request that never reached Anthropic cannot have been refused by it
// (and a proxy's "407 Proxy Authentication Required" is not a login);
// "Server is temporarily limiting requests (not your usage limit)" is a
// rate limit, so rate limits come before the usage limits.
func kindPhrases() []phrases.Entry[failure.Kind] {
	return []phrases.Entry[failure.Kind]{
		// commander's refusals: "error: unknown option '--x'", "error:
		// option '--permission-mode <mode>' argument 'x' is invalid". Args
		// passes only options 2.1.197 knows: an older CLI refuses them.
		{Value: failure.Setup, Phrases: []string{"error: unknown option", "error: option '", "error: too many arguments",
			"cannot be used with root/sudo privileges"}},
		{Value: failure.Input, Phrases: []string{
			"no conversation found",                    // "No conversation found with session ID: X" (--resume)
			"there's an issue with the selected model", // "... (X). It may not exist or you may not have access to it."
			"prompt is too long",
		}},
		{Value: failure.Network, Phrases: []string{
			// "Unable to connect to API (ECONNREFUSED)", "Unable to connect
			// to API: SSL certificate verification failed", "Request timed
			// out. Check your internet connection and proxy settings"
			"unable to connect to api", "request timed out", "check your internet connection", "connection error",
			"enotfound", "eai_again", "getaddrinfo", "econnrefused", "econnreset", "etimedout", "econnaborted",
			"enetunreach", "ehostunreach", "network is unreachable", "socket hang up", "fetch failed",
			"ssl certificate", "self-signed certificate", "unable_to_verify_leaf_signature", "cert_has_expired",
			"proxy authentication required", "tunneling socket",
		}},
		{Value: failure.RateLimited, Phrases: []string{
			// "API Error: Server is temporarily limiting requests (not your
			// usage limit) · ...", "API Error: Request rejected (429) · ...",
			// "Repeated 529 Overloaded errors", "Opus is experiencing high load"
			"temporarily limiting requests", "request rejected (429)", "rate limit", "rate_limit", "too many requests",
			"overloaded", "api error: 429", "api error: 529", "experiencing high load",
		}},
		{Value: failure.Quota, Phrases: []string{
			// "Credit balance is too low", "You've hit your limit · resets
			// 3pm", "Claude AI usage limit reached", "You're out of usage
			// credits", "Your org is out of usage", "You've hit your monthly
			// spend limit"
			"credit balance is too low", "credit balance too low", "usage limit", "you've hit your", "out of usage",
			"spend limit", "billing",
		}},
		{Value: failure.Auth, Phrases: []string{
			// "Not logged in · Please run /login", "Invalid API key · Please
			// run /login", "OAuth token revoked · Please run /login",
			// "Authentication error · ...", "Your ANTHROPIC_API_KEY belongs
			// to a disabled organization", "Your organization has disabled
			// API key authentication"
			"not logged in", "please run /login", "invalid api key", "oauth token", "authentication error",
			"authentication_failed", "authentication failed", "disabled organization", "disabled api key authentication",
			"api error: 401", "api error: 403", "unauthorized", "forbidden",
		}},
	}
}

// ClassifyMessage returns the failure kind a Claude Code message
// indicates (an assistant error's text, an error result's text or errors,
// a failed exit's stderr tail), failure.Unclassified when it names no known
// cause. Matching ignores case and terminal escape sequences and looks
// for the stable core of each message (see kindPhrases for the order when
// a text names several).
func ClassifyMessage(text string) failure.Kind {
	return phrases.First(text, kindPhrases(), failure.Unclassified)
}

// apiErrorKind is the kind of an assistant message's error category
// (the Agent SDK's SDKAssistantMessageError), failure.Unclassified for
// server_error, unknown and anything else.
func apiErrorKind(category string) failure.Kind {
	switch category {
	case "authentication_failed":
		return failure.Auth
	case "billing_error":
		return failure.Quota
	case "rate_limit":
		return failure.RateLimited
	case "invalid_request":
		return failure.Input
	}
	return failure.Unclassified
}

// ParseVersion reads the output of `claude --version`, "2.1.197 (Claude
// Code)", and returns the version, "2.1.197". The first line that is a
// version (cliversion.Valid), alone or followed by " (Claude Code)",
// counts; output without one is a failure.Protocol error quoting a
// bounded excerpt.
func ParseVersion(output string) (string, error) {
	for line := range strings.Lines(output) {
		line = strings.TrimSpace(line)
		v, rest, _ := strings.Cut(line, " ")
		if rest != "" && rest != "(Claude Code)" {
			continue
		}
		if cliversion.Valid(v) {
			return v, nil
		}
	}
	return "", failure.New(failure.Protocol, "claude --version printed no version: %s", strconv.Quote(detail.Cut(detail.Bound(output), 80)))
}
