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
	"github.com/cursorkit/cursorkit/probe"
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

// A turn of Codex with Cursor as its fallback: on a retryable failure
// (a login, a limit, a model Codex cannot use) the prompt goes to Cursor,
// with what was said so far. Cursor is probed before Codex starts; when
// it is unusable Codex runs alone, with a fallback_dropped warning.
func ExampleWithFallback() {
	ctx := context.Background()
	codex, _ := agents.Lookup("codex")
	bin, err := codex.Find(ctx, "", os.Getenv, discovery.EnvFromOS(), discovery.OSFS())
	if err != nil {
		log.Fatalf("%s: %v", failure.KindOf(err), err)
	}
	print := func(e event.Event) { fmt.Print(e.Text) }
	opts := codex.TurnDefaults()
	opts.OnEvent = print
	primary := agents.NewSession(codex, bin, false, agents.Turn{Mode: turn.ModeAsk}, opts)

	fb := agents.Fallback{Options: agents.Cursor().TurnDefaults(), Purpose: "example", OnEvent: print}
	fb.Options.OnEvent = print
	if report, err := probe.Probe(ctx, probe.Config{ReuseVersion: true}); err != nil {
		fb.Unusable = err
	} else {
		fb.Resolution, fb.Configured = report.Binary.Resolution, report.Binary.Configured
	}
	conv, err := agents.WithFallback(ctx, primary, fb)
	if err != nil {
		log.Fatal(err)
	}
	defer conv.Close()
	out, err := conv.Prompt(ctx, "Summarise README.md")
	if err != nil {
		log.Fatalf("%s: %v", failure.KindOf(err), err)
	}
	fmt.Println("\nstatus:", out.Status, "model:", out.Model)
}
