// Command cursorkit finds, launches and supervises the Cursor CLI
// (cursor-agent) on Windows, macOS and Linux. docs/contract.md ("The
// command line") is its stable contract; each subcommand lives in its own
// file.
package main

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/mcpbridge"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// An agent CLI starting the MCP bridge of a turn (run --tools) starts
	// this binary as the bridge program, which relays and exits here.
	mcpbridge.RunIfBridge()
	// The stop function is not called: the process exits at once, and
	// handing the signals back to the runtime costs up to a millisecond
	// of every command's wall time for nothing.
	ctx, _ := stopOnSignals(context.Background())
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// stopOnSignals returns a context cancelled by the first of the signals
// that ask a command to stop (stopSignals), with a cause that names it: a
// stop like a deadline, so the tree is stopped and the command exits 130
// (docs/contract.md "Supervision"). Catching SIGPIPE also turns a write to
// a closed stdout into an EPIPE error instead of the end of cursorkit.
func stopOnSignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stopSignals()...)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			cancel(failure.New(failure.Cancelled, "%s", signalCause(sig)))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// errStdoutClosed is the cause of a command stopped because its stdout
// can no longer be written (the reader went away: `| head`).
var errStdoutClosed = failure.New(failure.Cancelled, "stdout was closed")

// app is what every subcommand receives: its streams, the global flags and
// the environment, passed in so tests run commands in-process.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	// settingsPath is --settings, CURSORKIT_SETTINGS, or the default file;
	// settingsSet tells an explicit (maybe blank, refused) flag apart.
	settingsPath string
	settingsSet  bool
	// settingsInCwd is true when there is no user config directory, so the
	// default settingsPath is in the current directory.
	settingsInCwd bool
	// binary is --binary; binarySet tells an explicit empty value apart.
	binary    string
	binarySet bool
	// json is --json given before the command (a command that has --json
	// takes it as its own default).
	json bool
	// lineErr is the error of the flags before the command, reported by the
	// command's parseFlags (as JSON when the line asks for it).
	lineErr error
}

// command is one subcommand. run gets the arguments after the command name
// and returns the process exit code.
type command struct {
	name    string
	usage   string
	summary string
	run     func(ctx context.Context, a *app, args []string) int
	// hidden keeps a command out of the usage (the job worker's).
	hidden bool
}

// commands lists the subcommands in the order usage shows them.
func commands() []command {
	return []command{
		{name: "probe", usage: probeUsage, summary: "resolve the binary, run --version, judge the build", run: runProbe},
		{name: "status", usage: statusUsage, summary: "probe + `status --format json`", run: runStatus},
		{name: "models", usage: modelsUsage, summary: "the model catalog (cached)", run: runModels},
		{name: "doctor", usage: doctorUsage, summary: "all of the above at once, plus shim diagnostics", run: runDoctor},
		{name: "run", usage: runUsage, summary: "one supervised prompt turn; PROMPT from the argument or stdin", run: runRun},
		{name: "task", usage: "task [flags] [--] [PROMPT]", summary: "one sandboxed, recorded Cursor task in a private home (consult, or --write)", run: runTask},
		{name: "review", usage: "review [flags]", summary: "review the working tree or the branch: a read-only task whose reply is a validated verdict", run: runReview},
		{name: "shim", usage: shimUsage, summary: "how TARGET would be found and launched, exactly", run: runShim},
		{name: "serve", usage: serveUsage, summary: "the settings validation endpoint (HTTP)", run: runServe},
		{name: "version", usage: "version", summary: "print cursorkit's version", run: runVersion},
		{name: "jobs", usage: "jobs status|result|cancel|history|cleanup|accept [ID] [flags]", summary: "jobs: state, output (--wait), cancel, history, cleanup --session, accept", run: runJobs},
		{name: "agents", usage: agentsUsage, summary: "which agent CLIs (cursor, claude, codex, gemini) this machine has, and how each would launch", run: runAgents},
		{name: "mcp", usage: "mcp stage|heartbeat|release|reconcile|status [flags]", summary: "stage MCP servers into a worktree's .cursor/mcp.json, crash-safely", run: runMCP},
		{name: workerCommand, hidden: true, run: runWorker},
		{name: "exec", usage: execUsage, summary: "supervise any program (resolution, shim, deadlines, tree kill)", run: runExec},
	}
}

// run is the whole command line. Global flags may come before the command
// or after it (docs/contract.md, "The command line"): those before it are
// parsed here, those after it by the command's parseFlags, into the same
// fields, so the last one given wins.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	global := newFlags("")
	global.SetInterspersed(false)
	a.addGlobalFlags(global)
	global.BoolVar(&a.json, "json", false, "print JSON on stdout, also on failure (probe, status, models, doctor, run, task, review, shim explain)")
	help := global.BoolP("help", "h", false, "show this help")
	// The command is found by pflag's rules even when a flag before it is
	// bad, so that the command reports the error, as JSON when asked.
	scan := scanFlags(global, args, false)
	err := global.Parse(args[:scan.end])
	if err != nil {
		a.json = scan.json
	}
	a.binarySet = global.Changed("binary")
	a.settingsSet = global.Changed("settings")
	if err == nil && *help {
		usage(stdout, global)
		return failure.ExitOK
	}
	if scan.end == len(args) {
		if err == nil && !a.json {
			usage(stderr, global)
			return failure.ExitInput
		}
		if err == nil {
			err = errors.New("no command given")
		}
		return a.topLevelError(global, err)
	}
	name := args[scan.end]
	for _, c := range commands() {
		if c.name == name {
			a.lineErr = err
			return c.run(ctx, a, args[scan.end+1:])
		}
	}
	if err == nil {
		err = fmt.Errorf("unknown command %q", name)
	}
	return a.topLevelError(global, err)
}

// topLevelError reports a command line that reaches no command: one JSON
// error object on stdout and the usage on stderr with --json, else the
// error and the usage on stderr.
func (a *app) topLevelError(global *pflag.FlagSet, err error) int {
	err = flagError(err)
	if a.json {
		a.writeJSON(errorBody{Error: errorObject{Kind: failure.Input, Message: err.Error()}})
	} else {
		fmt.Fprintf(a.stderr, "cursorkit: %v\n\n", err)
	}
	usage(a.stderr, global)
	return failure.ExitInput
}

func usage(w io.Writer, global *pflag.FlagSet) {
	fmt.Fprintln(w, "usage: cursorkit [--settings FILE] [--binary PATH] [--json] COMMAND [ARGS]")
	fmt.Fprintln(w, "\ncommands:")
	cmds := commands()
	width := 0
	cmds = slices.DeleteFunc(cmds, func(c command) bool { return c.hidden })
	for _, c := range cmds {
		width = max(width, len(c.usage))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.usage, c.summary)
	}
	fmt.Fprintln(w, "\nglobal flags (before or after the command):")
	fmt.Fprint(w, global.FlagUsages())
}

// addGlobalFlags adds --settings and --binary to fs, bound to a's fields
// with their current values as defaults: a command takes them after its
// name as before it, and the last one given wins.
func (a *app) addGlobalFlags(fs *pflag.FlagSet) {
	fs.StringVar(&a.settingsPath, "settings", a.settingsPath, "settings `FILE` (default $CURSORKIT_SETTINGS or <user config dir>/cursorkit/settings.json)")
	fs.StringVar(&a.binary, "binary", a.binary, "Cursor CLI binary `PATH` to use for this call, overriding the settings")
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
	fs := pflag.NewFlagSet(strings.TrimSpace("cursorkit "+name), pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs
}

// parseFlags adds the global flags to a subcommand's fs and parses args
// into it. On error (or --help) it prints the subcommand's usage and
// returns the exit code to use, ok false. A flag error, like every other
// failure, is one JSON error object on stdout when the command has --json
// and the line asks for it, before or after the bad flag (docs/contract.md,
// "The command line").
func (a *app) parseFlags(fs *pflag.FlagSet, usageLine string, args []string) (code int, ok bool) {
	a.addGlobalFlags(fs)
	hasJSON := fs.Lookup("json") != nil
	asJSON := a.json
	// Every command with --json takes flags anywhere (interspersed).
	if scan := scanFlags(fs, args, true); scan.jsonSeen {
		asJSON = scan.json
	}
	err := a.lineErr
	if err == nil {
		err = fs.Parse(args)
	}
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprintf(a.stdout, "usage: cursorkit %s\n\nflags:\n%s", usageLine, fs.FlagUsages())
		return failure.ExitOK, false
	}
	if err == nil && a.json && !hasJSON {
		err = fmt.Errorf("--json does not apply to %s", strings.TrimPrefix(fs.Name(), "cursorkit "))
	}
	if err != nil {
		return a.usageError(asJSON && hasJSON, usageLine, err), false
	}
	a.binarySet = a.binarySet || fs.Changed("binary")
	a.settingsSet = a.settingsSet || fs.Changed("settings")
	if a.settingsSet && strings.TrimSpace(a.settingsPath) == "" {
		err := failure.New(failure.Input, "--settings names no file; give a file, or leave the flag out for the default settings file")
		return a.usageError(asJSON && hasJSON, usageLine, err), false
	}
	if a.settingsPath == "" {
		a.settingsPath, a.settingsInCwd = defaultSettingsPath(a.getenv)
	}
	return 0, true
}

// usageError reports a bad command line of a subcommand as an input
// failure: one JSON error object on stdout and the usage on stderr when
// asJSON, else the error and the usage on stderr.
func (a *app) usageError(asJSON bool, usageLine string, err error) int {
	err = flagError(err)
	if asJSON {
		a.writeJSON(errorBody{Error: errorObject{Kind: failure.Input, Message: err.Error()}})
		fmt.Fprintf(a.stderr, "usage: cursorkit %s\n", usageLine)
	} else {
		fmt.Fprintf(a.stderr, "cursorkit: %v\nusage: cursorkit %s\n", err, usageLine)
	}
	return failure.ExitInput
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

// jsonOptions are the options of every JSON value the command writes:
// map members sorted and invalid UTF-8 written as U+FFFD, as the settings
// endpoint writes, and U+2028 and U+2029 escaped, as run --json writes. No
// HTML escaping, and a nil slice is [] (docs/contract.md, "JSON shapes").
func jsonOptions() json.Options {
	return json.JoinOptions(json.Deterministic(true), jsontext.AllowInvalidUTF8(true), jsontext.EscapeForJS(true))
}

// writeJSON writes v as one JSON value on one line of stdout.
func (a *app) writeJSON(v any) {
	data, err := json.Marshal(v, jsonOptions())
	if err == nil {
		_, err = a.stdout.Write(append(data, '\n'))
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "cursorkit: writing JSON: %v\n", err)
	}
}

func runVersion(_ context.Context, a *app, args []string) int {
	fs := newFlags("version")
	if code, ok := a.parseFlags(fs, "version", args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return a.usageError(false, "version", errors.New("version takes no arguments"))
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
