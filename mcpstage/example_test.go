package mcpstage_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cursorkit/cursorkit/mcpstage"
)

// Run stages an orchestrator's own MCP server for one turn of an agent in
// the worktree of dir, and removes it once the turn is over.
func ExampleRun() {
	ctx := context.Background()
	dir := "." // the agent's working directory
	entry, err := mcpstage.ReadEntryFile("server.json")
	if err != nil {
		log.Fatal(err) // failure.Input, naming what is wrong but no value
	}
	warnings, err := mcpstage.Run(ctx, dir, []mcpstage.Entry{entry}, mcpstage.RunOptions{}, func(ctx context.Context, leases []mcpstage.Lease) error {
		// Start the agent with this key as its one MCP server, and return
		// once it and everything it started are gone.
		log.Printf("the turn's MCP server: %s", leases[0].Key)
		return nil
	})
	for _, w := range warnings {
		fmt.Printf("warning %s: %s\n", w.Code, w.Message)
	}
	if err != nil {
		log.Fatal(err) // the turn's error, or a refused stage
	}
}
