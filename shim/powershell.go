package shim

import (
	"strings"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
)

// powerShellFlags precede -File: no banner, no profile scripts, no
// prompts (they fail instead of hanging), and the script may run whatever
// the machine's execution policy says (Group Policy can still forbid it).
var powerShellFlags = [...]string{"-NoLogo", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-File"}

// validatePowerShellArgs checks arguments for a .ps1 run with -File. It
// refuses, as failure.Input with an *ArgError cause:
//   - "-", "--" and "-name:value" (any argument starting with '-' that
//     holds ':'): PowerShell's -File binding consumes or splits them
//     (PowerShell issues #10510, #16432);
//   - any other argument starting with '-', unless dashArgs is set: it may
//     bind to a parameter of the script instead of arriving as a value
//     (#4225, #17519);
//   - empty arguments, arguments holding '"', and arguments with a space
//     or tab that end in '\': Windows PowerShell 5.1 drops or mis-quotes
//     them when the script hands $args to a native program, as npm's .ps1
//     shims do (#1995);
//   - NUL and bytes that are not UTF-8.
func validatePowerShellArgs(args []string, dashArgs bool) error {
	for i, a := range args {
		if err := validateWindowsArg(i, a); err != nil {
			return err
		}
		switch {
		case a == "":
			return argErr(i, NoChar, "is empty, and Windows PowerShell drops empty arguments it passes on to programs")
		case a == "-" || a == "--":
			return argErr(i, '-', "PowerShell's -File binding consumes a lone - or --")
		case strings.HasPrefix(a, "-") && strings.ContainsRune(a, ':'):
			return argErr(i, ':', "PowerShell's -File binding splits -name:value arguments")
		case strings.HasPrefix(a, "-") && !dashArgs:
			return argErr(i, '-', "PowerShell's -File binding may take an argument starting with - as a parameter name (allow with Options.PowerShellDashArgs)")
		case strings.ContainsRune(a, '"'):
			return argErr(i, '"', "Windows PowerShell mis-quotes it when the script passes it on to a program")
		case strings.HasSuffix(a, `\`) && strings.ContainsAny(a, " \t"):
			return argErr(i, '\\', "Windows PowerShell quotes an argument with spaces without doubling its trailing backslashes, so the program behind the script would see the closing quote escaped")
		}
	}
	return nil
}

func buildPowerShell(script string, args []string, opts Options) (Plan, error) {
	if err := validatePowerShellArgs(args, opts.PowerShellDashArgs); err != nil {
		return Plan{}, err
	}
	host, err := powerShellHost(opts)
	if err != nil {
		return Plan{}, err
	}
	argv := make([]string, 0, 1+len(powerShellFlags)+1+len(args))
	argv = append(argv, host)
	argv = append(argv, powerShellFlags[:]...)
	argv = append(argv, script)
	argv = append(argv, args...)
	line := composeCommandLine(argv)
	if err := checkLength(line, maxCommandLine, "CreateProcess"); err != nil {
		return Plan{}, err
	}
	return Plan{Program: host, Args: argv, CommandLine: line, Kind: discovery.PowerShell, Target: script}, nil
}

// powerShellHost returns the configured host, else PowerShell 7 from
// Program Files when it exists, else Windows PowerShell from System32;
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
