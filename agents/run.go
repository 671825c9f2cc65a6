package agents

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/agents/gemini"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/childenv"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/shim"
	"github.com/cursorkit/cursorkit/supervise"
	"github.com/cursorkit/cursorkit/turn"
)

// Run runs one turn t of the agent on res (found by Find; configured
// reports that the operator named it, which rules out any substitute) and
// returns when the whole process tree is gone: the argv of Args(t), the
// prompt on stdin only, every stdout line through the agent's decoder,
// whose events go to opts.OnEvent, the tree stopped at once on a protocol
// or policy failure, and opts' deadlines (start from TurnDefaults). The
// outcome's model is the one the agent said answered, else the turn's
// Model. The error is nil exactly when the turn is done; it carries the
// failure kind. A turn Args refuses never starts.
//
// Run is the one way a turn of any agent runs: Session, the fallback's
// conversations and package task's jobs all run theirs through it. A
// Cursor turn is cursor.Run's, with its retry of the cursor candidate
// when the cursor-agent found on PATH vanished before the start.
func (a Agent) Run(ctx context.Context, res discovery.Resolution, configured bool, t Turn, opts turn.Options) (turn.Outcome, error) {
	if err := a.check(t); err != nil {
		return turn.Refused(err), err
	}
	if a.run != nil {
		return a.run(ctx, res, configured, t, opts)
	}
	// The bridge admits only bridge programs this agent starts.
	opts.OnStarted = t.Bridge.Admitting(opts.OnStarted)
	args, err := a.args(t)
	if err != nil {
		return turn.Refused(err), err
	}
	plan, err := shim.Build(res, args, shim.OptionsFromOS())
	if err != nil {
		return turn.Refused(err), err
	}
	dec, err := a.decoder(t)
	if err != nil {
		return turn.Refused(err), err
	}
	if opts.Env, err = a.bridgeEnv(t, opts.Env); err != nil {
		return turn.Refused(err), err
	}
	o, err := turn.Run(ctx, plan, t.Prompt, dec, opts)
	if o.Model == "" {
		// The stream named no model (Codex's never does): the one the
		// turn asked for is the best there is.
		o.Model = t.Model
	}
	return o, err
}

// bridgeEnv returns env, the turn's environment (nil: this process's),
// with what an agent needs beyond its argv to reach t.Bridge: Gemini CLI
// reads MCP servers only from settings files, so its turn gets a private
// home holding the bridge (gemini.BridgeHome) instead of a file in the
// user's workspace or home. Every other agent, and a turn without a
// bridge, keeps env as it is.
func (a Agent) bridgeEnv(t Turn, env []string) ([]string, error) {
	if t.Bridge == nil || a.Name != gemini.Name {
		return env, nil
	}
	if env == nil {
		env = os.Environ()
	}
	getenv := func(name string) string { return childenv.Lookup(env, name, runtime.GOOS) }
	add, err := gemini.BridgeHome(request(t), getenv)
	if err != nil {
		return nil, err
	}
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == gemini.EnvHome || runtime.GOOS == "windows" && strings.EqualFold(k, gemini.EnvHome)
	})
	return append(out, add...), nil
}

// Bounds of a --version run's output.
const (
	maxVersionStdout = 64 << 10
	maxVersionLine   = 16 << 10
	maxVersionStderr = 4 << 10
)

// Version runs `BINARY --version` on res under timeout (DefaultVersionTimeout
// when zero), its whole tree killed past it, with environ (nil: this
// process's), and returns the version the agent's ParseVersion reads. A
// run that fails is classified: the agent's own words through
// ClassifyMessage when they name a cause, else failure.Process for a
// non-zero exit and failure.Timeout past the bound.
func (a Agent) Version(ctx context.Context, res discovery.Resolution, environ []string, timeout time.Duration) (string, error) {
	if timeout <= 0 {
		timeout = DefaultVersionTimeout
	}
	plan, err := shim.Build(res, []string{"--version"}, shim.OptionsFromOS())
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	o, runErr := supervise.Run(ctx, plan, supervise.Options{
		Env:             environ,
		TotalTimeout:    timeout,
		MaxLineBytes:    maxVersionLine,
		StderrTailBytes: maxVersionStderr,
		Lines:           supervise.KeepEndings,
		OnLine: func(line []byte) error {
			if out.Len()+len(line) <= maxVersionStdout {
				out.Write(line)
			}
			return nil
		},
	})
	switch {
	case o.Ending == supervise.TotalTimeout:
		return "", failure.New(failure.Timeout, "%s --version did not answer within %s", a.Name, timeout)
	case runErr != nil:
		said := detail.Bound(detail.StripANSI(o.StderrTail))
		if said == "" {
			said = detail.Bound(detail.StripANSI(out.String()))
		}
		kind := failure.KindOf(runErr)
		if o.Ending == supervise.Exited {
			if k := a.classify(said); k != failure.Unclassified {
				kind = k
			}
		}
		if said != "" {
			return "", failure.Wrap(kind, runErr, "%s --version failed", a.Name).(*failure.Error).WithDetail(said)
		}
		return "", failure.Wrap(kind, runErr, "%s --version failed", a.Name)
	}
	return a.version(out.String())
}
