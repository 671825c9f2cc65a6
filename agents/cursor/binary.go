package cursor

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
)

// Binary is the Cursor CLI a turn runs: the file resolution found (package
// probe picks it and checks its --version), and whether the operator
// configured one (an override or EnvBinary), in which case no other
// candidate is ever started in its place.
type Binary struct {
	Resolution discovery.Resolution
	Configured bool
}

// InstalledBuild returns the build the Cursor installer's layout names for
// res: the installer links bin/cursor-agent to
// .../cursor-agent/versions/<build>/cursor-agent, so the folder under
// versions/ on the symlink chain (last link first) is the build. "" when
// the chain shows none.
func InstalledBuild(res discovery.Resolution) string {
	chain := append(append([]string(nil), res.Links...), res.Path)
	for i := len(chain) - 1; i >= 0; i-- {
		p := strings.ReplaceAll(chain[i], `\`, "/")
		dir := path.Dir(p)
		build := path.Base(dir)
		if build == "" || build == "." || build == ".." || build == "/" {
			continue
		}
		if strings.EqualFold(path.Base(path.Dir(dir)), "versions") {
			return build
		}
	}
	return ""
}

// retryWithCursor returns the binary to start instead of b after starting
// b failed with startErr: the cursor PATH candidate, when nothing is
// configured and b is the cursor-agent PATH candidate whose file vanished
// between resolution and start (docs/contract.md, "Resolution"). ok is
// false when no retry applies or cursor cannot be resolved.
func retryWithCursor(ctx context.Context, b Binary, startErr error, env discovery.Env, fsys discovery.FS) (Binary, bool) {
	res := b.Resolution
	if b.Configured || res.Source != discovery.SourcePath || res.Candidate != nameCursorAgent ||
		failure.KindOf(startErr) != failure.MissingCLI || !errors.Is(startErr, fs.ErrNotExist) {
		return Binary{}, false
	}
	alt, err := discovery.Resolve(ctx, discovery.Candidate{Value: nameCursor, Source: discovery.SourcePath}, env, fsys)
	if err != nil {
		return Binary{}, false
	}
	return Binary{Resolution: alt}, true
}

// Name is the agent's name in cursorkit (`run --agent cursor`), Provider
// the provider id events and listings report for it (the contract's
// "cursor-cli", which names the runtime, not the agent), and Command the
// bare name searched on PATH first.
const (
	Name     = "cursor"
	Provider = "cursor-cli"
	Command  = nameCursorAgent
)
