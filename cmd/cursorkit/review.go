package main

import (
	"context"
	"encoding/json/jsontext"
	"encoding/json/v2"
	"fmt"
	"io"
	"strings"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/jobs"
	"github.com/cursorkit/cursorkit/launch"
	"github.com/cursorkit/cursorkit/review"
	"github.com/cursorkit/cursorkit/task"
)

const reviewUsage = "review [--scope auto|working-tree|branch] [--base REF] [--focus TEXT] [--model ID] [--effort E] [--cwd DIR] [--background] [--json]"

// warnDiffCut is the warning of a review whose diff did not fit the prompt.
const warnDiffCut = "diff_cut"

func runReview(ctx context.Context, a *app, args []string) int {
	var f jobFlags
	var scope, base, focus string
	fs := newFlags("review")
	f.add(fs, a)
	fs.StringVar(&scope, "scope", string(review.ScopeAuto), "what to review: auto (the working tree when dirty, else the branch), working-tree or branch")
	fs.StringVar(&base, "base", "", "the `REF` a branch is compared with (default: its upstream, else origin/HEAD, main or master)")
	fs.StringVar(&focus, "focus", "", "what the reviewer should look at most (`TEXT`)")
	if code, ok := a.parseFlags(fs, reviewUsage, args); !ok {
		return code
	}
	if !f.background {
		launch.PrepareGuard(ctx) // while the diff is collected
	}
	var err error
	if f.total, err = a.envDuration(envTaskTimeout, task.DefaultTotalTimeout); err != nil {
		return a.fail(f.asJSON, err)
	}
	if fs.NArg() > 0 {
		return a.usageError(f.asJSON, reviewUsage, fmt.Errorf("review takes no arguments (give the focus with --focus)"))
	}
	sc, err := review.ParseScope(scope)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	workspace, err := task.Workspace(f.cwd)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	diff, err := review.Collect(ctx, workspace, sc, base)
	if err != nil {
		return a.fail(f.asJSON, err)
	}
	p := review.NewPrompt(diff, focus)
	var warnings []event.Warning
	if p.Cut {
		warnings = append(warnings, event.Warning{Code: warnDiffCut, Message: fmt.Sprintf(
			"the diff is larger than a prompt: %d of %d bytes shown, %d files not shown in full", p.ShownBytes, p.TotalBytes, len(p.NotShown))})
	}
	// The agent reads the change's files: its workspace is the
	// repository's root, whose paths the diff uses, even when --cwd named
	// a directory below it.
	spec := task.Spec{Role: jobs.RoleReview, Mode: jobs.ModeConsult, Prompt: p.Text, Workspace: diff.Root}
	return a.runJob(ctx, f, spec, jobExtras{check: review.CheckVerdict, warnings: warnings})
}

// renderVerdict prints a review's verdict for people.
func renderVerdict(w io.Writer, raw jsontext.Value) {
	var v review.Verdict
	if err := json.Unmarshal(raw, &v); err != nil {
		return
	}
	fmt.Fprintf(w, "verdict: %s\nsummary: %s\n", oneLine(v.Verdict), oneLine(v.Summary))
	if len(v.Findings) == 0 {
		fmt.Fprintln(w, "findings: none")
		return
	}
	fmt.Fprintf(w, "findings: %d\n", len(v.Findings))
	for _, f := range v.Findings {
		where := f.File
		if where == "" {
			where = "(the whole change)"
		} else if f.Line > 0 {
			where = fmt.Sprintf("%s:%d", f.File, f.Line)
		}
		fmt.Fprintf(w, "  [%s] %s: %s\n", oneLine(f.Severity), oneLine(where), oneLine(f.Title))
		for _, line := range strings.Split(strings.TrimRight(forTerminal(f.Body), "\n"), "\n") {
			fmt.Fprintf(w, "      %s\n", line)
		}
	}
}
