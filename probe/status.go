package probe

import (
	"bytes"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"strconv"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/turn"
)

// AuthState is the auth verdict, the `authState` field of docs/contract.md
// ("JSON shapes").
type AuthState string

const (
	AuthAuthenticated   AuthState = "authenticated"
	AuthUnauthenticated AuthState = "unauthenticated"
	AuthKeychainLocked  AuthState = "keychain_locked" // macOS login keychain locked
	AuthIDEMissing      AuthState = "ide_missing"     // `cursor` without a Cursor IDE install
	AuthUnknown         AuthState = "unknown"         // the status command could not be run to an answer
)

// Reason codes of an Auth verdict: each way to reach a state has its own,
// so a caller can tell "logged out" from "status printed garbage".
const (
	reasonLoggedIn          = "logged_in"                 // isAuthenticated true, exit 0
	reasonNotLoggedIn       = "not_logged_in"             // isAuthenticated false, or a "not logged in" text
	reasonKeychainLocked    = "keychain_locked"           // "Your macOS login keychain is locked"
	reasonIDEMissing        = "ide_missing"               // "No Cursor IDE installation found"
	reasonNetwork           = "network"                   // a DNS, connection, TLS or proxy failure
	reasonQuota             = "quota"                     // a usage limit
	reasonRateLimited       = "rate_limited"              // a rate limit
	reasonEmptyOutput       = "empty_output"              // exit 0 and nothing on stdout
	reasonMalformedJSON     = "malformed_json"            // no JSON object found in stdout
	reasonMissingField      = "missing_is_authenticated"  // a JSON object without isAuthenticated
	reasonNotBoolean        = "is_authenticated_not_bool" // isAuthenticated present but not a boolean
	reasonNonZeroExit       = "non_zero_exit"             // the command exited non-zero
	reasonStatusTimeout     = "timeout"                   // the command did not finish within its bound
	reasonStatusStartFailed = "start_failed"              // the command could not be started
)

// Auth is the verdict of `status --format json`. It fails closed:
// Authenticated is true only for a boolean isAuthenticated true from a run
// that exited 0 with no keychain or IDE error.
type Auth struct {
	Authenticated bool      `json:"authenticated"`
	State         AuthState `json:"authState"`
	// Reason is one of the Reason* codes.
	Reason string `json:"reason"`
	// Detail is a bounded text for people (the agent's own message, say).
	Detail string `json:"detail,omitempty"`

	// The other fields of the status object, kept as the agent reported
	// them when it printed one. UserInfo is compact, valid UTF-8 and free
	// of repeated names, so it always marshals; one that is not is left out.
	Status         string         `json:"status,omitempty"`
	HasAccessToken *bool          `json:"hasAccessToken,omitempty"`
	UserInfo       jsontext.Value `json:"userInfo,omitempty"`
}

// causeAuth is the verdict for a cause the agent's words name.
type causeAuth struct {
	cause  cursor.Cause
	state  AuthState
	reason string
}

// causeAuths are the verdicts of the causes: the keychain and IDE states,
// unauthenticated for a missing login, and unknown for a network failure
// or a limit (the question could not be asked), each with the cause as
// its reason.
func causeAuths() []causeAuth {
	return []causeAuth{
		{cursor.CauseKeychainLocked, AuthKeychainLocked, reasonKeychainLocked},
		{cursor.CauseIDEMissing, AuthIDEMissing, reasonIDEMissing},
		{cursor.CauseNotLoggedIn, AuthUnauthenticated, reasonNotLoggedIn},
		{cursor.CauseNetwork, AuthUnknown, reasonNetwork},
		{cursor.CauseQuota, AuthUnknown, reasonQuota},
		{cursor.CauseRateLimited, AuthUnknown, reasonRateLimited},
	}
}

// authFor is the verdict for a cause the agent's words (message) name.
func authFor(c cursor.Cause, message string) Auth {
	for _, e := range causeAuths() {
		if e.cause == c {
			return Auth{State: e.state, Reason: e.reason, Detail: message}
		}
	}
	return Auth{State: AuthUnknown, Reason: reasonStatusStartFailed, Detail: message}
}

// Cause is the cause behind a verdict that is not authenticated, as
// cursor.Diagnose names it: the keychain, the IDE, the network, a limit,
// or (any unauthenticated reason) a missing login. It is cursor.CauseNone
// for an authenticated verdict and for a status command that gave no
// answer (timeout, not started).
func (a Auth) Cause() cursor.Cause {
	for _, e := range causeAuths() {
		if e.state == a.State && (a.State != AuthUnknown || e.reason == a.Reason) {
			return e.cause
		}
	}
	return cursor.CauseNone
}

// parseStatus judges one run of `status --format json`: its stdout, its
// stderr and its exit code. The agent's words are read with
// cursor.Diagnose, as everywhere else. A locked keychain or a missing IDE
// wins over everything else; a network failure or a limit wins over every
// verdict but authenticated; then a non-zero exit fails closed (reason
// not_logged_in when the words say so); then the first JSON object in
// stdout (a UTF-8 BOM and surrounding noise tolerated) must carry a
// boolean isAuthenticated.
func parseStatus(stdout, stderr []byte, exitCode int) Auth {
	message := agentMessage(stdout, stderr)
	cause := cursor.Diagnose(string(stdout) + "\n" + string(stderr))
	switch cause {
	case cursor.CauseKeychainLocked, cursor.CauseIDEMissing:
		return authFor(cause, message)
	}
	a := judgeStatus(stdout, message, exitCode, cause == cursor.CauseNotLoggedIn)
	switch {
	case a.Authenticated:
		return a
	case cause == cursor.CauseNetwork, cause == cursor.CauseQuota, cause == cursor.CauseRateLimited:
		// The fields the agent reported, if any, stay.
		b := authFor(cause, message)
		b.Status, b.HasAccessToken, b.UserInfo = a.Status, a.HasAccessToken, a.UserInfo
		return b
	}
	return a
}

// judgeStatus is parseStatus once the agent's words named no state of
// their own: exit code, then the JSON object.
func judgeStatus(stdout []byte, message string, exitCode int, notLoggedIn bool) Auth {
	unauth := func(reason, why string) Auth {
		return Auth{State: AuthUnauthenticated, Reason: reason, Detail: detail.Bound(why)}
	}
	if exitCode != 0 {
		if notLoggedIn {
			return unauth(reasonNotLoggedIn, message)
		}
		return unauth(reasonNonZeroExit, "status exited with code "+strconv.Itoa(exitCode)+detailSuffix(message))
	}
	obj, found := findJSONObject(stdout)
	if !found {
		switch {
		case notLoggedIn:
			return unauth(reasonNotLoggedIn, message)
		case len(bytes.TrimSpace(bytes.TrimPrefix(stdout, []byte("\uFEFF")))) == 0:
			return unauth(reasonEmptyOutput, "status printed nothing"+detailSuffix(message))
		}
		return unauth(reasonMalformedJSON, "status printed no JSON object"+detailSuffix(message))
	}
	a := Auth{State: AuthUnauthenticated}
	var status string
	// Read as the agent's own JSON.parse reads (turn.UnmarshalOptions): a
	// stricter reading would fail a logged-in user closed, or skip the object
	// for one nested inside it.
	if json.Unmarshal(obj["status"], &status, turn.UnmarshalOptions()) == nil {
		a.Status = detail.Bound(status)
	}
	var hasToken bool
	if json.Unmarshal(obj["hasAccessToken"], &hasToken, turn.UnmarshalOptions()) == nil {
		a.HasAccessToken = &hasToken
	}
	// Invalid UTF-8 becomes U+FFFD; repeated names leave userInfo out.
	if info, ok := obj["userInfo"]; ok && info.Kind() != 'n' && info.Format(jsontext.AllowInvalidUTF8(true)) == nil {
		a.UserInfo = info
	}
	raw, ok := obj["isAuthenticated"]
	if !ok {
		a.Reason, a.Detail = reasonMissingField, "status JSON has no isAuthenticated field"
		return a
	}
	var authenticated bool
	if err := json.Unmarshal(raw, &authenticated, turn.UnmarshalOptions()); err != nil || raw.Kind() == 'n' {
		a.Reason, a.Detail = reasonNotBoolean, "status JSON isAuthenticated is not a boolean"
		return a
	}
	if !authenticated {
		a.Reason, a.Detail = reasonNotLoggedIn, "not logged in"
		return a
	}
	a.Authenticated, a.State, a.Reason = true, AuthAuthenticated, reasonLoggedIn
	return a
}

// maxJSONAttempts bounds how many '{' positions findJSONObject tries, so
// hostile output cannot make parsing quadratic.
const maxJSONAttempts = 32

// findJSONObject returns the first JSON object embedded in text: a BOM,
// ANSI escapes, banner lines and trailing noise are skipped. It prefers an
// object that has isAuthenticated, falling back to the first object found.
func findJSONObject(text []byte) (map[string]jsontext.Value, bool) {
	text = []byte(detail.StripANSI(string(bytes.ReplaceAll(text, []byte("\uFEFF"), nil))))
	var first map[string]jsontext.Value
	for attempts, off := 0, 0; attempts < maxJSONAttempts; attempts++ {
		i := bytes.IndexByte(text[off:], '{')
		if i < 0 {
			break
		}
		start := off + i
		var obj map[string]jsontext.Value
		dec := jsontext.NewDecoder(bytes.NewReader(text[start:]), turn.UnmarshalOptions())
		if json.UnmarshalDecode(dec, &obj) == nil {
			if _, ok := obj["isAuthenticated"]; ok {
				return obj, true
			}
			if first == nil {
				first = obj
			}
			// Skip past this object: an object nested inside it is not
			// the status object.
			off = start + int(dec.InputOffset())
			continue
		}
		off = start + 1
	}
	return first, first != nil
}

// agentMessage is the agent's own bounded words: stderr first, else stdout.
func agentMessage(stdout, stderr []byte) string {
	if msg := detail.Bound(string(stderr)); msg != "" {
		return msg
	}
	return detail.Bound(string(stdout))
}

func detailSuffix(message string) string {
	if message == "" {
		return ""
	}
	return ": " + message
}
