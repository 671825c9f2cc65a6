package task

import (
	"context"
	"path/filepath"

	"github.com/cursorkit/cursorkit/discovery"
)

// RuntimeRoot is the installation root of the language runtime that write
// mode exposes read-only to the agent's shell (docs/contract.md, "Tasks
// and reviews"): that of Node.js, the runtime of the Cursor CLI and of the
// npm tooling most workspaces build with, found on env's PATH by
// discovery's rules and followed through its links. On POSIX it is the
// directory above the one holding node (/usr/local for /usr/local/bin/node,
// ~/.nvm/versions/node/v22.1.0 for an nvm install); on Windows, where
// node.exe sits in the installation's root, that directory. "" when there
// is no node on PATH: nothing more is exposed then.
func RuntimeRoot(ctx context.Context, env discovery.Env) string {
	res, err := discovery.Resolve(ctx, discovery.Candidate{Value: "node", Source: discovery.SourcePath}, env, discovery.OSFS())
	if err != nil {
		return ""
	}
	exe := res.Path
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	dir := filepath.Dir(exe)
	if env.GOOS == "windows" {
		return dir
	}
	return filepath.Dir(dir)
}
