package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json/jsontext"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/childenv"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
)

// MaxCommandOutput bounds what a command tool may print on stdout for one
// call, in bytes: more is a tool error, and the command's tree is killed
// at once.
const MaxCommandOutput = 1 << 20

// CommandOptions configure the command tools of a CommandSet; the zero
// value is usable.
type CommandOptions struct {
	// Dir is the working directory of every call ("" is this process's).
	Dir string
	// ProgramDir is where a relative program path (one with a path
	// separator) is found from; "" is this process's working directory.
	ProgramDir string
	// Env is every call's environment and the PATH programs are looked
	// for on (nil: this process's); cursorkit's own secrets are removed
	// from it, as from every child's.
	Env []string
}

// CommandSet is the command tools of a tools file: each call of one of its
// Tools runs the tool's program once. Close ends every call still running.
// Its methods are safe for concurrent use.
type CommandSet struct {
	tools []Tool

	ctx    context.Context // cancelled by Close: every call's too
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup
}

// commandTool is one resolved, planned command tool.
type commandTool struct {
	name    string
	plan    shim.Command
	dir     string
	env     []string
	timeout time.Duration
}

// NewCommandSet resolves and plans the program of every spec, once, the
// way cursorkit launches every program: no shell, the program found by
// discovery (a bare name on opts.Env's PATH, with PATHEXT on Windows; a
// relative path from opts.ProgramDir), its launch planned by shim (a
// Windows .cmd or .bat through cmd.exe with its arguments checked). A
// program that cannot be found or safely launched is a failure.Input
// error naming the tool, not the program; a cancelled ctx is
// failure.Cancelled.
//
// A call of one of the set's Tools runs the program (supervise): in
// opts.Dir, with opts.Env, the call's input JSON on its stdin, stdout as
// the result (at most MaxCommandOutput bytes, found out at the line, or
// the MaxCommandOutput-byte piece of one, that passes it; invalid UTF-8
// becomes U+FFFD), stderr discarded. Its process tree is killed at once at the
// tool's timeout, when the call is cancelled and at Close. A non-zero
// exit, a signal, a program that cannot start, an oversized output and a
// timeout are tool errors whose short message names the tool and what
// happened, never the output.
//
// On Windows a bare name is looked for with PATHEXT (a .ps1 runs only when
// named with its extension, through PowerShell), a .cmd or .bat runs
// through cmd.exe and gets its input on stdin all the same, and the tree
// killed is the call's Job Object.
func NewCommandSet(ctx context.Context, specs []CommandSpec, opts CommandOptions) (*CommandSet, error) {
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	env = childenv.Clean(env)
	denv := discovery.EnvFromOS()
	denv.Path, denv.PathExt = childenv.Lookup(env, "PATH", runtime.GOOS), childenv.Lookup(env, "PATHEXT", runtime.GOOS)
	if opts.ProgramDir != "" {
		denv.Cwd = opts.ProgramDir
	}
	s := &CommandSet{}
	for i, spec := range specs {
		c, err := planCommand(ctx, spec, denv)
		if err != nil {
			if k := failure.KindOf(err); k == failure.Cancelled || k == failure.Timeout {
				return nil, err
			}
			return nil, failure.Wrap(failure.Input, err, "tool %d (%s)", i+1, cut(spec.Name))
		}
		c.dir, c.env = opts.Dir, env
		s.tools = append(s.tools, Tool{
			Name: spec.Name, Description: spec.Description, InputSchema: spec.InputSchema,
			Timeout: spec.Timeout, Handle: s.handler(c),
		})
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// planCommand resolves spec's program and plans its launch.
func planCommand(ctx context.Context, spec CommandSpec, denv discovery.Env) (commandTool, error) {
	if len(spec.Command) == 0 || strings.TrimSpace(spec.Command[0]) == "" {
		return commandTool{}, failure.New(failure.Input, "its command names no program")
	}
	res, err := discovery.Resolve(ctx, discovery.Candidate{Value: spec.Command[0], Source: discovery.SourceOverride}, denv, discovery.OSFS())
	if err != nil {
		switch failure.KindOf(err) {
		case failure.Cancelled, failure.Timeout:
			return commandTool{}, err
		}
		return commandTool{}, failure.Wrap(failure.Input, err, "its program cannot be found")
	}
	plan, err := shim.Build(res, spec.Command[1:], shim.OptionsFromOS())
	if err != nil {
		return commandTool{}, failure.Wrap(failure.Input, err, "its command cannot be launched")
	}
	return commandTool{name: spec.Name, plan: plan, timeout: cmpDuration(spec.Timeout, DefaultCallTimeout)}, nil
}

// Tools returns the set's tools, in the file's order, for Open.
func (s *CommandSet) Tools() []Tool { return append([]Tool(nil), s.tools...) }

// Close kills the process tree of every call still running and waits until
// each is gone; a call made afterwards fails at once. Calling it again does
// nothing.
func (s *CommandSet) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.calls.Wait()
	return nil
}

// begin registers a call, false once the set is closed.
func (s *CommandSet) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.calls.Add(1)
	return true
}

// handler is c's Tool.Handle.
func (s *CommandSet) handler(c commandTool) func(context.Context, jsontext.Value) (string, error) {
	return func(ctx context.Context, input jsontext.Value) (string, error) {
		if !s.begin() {
			return "", failure.New(failure.Cancelled, "tool %s was not run: its tools are closed", c.name)
		}
		defer s.calls.Done()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(s.ctx, cancel)
		defer stop()
		return c.run(ctx, input)
	}
}

// run runs c once with input on stdin; its tree is killed when ctx ends
// (the call's deadline, a cancel, Close).
func (c commandTool) run(ctx context.Context, input jsontext.Value) (string, error) {
	var out bytes.Buffer
	tooLarge := false
	o, err := supervise.Run(ctx, c.plan, supervise.Options{
		Dir:   c.dir,
		Env:   c.env,
		Stdin: bytes.NewReader(input),
		// The bridge's call has this deadline already; a caller of Handle
		// without one gets it too.
		TotalTimeout:    c.timeout,
		MaxLineBytes:    MaxCommandOutput,
		StderrTailBytes: 1, // nothing of stderr is used; the tail must not be empty
		Lines:           supervise.PassThrough,
		OnLine: func(line []byte) error {
			if out.Len()+len(line) > MaxCommandOutput {
				tooLarge = true
				return failure.New(failure.Process, "the output passed its bound")
			}
			out.Write(line)
			return nil
		},
	})
	switch {
	case tooLarge:
		return "", failure.New(failure.Process, "tool %s printed more than %d bytes; it was stopped", c.name, MaxCommandOutput)
	case o.Ending == supervise.Exited && o.Signal != 0:
		return "", failure.New(failure.Died, "tool %s was killed by signal %d", c.name, o.Signal)
	case o.Ending == supervise.Exited && o.ExitCode != 0:
		return "", failure.New(failure.Process, "tool %s failed: exit code %d", c.name, o.ExitCode)
	case o.Ending == supervise.Exited:
		return strings.ToValidUTF8(out.String(), "\uFFFD"), nil
	case o.Ending == supervise.SpawnFailed:
		return "", failure.New(failure.KindOf(err), "tool %s could not be started", c.name)
	case o.Ending == supervise.TotalTimeout, o.Ending == supervise.Cancelled && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", failure.New(failure.Timeout, "tool %s did not answer within %s; it was stopped", c.name, c.timeout)
	case o.Ending == supervise.Cancelled:
		return "", failure.New(failure.Cancelled, "tool %s was cancelled", c.name)
	}
	return "", failure.New(failure.Process, "tool %s failed: %s", c.name, o.Ending)
}
