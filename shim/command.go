// Package shim turns a resolved target and its arguments into an exact
// launch plan: the program to start and, on Windows, the verbatim command
// line, for native executables, .cmd/.bat shims (through cmd.exe, without
// BatBadBut-style injection) and .ps1 scripts. It never touches processes.
package shim

import "github.com/cursorkit/cursorkit/discovery"

// Command is exactly what to start, for a native executable as for a shim.
type Command struct {
	// Program is the absolute path the OS starts: the target itself, cmd.exe
	// for a batch file, or the PowerShell host for a .ps1.
	Program string `json:"program"`
	// Args is the argument vector the child receives, Args[0] included.
	// For a native or POSIX target Args[0] is the target's absolute path;
	// for a .ps1 it is the PowerShell host's. For a batch file the child is
	// cmd.exe, which does not split its command line like the C runtime:
	// Args is "cmd.exe", "/d", "/v:off", "/s", "/c" and then the one
	// command cmd.exe runs ("<script>" and the quoted arguments), which is
	// CommandLine's /c part without its outer quotes.
	Args []string `json:"args"`
	// CommandLine is, on Windows, the command line passed verbatim to
	// CreateProcess (SysProcAttr.CmdLine, no second quoting layer); on POSIX
	// it is a shell-quoted rendering of Args for display only.
	CommandLine string `json:"commandLine"`
	// Kind is the kind of the target.
	Kind discovery.Kind `json:"kind"`
	// Target is the resolved file the plan runs (the script for a shim).
	Target   string   `json:"target"`
	Warnings []string `json:"warnings,omitempty"`
}
