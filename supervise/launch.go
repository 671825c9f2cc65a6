package supervise

import (
	"context"
	"fmt"
	"io"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/shim"
)

// launchChild adapts *launch.Process to child.
type launchChild struct{ p *launch.Process }

func startLaunch(ctx context.Context, plan shim.Command, opts Options) (child, error) {
	p, err := launch.Start(ctx, plan, launch.Options{Dir: opts.Dir, Env: opts.Env, Stdin: opts.Stdin})
	if err != nil {
		return nil, err
	}
	return launchChild{p}, nil
}

func (l launchChild) stdout() io.ReadCloser       { return l.p.Stdout() }
func (l launchChild) stderr() io.ReadCloser       { return l.p.Stderr() }
func (l launchChild) terminate() error            { return l.p.Terminate() }
func (l launchChild) close() error                { return l.p.Close() }
func (l launchChild) warnings() []failure.Warning { return l.p.Warnings() }
func (l launchChild) pid() int                    { return l.p.Pid() }

func (l launchChild) wait() exitStatus {
	st, err := l.p.Wait()
	if err != nil {
		return exitStatus{code: -1, err: err}
	}
	return exitStatus{code: st.Code, signal: st.Signal}
}

func (l launchChild) killTree() error {
	rep, err := l.p.KillTree()
	if err != nil {
		return fmt.Errorf("%s: %w", rep.Method, err)
	}
	return nil
}
