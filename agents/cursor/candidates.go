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
// through getenv, then cursor-agent and cursor on PATH.
//
// Values are trimmed of surrounding white space and otherwise kept
// verbatim: never split, unquoted or expanded, so a Windows path with
// spaces is one candidate. Empty values are dropped. A value already
// listed is not repeated, so a configured value of exactly cursor-agent or
// cursor is that PATH candidate, tried once, at the configured position
// and with the configured source. getenv may be nil (no environment).
func Candidates(override string, getenv func(string) string) []discovery.Candidate {
	cands := make([]discovery.Candidate, 0, 4)
	add := func(c discovery.Candidate) {
		c.Value = strings.TrimSpace(c.Value)
		if c.Value == "" {
			return
		}
		for _, have := range cands {
			if have.Value == c.Value {
				return
			}
		}
		cands = append(cands, c)
	}
	add(discovery.Candidate{Value: override, Source: discovery.SourceOverride, Origin: "configured binary"})
	if getenv != nil {
		add(discovery.Candidate{Value: getenv(EnvBinary), Source: discovery.SourceEnv, Origin: EnvBinary})
	}
	add(discovery.Candidate{Value: nameCursorAgent, Source: discovery.SourcePath})
	add(discovery.Candidate{Value: nameCursor, Source: discovery.SourcePath})
	return cands
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
