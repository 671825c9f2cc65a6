package main

import (
	"bufio"
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
)

// Exit codes of `cursorkit exec`, after GNU timeout. Besides these, exec
// exits with the child's own code when it ends by itself, and with 128+N
// when it died of signal N that cursorkit did not send.
const (
	execExitTimeout     = 124 // a deadline fired
	execExitFailed      = 125 // cursorkit itself failed (usage, --cwd, --report)
	execExitCannotRun   = 126 // found but cannot or may not run (refused plan, permission)
	execExitNotFound    = 127 // TARGET not found
	execExitSignalBase  = 128 // + N: died of signal N not sent by cursorkit
	execExitInterrupted = failure.ExitCancelled
)

const execUsage = "exec [flags] -- TARGET [ARG...]"

// execDrainGrace is how long the child's output pipes may stay open after
// it exited (held by a process it left behind) before that process is
// killed.
const execDrainGrace = 2 * time.Second

// execFlags are the flags of `cursorkit exec`.
type execFlags struct {
	firstLine, idle, total, grace time.Duration
	cwd, report                   string
	dryRun                        bool
}

// parseExecFlags parses exec's flags and checks them: ok is false when
// exec must exit with code at once.
func (a *app) parseExecFlags(args []string) (f execFlags, rest []string, code int, ok bool) {
	fs := newFlags("exec")
	fs.SetInterspersed(false)
	fs.DurationVar(&f.firstLine, "first-line-timeout", 0, "stop the child when no stdout line arrived within `D` (0: off)")
	fs.DurationVar(&f.idle, "idle-timeout", 0, "stop the child when stdout stays silent for `D` (0: off)")
	fs.DurationVar(&f.total, "timeout", 0, "stop the child after `D` in total (0: off)")
	fs.DurationVar(&f.grace, "grace", supervise.DefaultStopGrace, "wait `D` after the polite stop before killing the tree (0: kill at once)")
	fs.StringVar(&f.cwd, "cwd", "", "run the child in `DIR`")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the resolution and launch plan as JSON, run nothing")
	fs.StringVar(&f.report, "report", "", "write the outcome as JSON to `FILE`")
	if code, ok := a.parseFlags(fs, execUsage, args); !ok {
		if code != failure.ExitOK {
			return f, nil, execExitFailed, false
		}
		return f, nil, code, false
	}
	rest = fs.Args()
	if len(rest) == 0 || rest[0] == "" {
		fmt.Fprintf(a.stderr, "cursorkit: exec needs a TARGET\nusage: cursorkit %s\n", execUsage)
		return f, nil, execExitFailed, false
	}
	if err := checkSupervisionFlags(fs, f.cwd, "first-line-timeout", "idle-timeout", "timeout", "grace"); err != nil {
		fmt.Fprintf(a.stderr, "cursorkit: %v\n", err)
		return f, nil, execExitFailed, false
	}
	if f.report != "" && !f.dryRun {
		if err := checkReportPath(f.report); err != nil {
			fmt.Fprintf(a.stderr, "cursorkit: %v\n", err)
			return f, nil, execExitFailed, false
		}
	}
	return f, rest, 0, true
}

// runExec supervises any program: it resolves TARGET, plans its launch,
// runs it under supervise with the deadlines asked for, passes stdin,
// stdout and stderr through, and exits GNU-timeout style. A cancelled ctx
// (SIGINT or SIGTERM to cursorkit) stops the child's whole tree first.
func runExec(ctx context.Context, a *app, args []string) int {
	f, rest, code, ok := a.parseExecFlags(args)
	if !ok {
		return code
	}
	res, plan, err := execPlan(ctx, rest[0], rest[1:])
	if err != nil {
		code := execSpawnExitCode(err)
		fmt.Fprintf(a.stderr, "cursorkit: %v (%s)\n", err, failure.KindOf(err))
		return a.writeExecReport(f.report, supervise.Outcome{Ending: supervise.SpawnFailed, ExitCode: -1, Stop: supervise.StopNone}, err, code)
	}
	if !f.dryRun {
		launch.PrepareGuard(ctx)
	}
	if f.dryRun {
		a.writeJSON(struct {
			Resolution discovery.Resolution `json:"resolution"`
			Plan       shim.Command         `json:"plan"`
		}{res, plan})
		return failure.ExitOK
	}

	// stderr receives the child's stderr and supervise's remarks from two
	// goroutines.
	errOut := &lockedWriter{w: a.stderr}
	// stdout is buffered and flushed whenever the child's output read so
	// far has been passed on: prompt for an interactive child, one write
	// per burst for a chatty one.
	out := bufio.NewWriterSize(a.stdout, 64<<10)
	o, runErr := supervise.Run(ctx, plan, supervise.Options{
		Dir:              f.cwd,
		Env:              os.Environ(),
		Stdin:            a.stdin,
		FirstLineTimeout: f.firstLine,
		IdleTimeout:      f.idle,
		TotalTimeout:     f.total,
		StopGrace:        f.grace,
		DrainGrace:       execDrainGrace,
		// Lines over supervise's maximum are passed on in pieces: exec's
		// stdout stays byte-for-byte what the child wrote.
		Lines: supervise.PassThrough,
		// A stdout that cannot be written (the reader went away) stops
		// the child like a cancel: the tree goes, exit 130.
		OnLine: func(line []byte) error {
			if _, err := out.Write(line); err != nil {
				return failure.Wrap(failure.Cancelled, err, "%v", errStdoutClosed)
			}
			return nil
		},
		OnDrained: func() { _ = out.Flush() },
		Stderr:    errOut,
	})
	_ = out.Flush() // the readers are done: this goroutine owns out now
	code = execExitCode(o, runErr)
	if o.Ending == supervise.SpawnFailed {
		fmt.Fprintf(a.stderr, "cursorkit: %v (%s)\n", runErr, failure.KindOf(runErr))
	} else if o.Ending != supervise.Exited && runErr != nil {
		fmt.Fprintf(a.stderr, "cursorkit: %v\n", runErr)
	}
	return a.writeExecReport(f.report, o, runErr, code)
}

// execPlan resolves target and plans its launch with args.
func execPlan(ctx context.Context, target string, args []string) (discovery.Resolution, shim.Command, error) {
	env := discovery.EnvFromOS()
	res, err := discovery.Resolve(ctx, discovery.Candidate{Value: target, Source: discovery.SourceOverride}, env, discovery.OSFS())
	if err != nil {
		// A path that exists but is not launchable (a directory included)
		// was found and cannot run (126), not missing (127), as in a POSIX
		// shell and GNU timeout.
		if failure.Is(err, failure.MissingCLI) && strings.ContainsAny(target, `/`+string(os.PathSeparator)) {
			if _, statErr := os.Stat(target); statErr == nil {
				err = failure.Wrap(failure.Setup, err, "found but cannot run")
			}
		}
		return res, shim.Command{}, err
	}
	plan, err := shim.Build(res, args, shim.OptionsFromOS())
	return res, plan, err
}

// execExitCode maps an outcome and its error to exec's GNU-timeout exit
// codes.
func execExitCode(o supervise.Outcome, err error) int {
	switch {
	case o.Ending == supervise.Exited:
		switch {
		case o.Signal > 0:
			return execExitSignalBase + o.Signal
		case o.ExitCode < 0:
			return execExitFailed // the exit status could not be read
		}
		return o.ExitCode
	case o.Ending == supervise.FirstLineTimeout, o.Ending == supervise.IdleTimeout, o.Ending == supervise.TotalTimeout:
		return execExitTimeout
	case o.Ending == supervise.Cancelled, o.Ending == supervise.Aborted && failure.Is(err, failure.Cancelled):
		return execExitInterrupted
	case o.Ending == supervise.SpawnFailed:
		return execSpawnExitCode(err)
	}
	return execExitFailed
}

// execSpawnExitCode maps a resolution, plan or launch failure: 127 when
// TARGET does not exist, 126 when it exists but cannot or may not run,
// 125 otherwise.
func execSpawnExitCode(err error) int {
	switch failure.KindOf(err) {
	case failure.MissingCLI:
		return execExitNotFound
	case failure.Setup, failure.Input:
		return execExitCannotRun
	case failure.Cancelled:
		return execExitInterrupted
	}
	if errors.Is(err, os.ErrNotExist) {
		return execExitNotFound
	}
	if errors.Is(err, os.ErrPermission) {
		return execExitCannotRun
	}
	return execExitFailed
}

// execReport is the --report file.
type execReport struct {
	Outcome    supervise.Ending     `json:"outcome"`
	ExitCode   int                  `json:"exitCode"`
	Signal     int                  `json:"signal"`
	DurationMS int64                `json:"durationMs"`
	Lines      int64                `json:"lines"`
	Bytes      int64                `json:"bytes"`
	Warnings   []string             `json:"warnings"`
	Stop       supervise.StopResult `json:"stop"`
	Kind       failure.Kind         `json:"kind,omitempty"`
	Message    string               `json:"message,omitempty"`
	ExecExit   int                  `json:"cursorkitExitCode"`
}

// checkReportPath fails when --report FILE cannot be written, before the
// child starts (docs/contract.md, "The command line"): a missing file is
// created empty (the report replaces it when the run ends), an existing
// regular file must open for writing, a directory is refused. A device or
// pipe is left alone until the report is written.
func checkReportPath(path string) error {
	info, err := os.Stat(path)
	flag := os.O_WRONLY // an existing file: opened, not truncated
	switch {
	case err == nil && info.IsDir():
		return failure.New(failure.Input, "--report %s is a directory", path)
	case err == nil && !info.Mode().IsRegular():
		return nil
	case errors.Is(err, os.ErrNotExist):
		flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	case err != nil:
		return failure.Wrap(failure.Input, err, "--report cannot be written")
	}
	file, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return failure.Wrap(failure.Input, err, "--report cannot be written")
	}
	return file.Close()
}

// writeExecReport writes o to path (when set) and returns code. A report
// that cannot be written is said on stderr; code, the child's, stays.
func (a *app) writeExecReport(path string, o supervise.Outcome, runErr error, code int) int {
	if path == "" {
		return code
	}
	r := execReport{
		Outcome:    o.Ending,
		ExitCode:   o.ExitCode,
		Signal:     o.Signal,
		DurationMS: o.Duration.Milliseconds(),
		Lines:      o.Lines,
		Bytes:      o.Bytes,
		Warnings:   []string{},
		Stop:       o.Stop,
		ExecExit:   code,
	}
	for _, w := range o.Warnings {
		r.Warnings = append(r.Warnings, w.String()) // the report's lines, "code: message"
	}
	if runErr != nil {
		r.Kind, r.Message = failure.KindOf(runErr), runErr.Error()
	}
	data, err := json.Marshal(r, jsonOptions(), jsontext.WithIndent("  "))
	if err == nil {
		err = os.WriteFile(path, append(data, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "cursorkit: cannot write the report (exit code %d kept): %v\n", code, err)
	}
	return code
}

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
