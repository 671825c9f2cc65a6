package shim

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
)

// powerShellFlags precede -File: no banner, no profile scripts, no
// prompts (they fail instead of hanging), and the script may run whatever
// the machine's execution policy says (Group Policy can still forbid it).
var powerShellFlags = [...]string{"-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File"}

// validatePowerShellArgs refuses, as failure.Input with an *ArgError cause,
// exactly the arguments a script started with -File would not receive as
// they are, under Windows PowerShell 5.1 and PowerShell 7 alike (the plan
// may use either host; docs/notes/research.md, "PowerShell .ps1 launches"):
// NUL and non-UTF-8 bytes; a lone dash (also the en dash, em dash or
// horizontal bar), which Windows PowerShell takes for a nameless parameter;
// a dash argument holding ':' (split as -name:value, true and false turned
// into booleans, a trailing ':' taking the next argument) or ending in white
// space (dropped); and an empty argument, '"', or a trailing '\' with white
// space, which Windows PowerShell drops or misquotes when the script hands
// $args to a program. Every other argument, dash-led ones included (-p,
// --output-format, --, -1), arrives in $args verbatim.
func validatePowerShellArgs(args []string) error {
	return validateWindowsArgs(args, powerShellArgProblem)
}

// powerShellArgProblem applies validatePowerShellArgs's rules to args[i] = a.
func powerShellArgProblem(i int, a string) error {
	if a == "" {
		return argErr(i, NoChar, "is empty, and Windows PowerShell drops empty arguments when the script passes them on to a program")
	}
	if first, size := utf8.DecodeRuneInString(a); isPowerShellDash(first) {
		rest := a[size:]
		if rest == "" {
			return argErr(i, first, "a lone dash, which Windows PowerShell's -File takes for a parameter without a name, and fails")
		}
		if strings.ContainsRune(rest, ':') {
			return argErr(i, ':', "it starts with a dash, so PowerShell's -File takes it for -name:value and splits it at the colon")
		}
		if last, _ := utf8.DecodeLastRuneInString(a); unicode.IsSpace(last) {
			return argErr(i, last, "it starts with a dash, so PowerShell's -File takes it for a parameter name and drops the white space at its end")
		}
	}
	if strings.ContainsRune(a, '"') {
		return argErr(i, '"', "Windows PowerShell does not escape it when the script passes the argument on to a program")
	}
	if strings.HasSuffix(a, `\`) && strings.IndexFunc(a, unicode.IsSpace) >= 0 {
		return argErr(i, '\\', "Windows PowerShell quotes an argument holding white space without doubling its trailing backslashes, so the program behind the script would see the closing quote escaped")
	}
	return nil
}

// isPowerShellDash reports whether PowerShell takes r for the dash that
// starts a parameter name: '-', U+2013, U+2014 or U+2015.
func isPowerShellDash(r rune) bool {
	return r == '-' || r == '\u2013' || r == '\u2014' || r == '\u2015'
}

func buildPowerShell(script string, args []string, opts Options) (Command, error) {
	if err := validatePowerShellArgs(args); err != nil {
		return Command{}, err
	}
	host, err := powerShellHost(opts)
	if err != nil {
		return Command{}, err
	}
	argv := slices.Concat([]string{host}, powerShellFlags[:], []string{script}, args)
	return createProcessPlan(argv, discovery.PowerShell, script)
}

// powerShellHost picks the host as Options.PowerShellHost describes;
// always an absolute path.
func powerShellHost(opts Options) (string, error) {
	if opts.PowerShellHost != "" {
		if !isWindowsAbs(opts.PowerShellHost) || strings.ContainsRune(opts.PowerShellHost, '"') ||
			windowsSafeString(opts.PowerShellHost) != nil {
			return "", failure.New(failure.Setup, "the configured PowerShell host must be an absolute Windows path")
		}
		return opts.PowerShellHost, nil
	}
	if isWindowsAbs(opts.ProgramFiles) && opts.Exists != nil && windowsSafeString(opts.ProgramFiles) == nil {
		pwsh := joinWindows(opts.ProgramFiles, `PowerShell\7\pwsh.exe`)
		if opts.Exists(pwsh) {
			return pwsh, nil
		}
	}
	root, err := systemRoot(opts)
	if err != nil {
		return "", err
	}
	return joinWindows(root, `System32\WindowsPowerShell\v1.0\powershell.exe`), nil
}
