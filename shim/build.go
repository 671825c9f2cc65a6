package shim

import (
	"path"
	"runtime"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
)

// Options describe the machine a plan is built for. Build reads nothing
// else, so every Windows rule can be exercised on any OS by filling them in;
// OptionsFromOS fills them in for the running machine.
type Options struct {
	// GOOS selects the rules: "windows" for Windows, anything else for
	// POSIX. Empty means runtime.GOOS.
	GOOS string
	// ComSpec is the ComSpec environment variable. It is used for a batch
	// file only when it is an absolute path whose file name is cmd.exe
	// (any case) and holds no '"'; otherwise SystemRoot's cmd.exe is used
	// and the plan carries a warning saying why.
	ComSpec string
	// SystemRoot is the Windows directory (C:\Windows), absolute. cmd.exe
	// and Windows PowerShell are taken from its System32 folder.
	SystemRoot string
	// ProgramFiles is the Program Files folder, where PowerShell 7 lives
	// (<ProgramFiles>\PowerShell\7\pwsh.exe).
	ProgramFiles string
	// PowerShellHost is a configured PowerShell executable for .ps1
	// targets. It must be absolute. Empty means: PowerShell 7 when Exists
	// reports it, else Windows PowerShell from System32.
	PowerShellHost string
	// Exists reports whether a regular file exists at path. Only the
	// PowerShell 7 lookup uses it; nil means "never".
	Exists func(path string) bool
}

// Limits on the final command line, in UTF-16 code units.
const (
	// maxCommandLine is CreateProcess's limit, 32,767 units including the
	// terminating NUL.
	maxCommandLine = 32766
	// maxBatchCommandLine leaves headroom under cmd.exe's 8191 for the
	// shim's own re-expansion of %* beside %dp0% and its program path.
	maxBatchCommandLine = 8000
)

// Build turns the resolved target res and the arguments for it (without
// argv[0]) into the exact plan that starts it on opts.GOOS
// (docs/contract.md, "Launch plans"):
//
//   - .exe and .com on Windows, and every POSIX target: the target itself,
//     Args[0] its absolute path; on Windows each argument is quoted for
//     CommandLineToArgvW and the CRT, within CreateProcess's 32,767 units.
//   - .cmd and .bat on Windows, recognised case-insensitively after the
//     trailing dots and spaces Windows ignores are stripped (the
//     CVE-2024-43402 bypass): cmd.exe runs batchCommandLine's line, with
//     every argument refused before anything runs if it holds any of
//     " % ! ^ & | < > ( ), a control character or non-UTF-8 bytes, and
//     otherwise quoted by quotes alone, within 8,000 units.
//   - .ps1 on Windows: a PowerShell host (see Options.PowerShellHost) with
//     -File, refusing only the arguments -File or the script's hand-over to
//     a program would change (a lone dash, a dash argument holding ':' or
//     ending in white space, an empty argument, '"', a trailing '\' with
//     white space).
//
// Refusals are typed: failure.Input for the arguments (an *ArgError cause
// naming the index and character, or a command line over its limit), and
// failure.Setup for a target or machine that cannot be launched safely (an
// unsupported or missing extension, an unusable script path, SystemRoot or
// PowerShell host; a *TargetError cause where a file name is at fault).
// Build never touches the file system beyond opts.Exists.
func Build(res discovery.Resolution, args []string, opts Options) (Command, error) {
	if res.Path == "" {
		return Command{}, failure.New(failure.Setup, "nothing to launch: the resolution holds no path")
	}
	goos := opts.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	if goos != "windows" {
		return buildPOSIX(res, args)
	}
	return buildWindows(res, args, opts)
}

func buildPOSIX(res discovery.Resolution, args []string) (Command, error) {
	if !path.IsAbs(res.Path) {
		return Command{}, targetErr(NoChar, "the target must be an absolute path")
	}
	if strings.IndexByte(res.Path, 0) >= 0 {
		return Command{}, targetErr(0, "a path cannot hold NUL")
	}
	for i, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return Command{}, argErr(i, 0, "a process argument cannot carry NUL")
		}
	}
	argv := append([]string{res.Path}, args...)
	return Command{
		Program:     res.Path,
		Args:        argv,
		CommandLine: shellQuote(argv),
		Kind:        discovery.POSIX,
		Target:      res.Path,
	}, nil
}

func buildWindows(res discovery.Resolution, args []string, opts Options) (Command, error) {
	target, kind, warnings, err := classifyWindows(res.Path)
	if err != nil {
		return Command{}, err
	}
	if res.Kind != "" && res.Kind != kind {
		warnings = append(warnings, "the resolver classified the target as "+string(res.Kind)+
			"; its file name makes it "+string(kind)+", which is what runs")
	}
	var plan Command
	switch kind {
	case discovery.CmdShim:
		plan, err = buildBatch(target, args, opts)
	case discovery.PowerShell:
		plan, err = buildPowerShell(target, args, opts)
	default:
		plan, err = buildNative(target, args)
	}
	if err != nil {
		return Command{}, err
	}
	plan.Warnings = append(warnings, plan.Warnings...)
	return plan, nil
}

// classifyWindows normalises the target's file name the way Win32 path
// resolution does (trailing dots and spaces dropped) and classifies it by
// extension. It returns the normalised path, which is what the plan runs.
func classifyWindows(p string) (string, discovery.Kind, []string, error) {
	if !isWindowsAbs(p) {
		return "", "", nil, targetErr(NoChar, "the target must be an absolute Windows path")
	}
	if err := windowsSafeString(p); err != nil {
		return "", "", nil, err
	}
	if strings.ContainsRune(p, '"') {
		// Not a valid Windows file name character, and the one that would
		// end the quoting around the path in a command line.
		return "", "", nil, targetErr('"', "Windows paths cannot hold it")
	}
	dir, name := splitWindowsPath(p)
	trimmed := strings.TrimRight(name, ". ")
	if trimmed == "" {
		return "", "", nil, targetErr(NoChar, "the target has no file name")
	}
	var warnings []string
	if trimmed != name {
		warnings = append(warnings, "trailing dots and spaces were dropped from the target's file name, as Windows does when it opens it")
	}
	if strings.ContainsRune(trimmed, ':') {
		return "", "", nil, targetErr(':', "the file name names an NTFS alternate data stream; point at the file itself")
	}
	ext := ""
	if i := strings.LastIndexByte(trimmed, '.'); i >= 0 {
		ext = strings.ToLower(trimmed[i:])
	}
	var kind discovery.Kind
	switch ext {
	case ".exe", ".com":
		kind = discovery.Native
	case ".cmd", ".bat":
		kind = discovery.CmdShim
	case ".ps1":
		kind = discovery.PowerShell
	case "":
		return "", "", nil, targetErr(NoChar, "the target has no extension, so Windows cannot start it "+
			"(npm's extensionless file is a sh script); point at the .cmd or .exe beside it")
	default:
		shown := ext
		if utf8.RuneCountInString(shown) > 16 {
			shown = string([]rune(shown)[:16]) + "…"
		}
		return "", "", nil, targetErr(NoChar, "files ending in "+shown+" cannot be launched; "+
			"point at an .exe, .com, .cmd, .bat or .ps1 (for a Node.js script, its npm .cmd shim)")
	}
	return dir + trimmed, kind, warnings, nil
}

// validateWindowsArgs refuses, in the first argument that holds any, what
// no Windows command line can carry (see windowsRuneProblem) and then what
// check, if not nil, refuses.
func validateWindowsArgs(args []string, check func(i int, a string) error) error {
	for i, a := range args {
		for j, r := range a {
			if reason := windowsRuneProblem(a, j, r); reason != "" {
				return argErr(i, r, reason)
			}
		}
		if check == nil {
			continue
		}
		if err := check(i, a); err != nil {
			return err
		}
	}
	return nil
}

// windowsRuneProblem says why the rune r at byte j of a cannot travel in a
// Windows command line, or returns "": NUL ends the string, and bytes that
// are not UTF-8 cannot become UTF-16 (they would arrive as U+FFFD).
func windowsRuneProblem(a string, j int, r rune) string {
	switch {
	case r == 0:
		return "a Windows command line cannot carry NUL"
	case r == utf8.RuneError:
		if _, size := utf8.DecodeRuneInString(a[j:]); size == 1 {
			return "a Windows command line carries UTF-16, so the argument must be UTF-8"
		}
	}
	return ""
}

// windowsSafeString refuses NUL and invalid UTF-8 in a path.
func windowsSafeString(p string) error {
	for j, r := range p {
		switch {
		case r == 0:
			return targetErr(0, "a path cannot hold NUL")
		case windowsRuneProblem(p, j, r) != "":
			return targetErr(utf8.RuneError, "a Windows path must be UTF-8")
		}
	}
	return nil
}

func buildNative(target string, args []string) (Command, error) {
	if err := validateWindowsArgs(args, nil); err != nil {
		return Command{}, err
	}
	return createProcessPlan(append([]string{target}, args...), discovery.Native, target)
}

// createProcessPlan starts argv[0] with argv quoted for CommandLineToArgvW.
func createProcessPlan(argv []string, kind discovery.Kind, target string) (Command, error) {
	line := composeCommandLine(argv)
	if err := checkLength(line, maxCommandLine, "CreateProcess"); err != nil {
		return Command{}, err
	}
	return Command{Program: argv[0], Args: argv, CommandLine: line, Kind: kind, Target: target}, nil
}

func checkLength(line string, limit int, who string) error {
	if n := utf16Len(line); n > limit {
		return failure.New(failure.Input, "the command line would be %d UTF-16 units long; %s allows at most %d here, so shorten the arguments", n, who, limit)
	}
	return nil
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func argErr(index int, char rune, reason string) error {
	return &failure.Error{Kind: failure.Input, Message: "refused before launch", Err: &ArgError{Index: index, Char: char, Reason: reason}}
}

func targetErr(char rune, reason string) error {
	return &failure.Error{Kind: failure.Setup, Message: "the target cannot be launched safely", Err: &TargetError{Char: char, Reason: reason}}
}

// isWindowsAbs reports whether p is a drive-absolute (C:\) or UNC (\\server)
// path. Drive-relative forms (C:foo, \foo) are not absolute.
func isWindowsAbs(p string) bool {
	if len(p) >= 3 && isASCIILetter(p[0]) && p[1] == ':' && isWindowsSep(p[2]) {
		return true
	}
	return len(p) >= 3 && isWindowsSep(p[0]) && isWindowsSep(p[1]) && !isWindowsSep(p[2])
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isWindowsSep(c byte) bool { return c == '\\' || c == '/' }

// splitWindowsPath splits p after its last separator: dir keeps the
// separator, name is the final element.
func splitWindowsPath(p string) (dir, name string) {
	i := strings.LastIndexAny(p, `\/`)
	return p[:i+1], p[i+1:]
}

// joinWindows joins an absolute root and a relative tail with one '\'.
func joinWindows(root, tail string) string {
	return strings.TrimRight(root, `\/`) + `\` + tail
}
