package probe

import (
	"time"

	"github.com/cursorkit/cursorkit/discovery"
)

// Candidate outcomes of a --version probe (CandidateResult.Outcome). Each
// failure names its cause the way operators search for it.
const (
	OutcomeOK         = "ok"                // --version exited 0: this candidate works
	OutcomeNotFound   = "not-found"         // ENOENT: no such file, or nothing launchable on PATH
	OutcomePermission = "permission-denied" // EACCES: found but not executable
	OutcomeTimeout    = "timeout"           // did not finish within its bound; its tree was killed
	OutcomeExit       = "exit-nonzero"      // ran and exited non-zero (or died of a signal)
	OutcomeRefused    = "refused"           // the value or its launch plan was refused before anything ran
	OutcomeError      = "error"             // could not be started for another reason
)

// CandidateResult is the verdict on one candidate's --version probe.
type CandidateResult struct {
	// Candidate is the value tried: a configured path or a bare name.
	Candidate string           `json:"candidate"`
	Source    discovery.Source `json:"source"`
	// Path is the file it resolved to, when it resolved.
	Path    string `json:"path,omitempty"`
	Outcome string `json:"outcome"`
	// Detail is bounded (BoundDetail) and starts with ENOENT, EACCES,
	// timeout or "exit N" for those failures.
	Detail string `json:"detail,omitempty"`
}

// Report is the result of a --version probe, with SPEC.md's probe fields.
// It is filled in also when Probe returns an error.
type Report struct {
	// Available reports that a candidate's --version succeeded. It stays
	// true for a build older than tested (Probe then also returns a setup
	// error).
	Available  bool             `json:"available"`
	BinaryPath string           `json:"binaryPath"`
	BinaryName string           `json:"binaryName"`
	Kind       discovery.Kind   `json:"kind"`
	Source     discovery.Source `json:"source"`
	// UsingConfiguredBinaryPath reports that the effective binary is the
	// configured override (settings cursorCliBinaryPath or --binary).
	UsingConfiguredBinaryPath bool `json:"usingConfiguredBinaryPath"`
	// Version is the first token --version printed (bounded).
	Version string `json:"version"`
	// VersionSource is SourceCLI when --version ran for this report and
	// SourceCache when its answer came from the VersionCache; "" when no
	// candidate answered.
	VersionSource string `json:"versionSource,omitempty"`
	Tested        Tested `json:"tested"`
	// BuildDate ("2026.10.15") and BuildHash come from Version when it
	// parses as a Cursor build.
	BuildDate string `json:"buildDate,omitempty"`
	BuildHash string `json:"buildHash,omitempty"`
	// Candidates lists every candidate tried, in order, up to and including
	// the effective one.
	Candidates []CandidateResult `json:"candidates"`
	// Diagnostics are bounded lines for people: earlier candidates'
	// failures (a configured override's first), resolution warnings, and
	// the build's relation to the tested interval.
	Diagnostics []string `json:"diagnostics"`

	// Resolution is how the effective binary was found; status and models
	// run exactly this file.
	Resolution discovery.Resolution `json:"-"`
	// Parsed is Version parsed.
	Parsed Version `json:"-"`
}

// StatusReport is `cursorkit status`: the probe's fields plus the auth
// verdict (authenticated, authState, reason, ...).
type StatusReport struct {
	Report
	Auth
}

// Answer sources (ModelsReport.Source, Report.VersionSource).
const (
	SourceCLI   = "cli"   // the command ran just now
	SourceCache = "cache" // read from the catalog or version cache
)

// ModelsReport is `cursorkit models`: the catalog of the effective binary.
type ModelsReport struct {
	Models []Model `json:"models"`
	// Source is SourceCLI or SourceCache.
	Source string `json:"source"`
	// Empty reports the agent's explicit "No models available for this
	// account." state.
	Empty      bool      `json:"empty"`
	FetchedAt  time.Time `json:"fetchedAt"`
	BinaryPath string    `json:"binaryPath"`
	Version    string    `json:"version"`
	// Diagnostics are bounded lines: unrecognized output lines, cache
	// problems.
	Diagnostics []string `json:"diagnostics"`
}
