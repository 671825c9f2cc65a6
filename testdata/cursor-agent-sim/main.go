// Command cursor-agent-sim is the cursor-agent contract simulator of package
// internal/agentsim, as a standalone program. It is a test double: only
// tests and `make run`'s demo (through --binary) may use it.
package main

import (
	"os"

	"github.com/cursorkit/cursorkit/internal/agentsim"
)

func main() { os.Exit(agentsim.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)) }
