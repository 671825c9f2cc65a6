package cursor

import (
	"strings"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/internal/phrases"
)

// maxAgentMessage bounds the agent's own error text carried in a failure.
const maxAgentMessage = 500

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
	// No exact text is documented (docs/notes/research.md, "Cursor CLI: the
	// task profile"):
	// these are the stable cores any wording of the failure keeps.
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
// names none. Matching ignores case and terminal escape sequences and
// looks for each cause's stable core ("keychain is locked", "no cursor ide
// installation found", ENOTFOUND, ECONNREFUSED, a certificate error, "407
// Proxy Authentication Required", "usage limit", "rate limit", "not logged
// in", "sandbox unavailable"...), so rewordings around it do not matter. A text naming several
// causes gets the one of highest precedence (see the Cause constants).
func Diagnose(text string) Cause {
	return phrases.First(text, causePhrases[:], CauseNone)
}

// Kind returns the failure kind of c: failure.Unclassified for CauseNone.
func (c Cause) Kind() failure.Kind {
	switch c {
	case CauseKeychainLocked, CauseNotLoggedIn:
		return failure.Auth
	case CauseIDEMissing:
		return failure.Setup
	case CauseSandbox:
		return failure.Sandbox
	case CauseNetwork:
		return failure.Network
	case CauseQuota:
		return failure.Quota
	case CauseRateLimited:
		return failure.RateLimited
	}
	return failure.Unclassified
}

// Summary says what c means for people, "" for CauseNone.
func (c Cause) Summary() string {
	switch c {
	case CauseKeychainLocked:
		return "the macOS login keychain is locked"
	case CauseIDEMissing:
		return "this Cursor CLI needs a Cursor IDE installation"
	case CauseSandbox:
		return "the Cursor CLI cannot create its sandbox, and a sandboxed run never runs without it"
	case CauseNetwork:
		return "the Cursor CLI could not reach Cursor's servers (a DNS, connection, TLS or proxy failure)"
	case CauseQuota:
		return "the account's usage limit is reached"
	case CauseRateLimited:
		return "Cursor is rate limiting this account"
	case CauseNotLoggedIn:
		return "not logged in to Cursor"
	}
	return ""
}

// Fix says what to do about c, "" for CauseNone. The network's fix speaks
// of the connection, DNS and proxies, never of logging in.
func (c Cause) Fix() string {
	switch c {
	case CauseKeychainLocked:
		return "run `security unlock-keychain` and try again"
	case CauseIDEMissing:
		return "install cursor-agent and use it (point cursorCliBinaryPath or CURSOR_AGENT_BIN at it), or install the Cursor IDE"
	case CauseSandbox:
		return "on Linux enable Landlock (ABI v3) and unprivileged user namespaces (kernel.unprivileged_userns_clone, AppArmor's userns restriction); see cursor.com/docs/agent/tools/terminal"
	case CauseNetwork:
		return "check this machine's network connection and DNS, and its proxy settings (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) and any firewall or TLS-inspecting proxy between it and Cursor's servers"
	case CauseQuota:
		return "wait until the usage limit resets, or switch to a model or plan with usage left"
	case CauseRateLimited:
		return "wait a little and try again"
	case CauseNotLoggedIn:
		return "log in: cursor-agent login (or set CURSOR_API_KEY for the agent)"
	}
	return ""
}

// Err returns the failure c means: its kind, its summary and fix as the
// message, and said (the agent's bounded words) as the detail. It returns
// nil for CauseNone.
func (c Cause) Err(said string) *failure.Error {
	if c == CauseNone {
		return nil
	}
	return &failure.Error{Kind: c.Kind(), Message: c.Summary() + ": " + c.Fix(), Detail: said}
}

// ClassifyMessage returns the failure kind an agent's error text
// indicates: Diagnose(text).Kind(). The Decoder reads result texts and
// stderr tails with it.
func ClassifyMessage(text string) failure.Kind { return Diagnose(text).Kind() }

// failed reports whether r reports a failed turn: is_error true or
// subtype "error".
func failed(r *event.Result) bool { return r.IsError || r.Subtype == "error" }

// resultFailure is the failure an error result reports: the agent's own
// message, bounded, with the kind its text indicates.
func resultFailure(r *event.Result) error {
	msg := strings.TrimSpace(r.Text)
	if msg == "" {
		msg = "(no message)"
	}
	return &failure.Error{
		Kind:    ClassifyMessage(r.Text),
		Message: "cursor-agent reported an error",
		Detail:  detail.Cut(msg, maxAgentMessage),
	}
}
