// Command cursorkit finds, launches and supervises the Cursor CLI
// (cursor-agent) on Windows, macOS and Linux. docs/contract.md ("The
// command line") is its stable contract; each subcommand lives in its own
// file.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/cursorkit/cursorkit/failure"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// app is what every subcommand receives: its streams, the global flags and
// the environment, passed in so tests run commands in-process.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	// settingsPath is --settings, CURSORKIT_SETTINGS, or the default file.
	settingsPath string
	// settingsInCwd is true when there is no user config directory, so the
	// default settingsPath is in the current directory.
	settingsInCwd bool
	// binary is --binary; binarySet tells an explicit empty value apart.
	binary    string
	binarySet bool
}

// command is one subcommand. run gets the arguments after the command name
// and returns the process exit code.
type command struct {
	name    string
	usage   string
	summary string
	run     func(ctx context.Context, a *app, args []string) int
}

// commands lists the subcommands in the order usage shows them.
func commands() []command {
	return []command{
		{name: "probe", usage: probeUsage, summary: "resolve the binary, run --version, judge the build", run: runProbe},
		{name: "status", usage: statusUsage, summary: "probe + `status --format json`", run: runStatus},
		{name: "models", usage: modelsUsage, summary: "the model catalog (cached)", run: runModels},
		{name: "doctor", usage: doctorUsage, summary: "all of the above at once, plus shim diagnostics", run: runDoctor},
		{name: "run", usage: runUsage, summary: "one supervised prompt turn; PROMPT from the argument or stdin", run: runRun},
		{name: "shim", usage: shimUsage, summary: "how TARGET would be found and launched, exactly", run: runShim},
		{name: "serve", usage: serveUsage, summary: "the settings validation endpoint (HTTP)", run: runServe},
		{name: "version", usage: "version", summary: "print cursorkit's version", run: runVersion},
		{name: "exec", usage: execUsage, summary: "supervise any program (resolution, shim, deadlines, tree kill)", run: runExec},
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	global := pflag.NewFlagSet("cursorkit", pflag.ContinueOnError)
	global.SetInterspersed(false)
	global.SetOutput(io.Discard)
	global.StringVar(&a.settingsPath, "settings", "", "settings file (default $CURSORKIT_SETTINGS or <user config dir>/cursorkit/settings.json)")
	global.StringVar(&a.binary, "binary", "", "Cursor CLI binary to use for this call, overriding the settings")
	help := global.BoolP("help", "h", false, "show this help")
	if err := global.Parse(args); err != nil {
		fmt.Fprintf(stderr, "cursorkit: %v\n\n", err)
		usage(stderr, global)
		return failure.ExitInput
	}
	a.binarySet = global.Changed("binary")
	rest := global.Args()
	if *help || len(rest) == 0 {
		usage(stdout, global)
		if *help {
			return failure.ExitOK
		}
		return failure.ExitInput
	}
	if global.Changed("settings") && strings.TrimSpace(a.settingsPath) == "" {
		return a.fail(false, failure.New(failure.Input, "--settings names no file; give a file, or leave the flag out for the default settings file"))
	}
	if a.settingsPath == "" {
		a.settingsPath, a.settingsInCwd = defaultSettingsPath(getenv)
	}
	name := rest[0]
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, a, rest[1:])
		}
	}
	fmt.Fprintf(stderr, "cursorkit: unknown command %q\n\n", name)
	usage(stderr, global)
	return failure.ExitInput
}

func usage(w io.Writer, global *pflag.FlagSet) {
	fmt.Fprintln(w, "usage: cursorkit [--settings FILE] [--binary PATH] COMMAND [ARGS]")
	fmt.Fprintln(w, "\ncommands:")
	cmds := commands()
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.usage))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.usage, c.summary)
	}
	fmt.Fprintln(w, "\nglobal flags:")
	fmt.Fprint(w, global.FlagUsages())
}

// defaultSettingsPath is CURSORKIT_SETTINGS, else the user config dir's
// cursorkit/settings.json. When no config dir is known it falls back to the
// working directory, which the caller sees in error messages; inCwd
// reports that fallback.
func defaultSettingsPath(getenv func(string) string) (path string, inCwd bool) {
	if p := strings.TrimSpace(getenv("CURSORKIT_SETTINGS")); p != "" {
		return p, false
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return filepath.Join(".", "cursorkit-settings.json"), true
	}
	return filepath.Join(dir, "cursorkit", "settings.json"), false
}

// newFlags returns a flag set for a subcommand that reports errors as usage
// errors instead of exiting.
func newFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("cursorkit "+name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// parseFlags parses args into fs; on error (or --help) it prints the
// subcommand's usage and returns the exit code to use, ok false.
func (a *app) parseFlags(fs *pflag.FlagSet, usageLine string, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(a.stdout, "usage: cursorkit %s\n\nflags:\n%s", usageLine, fs.FlagUsages())
		return failure.ExitOK, false
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "cursorkit: %v\nusage: cursorkit %s\n", err, usageLine)
		return failure.ExitInput, false
	}
	return 0, true
}

// errorBody is the JSON failure shape (docs/contract.md, "JSON shapes").
type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Kind    failure.Kind `json:"kind"`
	Message string       `json:"message"`
}

// fail reports err: as one JSON object on stdout when asJSON, otherwise as a
// line on stderr. It returns the cursor commands' exit code for err's kind.
func (a *app) fail(asJSON bool, err error) int {
	kind := failure.KindOf(err)
	if asJSON {
		a.writeJSON(errorBody{Error: errorObject{Kind: kind, Message: err.Error()}})
	} else {
		fmt.Fprintf(a.stderr, "cursorkit: %v (%s)\n", err, kind)
	}
	return failure.ExitCode(kind)
}

// writeJSON writes v as one JSON object and a newline on stdout.
func (a *app) writeJSON(v any) {
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(a.stderr, "cursorkit: writing JSON: %v\n", err)
	}
}

func runVersion(_ context.Context, a *app, args []string) int {
	fs := newFlags("version")
	if code, ok := a.parseFlags(fs, "version", args); !ok {
		return code
	}
	fmt.Fprintf(a.stdout, "cursorkit %s\n", version)
	return failure.ExitOK
}

// checkSupervisionFlags returns an input error when one of the named
// duration flags of fs is negative, or when cwd is set but is not an
// existing directory: both are caught before anything starts.
func checkSupervisionFlags(fs *pflag.FlagSet, cwd string, durations ...string) error {
	for _, name := range durations {
		if d, err := fs.GetDuration(name); err == nil && d < 0 {
			return failure.New(failure.Input, "--%s must not be negative", name)
		}
	}
	if cwd != "" {
		if info, err := os.Stat(cwd); err != nil || !info.IsDir() {
			return failure.New(failure.Input, "--cwd %q is not a usable directory", cwd)
		}
	}
	return nil
}
