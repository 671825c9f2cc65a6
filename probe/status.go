package probe

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/cursorkit/cursorkit/internal/detail"
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
	reasonNotLoggedIn       = "not_logged_in"             // isAuthenticated false, or "Not logged in" text
	reasonKeychainLocked    = "keychain_locked"           // "Your macOS login keychain is locked"
	reasonIDEMissing        = "ide_missing"               // "No Cursor IDE installation found"
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
	// them when it printed one.
	Status         string          `json:"status,omitempty"`
	HasAccessToken *bool           `json:"hasAccessToken,omitempty"`
	UserInfo       json.RawMessage `json:"userInfo,omitempty"`
}

// Marker texts the agent prints for its distinct non-auth states, matched
// case-insensitively in stdout or stderr.
const (
	keychainLockedText = "your macos login keychain is locked"
	ideMissingText     = "no cursor ide installation found"
)

var notLoggedInTexts = []string{"authentication required", "not logged in", "not authenticated"}

// parseStatus judges one run of `status --format json`: its stdout, its
// stderr and its exit code. Keychain and IDE markers win over everything
// else; then a non-zero exit fails closed (a "not logged in" text makes the
// reason not_logged_in); then the first JSON object in stdout (a UTF-8 BOM
// and surrounding noise tolerated) must carry a boolean isAuthenticated.
func parseStatus(stdout, stderr []byte, exitCode int) Auth {
	lowerOut := strings.ToLower(detail.StripANSI(string(stdout)))
	lowerErr := strings.ToLower(detail.StripANSI(string(stderr)))
	either := func(text string) bool {
		return strings.Contains(lowerOut, text) || strings.Contains(lowerErr, text)
	}
	message := agentMessage(stdout, stderr)
	switch {
	case either(keychainLockedText):
		return Auth{State: AuthKeychainLocked, Reason: reasonKeychainLocked, Detail: message}
	case either(ideMissingText):
		return Auth{State: AuthIDEMissing, Reason: reasonIDEMissing, Detail: message}
	}
	notLoggedIn := false
	for _, text := range notLoggedInTexts {
		notLoggedIn = notLoggedIn || either(text)
	}
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
	if json.Unmarshal(obj["status"], &status) == nil {
		a.Status = detail.Bound(status)
	}
	var hasToken bool
	if json.Unmarshal(obj["hasAccessToken"], &hasToken) == nil && obj["hasAccessToken"] != nil {
		a.HasAccessToken = &hasToken
	}
	if info, ok := obj["userInfo"]; ok && !bytes.Equal(bytes.TrimSpace(info), []byte("null")) {
		a.UserInfo = info
	}
	raw, ok := obj["isAuthenticated"]
	if !ok {
		a.Reason, a.Detail = reasonMissingField, "status JSON has no isAuthenticated field"
		return a
	}
	var authenticated bool
	if err := json.Unmarshal(raw, &authenticated); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
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
func findJSONObject(text []byte) (map[string]json.RawMessage, bool) {
	text = []byte(detail.StripANSI(string(bytes.ReplaceAll(text, []byte("\uFEFF"), nil))))
	var first map[string]json.RawMessage
	for attempts, off := 0, 0; attempts < maxJSONAttempts; attempts++ {
		i := bytes.IndexByte(text[off:], '{')
		if i < 0 {
			break
		}
		start := off + i
		var obj map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(text[start:]))
		if err := dec.Decode(&obj); err == nil && obj != nil {
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
