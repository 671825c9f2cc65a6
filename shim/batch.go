package shim

import (
	"strings"
	"unicode"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
)

// batchRefused are the characters cmd.exe gives meaning to even inside
// quotes (% and !, expanded before quotes are seen; " toggles quoting) or
// outside them (the operators and ^), and which a batch file re-parsing
// %1 or %* could turn into commands. They are refused, never escaped.
const batchRefused = `"%!^&|<>()`

// validateBatchArgs refuses, as failure.Input with an *ArgError naming the
// first offending argument and character, any of batchRefused, any control
// character (CR, LF, NUL and the rest of Unicode's Cc class) and bytes that
// are not UTF-8 (Char utf8.RuneError). What it accepts, batchCommandLine
// carries through cmd.exe intact.
func validateBatchArgs(args []string) error {
	for i, a := range args {
		for j, r := range a {
			if reason := windowsRuneProblem(a, j, r); reason != "" {
				return argErr(i, r, reason)
			}
			if strings.ContainsRune(batchRefused, r) {
				return argErr(i, r, "cmd.exe would interpret it, so it cannot be passed to a batch file safely")
			}
			if unicode.IsControl(r) {
				return argErr(i, r, "control characters cannot be passed to a batch file")
			}
		}
	}
	return nil
}

// batchUnquoted are the characters an argument may hold and still go
// unquoted, besides ASCII letters and digits: none of them separates batch
// arguments (space, tab, = , ; do) or means anything to cmd.exe.
const batchUnquoted = `#$*+-./:?@\_`

// quoteBatchArg quotes an argument that validateBatchArgs accepted for a
// batch command line: it is wrapped in '"' when it is empty, ends in '\'
// (whose trailing backslashes are then doubled, so a program behind the
// script that reads "%~1" or %* with C runtime rules sees them intact), or
// holds anything but ASCII letters, digits and batchUnquoted. The result of
// an unvalidated argument is unspecified.
func quoteBatchArg(a string) string {
	if a != "" && !strings.HasSuffix(a, `\`) && plainASCII(a, batchUnquoted) {
		return a
	}
	trailing := len(a) - len(strings.TrimRight(a, `\`))
	return `"` + a + strings.Repeat(`\`, trailing) + `"`
}

// validateBatchScript refuses script paths that cmd.exe would re-parse:
// '"' would end the quoting around it, % and ! would expand, control
// characters would end or corrupt the line, and a trailing '\' would
// escape the closing quote for a program behind the script. Spaces and
// parentheses are fine: the path is always quoted.
func validateBatchScript(script string) error {
	for _, r := range script {
		switch {
		case r == '"' || r == '%' || r == '!':
			return targetErr(r, "cmd.exe would interpret it inside the batch file's path; move or rename the script")
		case unicode.IsControl(r):
			return targetErr(r, "a batch file's path cannot hold control characters")
		}
	}
	if strings.HasSuffix(script, `\`) || strings.HasSuffix(script, `/`) {
		return targetErr(NoChar, "a batch file's path cannot end in a separator")
	}
	return nil
}

// batchCommandLine returns the command line that runs script through
// cmd.exe with args, or a typed error (see validateBatchArgs and Build):
//
//	cmd.exe /d /v:off /s /c ""<script>" <arg> <arg>..."
//
// /d skips AutoRun commands, /v:off keeps !VAR! unexpanded, and /s /c makes
// cmd.exe drop exactly the outermost pair of quotes, so the script path
// stays quoted. argv[0] is the bare name cmd.exe: the absolute program goes
// separately to CreateProcess (Command.Program) and cmd.exe ignores its
// argv[0], so no path goes through cmd's parser twice. The line is passed
// verbatim (SysProcAttr.CmdLine), never quoted again.
func batchCommandLine(script string, args []string) (string, error) {
	if err := validateBatchScript(script); err != nil {
		return "", err
	}
	if err := validateBatchArgs(args); err != nil {
		return "", err
	}
	parts := []string{`"` + script + `"`}
	for _, a := range args {
		parts = append(parts, quoteBatchArg(a))
	}
	line := `cmd.exe /d /v:off /s /c "` + strings.Join(parts, " ") + `"`
	if err := checkLength(line, maxBatchCommandLine, "cmd.exe"); err != nil {
		return "", err
	}
	return line, nil
}

func buildBatch(script string, args []string, opts Options) (Command, error) {
	line, err := batchCommandLine(script, args)
	if err != nil {
		return Command{}, err
	}
	program, warning, err := cmdExe(opts)
	if err != nil {
		return Command{}, err
	}
	// cmd.exe does not split its command line like the C runtime: after
	// its switches, everything inside the outer quotes is one command.
	payload := strings.TrimPrefix(line, `cmd.exe /d /v:off /s /c "`)
	payload = strings.TrimSuffix(payload, `"`)
	plan := Command{
		Program:     program,
		Args:        []string{"cmd.exe", "/d", "/v:off", "/s", "/c", payload},
		CommandLine: line,
		Kind:        discovery.CmdShim,
		Target:      script,
	}
	if warning != "" {
		plan.Warnings = []string{warning}
	}
	return plan, nil
}

// cmdExe picks cmd.exe as Options.ComSpec describes, with a warning saying
// why ComSpec was not used.
func cmdExe(opts Options) (program, warning string, err error) {
	var why string
	switch _, name := splitWindowsPath(opts.ComSpec); {
	case opts.ComSpec == "":
		why = "ComSpec is not set"
	case strings.ContainsRune(opts.ComSpec, '"'):
		why = `ComSpec holds '"'`
	case !isWindowsAbs(opts.ComSpec):
		why = "ComSpec is not an absolute path"
	case !strings.EqualFold(name, "cmd.exe"):
		why = "ComSpec does not name cmd.exe"
	case windowsSafeString(opts.ComSpec) != nil:
		why = "ComSpec is not a valid path"
	default:
		return opts.ComSpec, "", nil
	}
	root, err := systemRoot(opts)
	if err != nil {
		return "", "", err
	}
	return joinWindows(root, `System32\cmd.exe`), why + "; using the system cmd.exe instead", nil
}

func systemRoot(opts Options) (string, error) {
	if !isWindowsAbs(opts.SystemRoot) || windowsSafeString(opts.SystemRoot) != nil {
		return "", failure.New(failure.Setup, "the Windows directory (SystemRoot) is unknown or not an absolute path, so the system's cmd.exe and PowerShell cannot be located")
	}
	return opts.SystemRoot, nil
}
