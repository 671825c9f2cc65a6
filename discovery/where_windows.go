//go:build windows

package discovery

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"time"

	"github.com/cursorkit/cursorkit/internal/childenv"
)

func runWhere(ctx context.Context, name string, env Env) WhereResult {
	rules := rulesFor("windows")
	if !rules.isAbs(env.SystemDir) {
		return WhereResult{Status: whereUnavailable, ExitCode: -1, Detail: "system directory unknown"}
	}
	whereExe := rules.join(env.SystemDir, "where.exe")
	if _, err := os.Stat(whereExe); err != nil {
		return WhereResult{Status: whereUnavailable, ExitCode: -1, Detail: "where.exe not found in the system directory"}
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, whereTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, whereExe, name)
	// Later entries win in os/exec's case-insensitive dedup on Windows.
	cmd.Env = append(childenv.Clean(os.Environ()), "PATH="+env.Path)
	if env.PathExt != "" {
		cmd.Env = append(cmd.Env, "PATHEXT="+env.PathExt)
	}
	if rules.isAbs(env.Cwd) {
		cmd.Dir = env.Cwd
	}
	out := &capWriter{limit: 64 << 10}
	cmd.Stdout = out
	cmd.WaitDelay = 500 * time.Millisecond
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case parent.Err() != nil:
		return WhereResult{Status: whereUnavailable, ExitCode: -1, Detail: "cancelled before where.exe answered"}
	case ctx.Err() != nil:
		return WhereResult{Status: whereTimedOut, ExitCode: -1, Detail: "where.exe did not answer within " + whereTimeout.String()}
	case errors.As(err, &exitErr):
		return parseWhere(out.buf, exitErr.ExitCode(), name, env)
	case err != nil:
		return WhereResult{Status: whereUnavailable, ExitCode: -1, Detail: "where.exe could not be started"}
	}
	return parseWhere(out.buf, 0, name, env)
}

// capWriter keeps the first limit bytes written to it and drops the rest.
type capWriter struct {
	buf   []byte
	limit int
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.limit - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
