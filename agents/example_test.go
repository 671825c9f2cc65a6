package agents_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/cursorkit/cursorkit/agents"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/turn"
)

// One supervised turn of any agent, as README.md shows it: found, run
// with the prompt on stdin only, its answer printed as it streams, the
// whole process tree gone when Run returns.
func Example() {
	ctx := context.Background()
	a, _ := agents.Lookup("claude") // or "cursor", "codex", "gemini"
	bin, err := a.Find(ctx, "", os.Getenv, discovery.EnvFromOS(), discovery.OSFS())
	if err != nil {
		log.Fatalf("%s: %v", failure.KindOf(err), err) // missing_cli: not installed
	}
	opts := a.TurnDefaults()                                 // first line, inactivity, stop and exit graces
	opts.OnEvent = func(e event.Event) { fmt.Print(e.Text) } // its words and thinking, as they stream
	req := agents.Turn{Prompt: "Summarise README.md", Mode: turn.ModeAsk}
	out, err := a.Run(ctx, bin, false, req, opts)
	if err != nil {
		log.Fatalf("%s: %v", failure.KindOf(err), err) // timeout, policy, auth, quota, ...
	}
	fmt.Println("\nstatus:", out.Status, "model:", out.Model)
}
