package main

import (
	"context"
	"os"

	"github.com/cursorkit/cursorkit/internal/testkit"
)

// cliRole runs the command line as main does, signals included, in a
// process of its own: the test binary re-executed (testkit.ChildEnv).
const cliRole = "cli"

func cliRoles() []testkit.Role {
	return []testkit.Role{{Name: cliRole, Run: runCLIProcess}, {Name: pidWorkerRole, Run: runPIDWorker}}
}

func runCLIProcess(args []string) int {
	ctx, stop := stopOnSignals(context.Background())
	defer stop()
	return run(ctx, args, os.Stdin, os.Stdout, os.Stderr, os.Getenv)
}
