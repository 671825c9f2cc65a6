package cursor

import (
	"strings"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
)

// EnvBinary is the environment variable that names the Cursor CLI binary.
const EnvBinary = "CURSOR_AGENT_BIN"

// The bare names searched on PATH, in order. The bare name `agent` is
// deliberately absent: other CLIs install an `agent` earlier on PATH.
const (
	nameCursorAgent = "cursor-agent"
	nameCursor      = "cursor"
)

// Candidates returns the Cursor CLI candidates in the order they are
// tried (docs/contract.md, "Resolution"): the configured override (the
// settings file's cursorCliBinaryPath or --binary), then EnvBinary read
// through getenv (nil: none), then cursor-agent and cursor on PATH, as
// discovery.Candidates lists them.
func Candidates(override string, getenv func(string) string) []discovery.Candidate {
	return discovery.Candidates(override, EnvBinary, getenv, nameCursorAgent, nameCursor)
}

// CheckCandidates is CheckCandidate of each of cands, in order: the
// first refusal.
func CheckCandidates(cands []discovery.Candidate, goos string) error {
	for _, c := range cands {
		if err := CheckCandidate(c, goos); err != nil {
			return err
		}
	}
	return nil
}

// CheckCandidate refuses a candidate that is the bare name agent (on
// Windows in any case, with or without one launchable extension):
// other CLIs install an `agent` earlier on PATH, so it would start some
// other program. A path to a file named agent is fine. The error is a
// failure.Input naming the fix.
func CheckCandidate(c discovery.Candidate, goos string) error {
	v := strings.TrimSpace(c.Value)
	if goos == "windows" {
		if strings.ContainsAny(v, `\/:`) {
			return nil
		}
		v = strings.ToLower(strings.TrimRight(v, ". "))
		if i := strings.LastIndexByte(v, '.'); i > 0 {
			switch v[i:] {
			case ".exe", ".com", ".cmd", ".bat", ".ps1":
				v = v[:i]
			}
		}
	}
	if v != "agent" {
		return nil
	}
	return failure.New(failure.Input, "the bare name agent is ambiguous (other CLIs install one earlier on PATH); give the full path of the Cursor CLI")
}

// InstallHint says how to get a Cursor CLI, for messages that report none
// could be found.
const InstallHint = "install the Cursor CLI (Linux and macOS: curl https://cursor.com/install -fsS | bash; " +
	"Windows PowerShell: irm 'https://cursor.com/install?win32=true' | iex), " +
	"or set cursorCliBinaryPath in the settings file (or pass --binary) to the cursor-agent you have"
