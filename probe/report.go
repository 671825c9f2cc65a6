package probe

import (
	"encoding/json/v2"
	"time"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
)

// Candidate outcomes of a --version probe (CandidateResult.Outcome). Each
// failure names its cause the way operators search for it.
const (
	outcomeOK         = "ok"                // --version exited 0: this candidate works
	outcomeNotFound   = "not-found"         // ENOENT: no such file, or nothing launchable on PATH
	outcomePermission = "permission-denied" // EACCES: found but not executable
	outcomeTimeout    = "timeout"           // did not finish within its bound; its tree was killed
	outcomeExit       = "exit-nonzero"      // ran and exited non-zero (or died of a signal)
	outcomeRefused    = "refused"           // the value or its launch plan was refused before anything ran
	outcomeError      = "error"             // could not be started for another reason
	outcomeBlocked    = "blocked"           // ran, and printed a known failure (keychain locked, IDE missing, network...)
)

// CandidateResult is the verdict on one candidate's --version probe.
// Outcome is ok, not-found, permission-denied, timeout, exit-nonzero,
// refused, blocked or error (docs/contract.md, "Probes").
type CandidateResult struct {
	// Candidate is the value tried: a configured path or a bare name.
	Candidate string           `json:"candidate"`
	Source    discovery.Source `json:"source"`
	// Path is the file it resolved to, when it resolved.
	Path    string `json:"path,omitempty"`
	Outcome string `json:"outcome"`
	// Detail is bounded (detail.Bound) and starts with ENOENT, EACCES,
	// timeout or "exit N" for those failures, with the cause (say
	// "keychain_locked: exit 1") for a blocked one.
	Detail string `json:"detail,omitempty"`
}

// Report is the result of a --version probe, filled in also when Probe
// returns an error. It marshals as `cursorkit probe --json`
// (docs/contract.md, "JSON shapes"); usingConfiguredBinaryPath is true
// when the effective binary is the configured override itself.
type Report struct {
	// Available reports that a candidate's --version succeeded, or that
	// none did but one was blocked (Blocked). It stays true for a build
	// older than tested (Probe then also returns a setup error).
	Available bool
	// Blocked is the cause the effective binary's --version named instead
	// of printing its version (cursor.CauseNone when it printed one);
	// Probe's error is then that cause's, Status reports it as the auth
	// state and Models returns it, neither running the binary again.
	Blocked cursor.Cause
	// BlockedDetail is the agent's own words for Blocked, bounded.
	BlockedDetail string
	// Binary is the effective binary, when Available: how it was found,
	// and whether one was configured. Status, Models and cursor.Run run
	// exactly this file.
	Binary cursor.Binary
	// Version is the first token --version printed (bounded).
	Version string
	Tested  cursor.Tested
	// Candidates lists every candidate tried, in order: up to and
	// including the effective one, or every one when the effective binary
	// is Blocked (later candidates were tried in case one worked).
	Candidates []CandidateResult
	// Diagnostics are bounded lines for people: earlier candidates'
	// failures (a configured override's first), resolution warnings, and
	// the build's relation to the tested interval.
	Diagnostics []string
}

// MarshalJSON writes the shape documented on Report.
func (r Report) MarshalJSON() ([]byte, error) {
	res := r.Binary.Resolution
	return json.Marshal(struct {
		Available                 bool              `json:"available"`
		BinaryPath                string            `json:"binaryPath"`
		BinaryName                string            `json:"binaryName"`
		Kind                      discovery.Kind    `json:"kind"`
		Source                    discovery.Source  `json:"source"`
		UsingConfiguredBinaryPath bool              `json:"usingConfiguredBinaryPath"`
		Version                   string            `json:"version"`
		Tested                    cursor.Tested     `json:"tested"`
		Candidates                []CandidateResult `json:"candidates"`
		Diagnostics               []string          `json:"diagnostics"`
	}{r.Available, res.Path, res.Name, res.Kind, res.Source, res.Path != "" && res.Source == discovery.SourceOverride,
		r.Version, r.Tested, r.Candidates, r.Diagnostics})
}

// Answer sources (ModelsReport.Source, and the version cache).
const (
	sourceCLI   = "cli"   // the command ran just now
	sourceCache = "cache" // read from the catalog or version cache
)

// ModelsReport is `cursorkit models`: the catalog of the effective binary.
type ModelsReport struct {
	Models []Model `json:"models"`
	// Source is "cli" (the command ran just now) or "cache".
	Source string `json:"source"`
	// Empty reports the agent's explicit "No models available for this
	// account." state.
	Empty     bool      `json:"empty"`
	FetchedAt time.Time `json:"fetchedAt"`
	// Diagnostics are bounded lines: unrecognized output lines, cache
	// problems.
	Diagnostics []string `json:"diagnostics"`
	// Cause is what the CLI printed instead of the catalog when listing
	// failed for it (cursor.CauseNone otherwise): its fix says what to do.
	Cause cursor.Cause `json:"-"`
}
