// Package discovery finds an executable: a configured path, or a bare name
// searched on PATH, with Windows PATH/PATHEXT semantics implemented natively
// on every OS. It knows no program by name (the candidates to try, and
// their order, are the caller's policy) and it never starts what it finds.
//
// The rules are pure: Resolve and ResolveFirst take an Env (GOOS, PATH,
// PATHEXT, current directory...) and an FS view, so the Windows rules run
// and are tested on every OS; EnvFromOS and OSFS describe the real machine.
// Resolve states the rules (docs/contract.md, "Resolution"). Beyond them, a
// configured Windows path naming no extension (npm's sh script) is tried
// with PATHEXT appended in its own directory, like Go's LookPath, with a
// warning (never reaching .ps1), and where.exe is diagnostics only
// (WhereCheck, WhereResult.Disagreement).
package discovery

// Kind says how a resolved file must be launched.
type Kind string

const (
	Native     Kind = "native"     // a Windows .exe or .com, started directly
	CmdShim    Kind = "cmd-shim"   // a Windows .cmd or .bat, started through cmd.exe
	PowerShell Kind = "powershell" // a Windows .ps1, started through a PowerShell host
	POSIX      Kind = "posix"      // an executable file on Linux or macOS
)

// Source says where a candidate came from.
type Source string

const (
	SourceOverride Source = "override" // a value the caller configured (a setting, a flag)
	SourceEnv      Source = "env"      // a value read from an environment variable
	SourcePath     Source = "path"     // a bare name searched on PATH
)

// Step is one entry of a resolution trail: a candidate, optionally a
// directory or file tried for it, and why it was chosen or skipped.
type Step struct {
	Candidate string `json:"candidate"`
	Dir       string `json:"dir,omitempty"`
	Path      string `json:"path,omitempty"`
	// Outcome is chosen (this file is the resolution), fallback (an App
	// Execution Alias stub, used only when no real file is found), skipped
	// (a file or PATH entry passed over; Detail says why), no-match (a
	// directory without the name), refused (a PATH entry or value that
	// breaks a rule), ignored (a match in the current directory, which is
	// never searched), not-found (no launchable file) or omitted (the
	// trail's bound was reached; Detail counts what was left out).
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

// Resolution is a file that was found and how it must be launched.
type Resolution struct {
	Path      string   `json:"path"` // absolute path of the file found
	Name      string   `json:"name"` // its file name, e.g. tool.cmd
	Kind      Kind     `json:"kind"`
	Source    Source   `json:"source"`
	Candidate string   `json:"candidate"` // the candidate value that produced it
	Trail     []Step   `json:"trail"`
	Warnings  []string `json:"warnings,omitempty"`
	Links     []string `json:"links,omitempty"` // POSIX symlink chain, first to last
	// Alias reports that Path is an App Execution Alias stub (Windows): it
	// was chosen only because no real file was found.
	Alias bool `json:"alias,omitzero"`
	// Attempts is the verdict on every candidate tried, in order.
	Attempts []Attempt `json:"candidates,omitempty"`
}

// Executable is the file that runs: the last target of Links when Path
// is a symbolic link (an installer's versioned build behind its PATH
// entry), else Path.
func (r Resolution) Executable() string {
	if len(r.Links) > 0 {
		return r.Links[len(r.Links)-1]
	}
	return r.Path
}
