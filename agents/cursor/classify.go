package cursor

import (
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/phrases"
)

// Cause is what a Cursor CLI message names as the reason a command failed
// (docs/contract.md, "Agent messages"). Diagnose finds it; every place that
// reads the agent's words (the probes' --version, status and models, a
// turn's error result and stderr tail) goes through Diagnose, so one
// message means one cause, and one failure kind, everywhere.
type Cause string

// The causes, in order of precedence: when a text names several, the
// first wins. Local states come first (they explain everything after
// them), then a failed connection (a request that never reached Cursor
// cannot have been refused by it, and a proxy's "407 Proxy Authentication
// Required" is not a Cursor login), then what Cursor's servers answered.
const (
	CauseNone           Cause = ""                // no known cause: failure.Unclassified
	CauseKeychainLocked Cause = "keychain_locked" // the macOS login keychain is locked: failure.Auth
	CauseIDEMissing     Cause = "ide_missing"     // `cursor` without a Cursor IDE installation: failure.Setup
	CauseSandbox        Cause = "sandbox"         // Cursor's sandbox cannot be created: failure.Sandbox
	CauseNetwork        Cause = "network"         // DNS, connection, TLS or proxy failure: failure.Network
	CauseQuota          Cause = "quota"           // a usage or spend limit: failure.Quota
	CauseRateLimited    Cause = "rate_limited"    // a rate limit: failure.RateLimited
	CauseNotLoggedIn    Cause = "not_logged_in"   // no valid login or API key: failure.Auth
)

// causePhrases holds, for each cause in order of precedence, the lower-case
// phrases that name it: the stable core of the agent's message (the
// keychain and IDE texts of docs/contract.md, Node.js error codes and
// texts for the network). It is never written to.
var causePhrases = [...]phrases.Entry[Cause]{
	{Value: CauseKeychainLocked, Phrases: []string{"keychain is locked"}},
	{Value: CauseIDEMissing, Phrases: []string{"no cursor ide installation found"}},
	// No exact text is documented (docs/notes/research.md): these are the
	// stable cores any wording of the failure keeps.
	{Value: CauseSandbox, Phrases: []string{
		"sandbox unavailable", "sandbox is unavailable", "sandbox not available", "sandbox is not available",
		"failed to create sandbox", "failed to create the sandbox", "could not create sandbox",
		"could not create the sandbox", "unable to create sandbox", "unable to create the sandbox",
		"sandbox could not be created", "sandbox creation failed",
	}},
	{Value: CauseNetwork, Phrases: []string{
		// DNS
		"enotfound", "eai_again", "getaddrinfo", "could not resolve host", "name resolution",
		// connections
		"econnrefused", "econnreset", "etimedout", "econnaborted", "enetunreach", "enetdown", "ehostunreach",
		"connection refused", "connection reset", "connection timed out", "connection error",
		"network is unreachable", "network error", "socket hang up", "fetch failed",
		"und_err_connect_timeout", "und_err_socket", "connecttimeouterror",
		// TLS
		"unable to get local issuer certificate", "unable to verify the first certificate",
		"self signed certificate", "self-signed certificate", "certificate has expired", "cert_has_expired",
		"unable_to_verify_leaf_signature", "unable_to_get_issuer_cert", "self_signed_cert_in_chain",
		"depth_zero_self_signed_cert", "err_tls_", "certificate verify failed", "tls handshake",
		"secure tls connection", "ssl routines", "eproto",
		// proxies
		"proxy authentication required", "tunneling socket", "proxy connection", "connect to proxy", "proxy error",
	}},
	{Value: CauseQuota, Phrases: []string{"usage limit", "usage-limit", "quota", "spend limit", "spending limit", "out of credits"}},
	{Value: CauseRateLimited, Phrases: []string{"rate limit", "rate-limit", "rate_limit", "ratelimit", "too many requests"}},
	{Value: CauseNotLoggedIn, Phrases: []string{"authentication", "unauthenticated", "not authenticated", "unauthorized",
		"not logged in", "please log in", "login required", "invalid api key"}},
}

// Diagnose returns the cause an agent's message names, CauseNone when it
// names none. Matching ignores case and terminal escape sequences and looks
// for each cause's stable core (causePhrases), so rewordings around it do
// not matter. A text naming several causes gets the one of highest
// precedence (see the Cause constants).
func Diagnose(text string) Cause {
	return phrases.First(text, causePhrases[:], CauseNone)
}

// about returns c's failure kind, what it means for people and what to do
// about it: failure.Unclassified and "" for CauseNone. The network's fix
// speaks of the connection, DNS and proxies, never of logging in.
func (c Cause) about() (kind failure.Kind, summary, fix string) {
	switch c {
	case CauseKeychainLocked:
		return failure.Auth, "the macOS login keychain is locked", "run `security unlock-keychain` and try again"
	case CauseIDEMissing:
		return failure.Setup, "this Cursor CLI needs a Cursor IDE installation",
			"install cursor-agent and use it (point cursorCliBinaryPath or CURSOR_AGENT_BIN at it), or install the Cursor IDE"
	case CauseSandbox:
		return failure.Sandbox, "the Cursor CLI cannot create its sandbox, and a sandboxed run never runs without it",
			"on Linux enable Landlock (ABI v3) and unprivileged user namespaces (kernel.unprivileged_userns_clone, AppArmor's userns restriction); see cursor.com/docs/agent/tools/terminal"
	case CauseNetwork:
		return failure.Network, "the Cursor CLI could not reach Cursor's servers (a DNS, connection, TLS or proxy failure)",
			"check this machine's network connection and DNS, and its proxy settings (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) and any firewall or TLS-inspecting proxy between it and Cursor's servers"
	case CauseQuota:
		return failure.Quota, "the account's usage limit is reached", "wait until the usage limit resets, or switch to a model or plan with usage left"
	case CauseRateLimited:
		return failure.RateLimited, "Cursor is rate limiting this account", "wait a little and try again"
	case CauseNotLoggedIn:
		return failure.Auth, "not logged in to Cursor", "log in: cursor-agent login (or set CURSOR_API_KEY for the agent)"
	}
	return failure.Unclassified, "", ""
}

// Kind returns the failure kind of c: failure.Unclassified for CauseNone.
func (c Cause) Kind() failure.Kind {
	kind, _, _ := c.about()
	return kind
}

// Summary says what c means for people, "" for CauseNone.
func (c Cause) Summary() string {
	_, summary, _ := c.about()
	return summary
}

// Fix says what to do about c, "" for CauseNone.
func (c Cause) Fix() string {
	_, _, fix := c.about()
	return fix
}

// Err returns the failure c means: its kind, its summary and fix as the
// message, and said (the agent's bounded words) as the detail. It returns
// nil for CauseNone.
func (c Cause) Err(said string) *failure.Error {
	kind, summary, fix := c.about()
	if c == CauseNone {
		return nil
	}
	return &failure.Error{Kind: kind, Message: summary + ": " + fix, Detail: said}
}

// ClassifyMessage returns the failure kind an agent's error text
// indicates: Diagnose(text).Kind(). The decoder reads result texts and
// stderr tails with it.
func ClassifyMessage(text string) failure.Kind { return Diagnose(text).Kind() }
