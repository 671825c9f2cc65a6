//go:build !unix

package mcpstage

import (
	"context"
	"os"
)

// CallerOwner is the process a command-line stage's lease follows unless
// told otherwise: here, with no process groups to tell a caller's job by,
// this process's parent.
func CallerOwner(context.Context) int { return os.Getppid() }
