package discovery

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// whereTimeout bounds one where.exe run.
const whereTimeout = 2 * time.Second

// WhereResult.Status values.
const (
	whereFound       = "found"       // exit 0 with output
	whereNotFound    = "not-found"   // exit 1
	whereError       = "error"       // exit 2 or any other code
	whereSilent      = "silent"      // exit 0 and no output, as under Wine
	whereUnavailable = "unavailable" // not Windows, no where.exe, or it could not start
	whereTimedOut    = "timeout"     // killed after whereTimeout
	whereSkipped     = "skipped"     // the name is not a plain bare name where.exe can search
)

const maxWhereLines = 16 // where.exe hits kept, launchable and dropped each

// WhereResult is what where.exe said about a name, filtered by cursorkit's
// rules. It is diagnostics only: resolution never depends on it.
type WhereResult struct {
	// Status is found (exit 0 with output), not-found (exit 1), error
	// (another exit code), silent (exit 0 and no output, as under Wine),
	// unavailable (not Windows, no where.exe, or it could not start),
	// timeout (killed after 2 s) or skipped (not a plain bare name).
	Status string `json:"status"`
	// ExitCode is where.exe's exit code, -1 when it did not run to the end.
	ExitCode int `json:"exitCode"`
	// Paths are the launchable hits in where.exe's order, without the
	// current directory's (where.exe searches it first; cursorkit never).
	Paths []string `json:"paths,omitempty"`
	// Dropped are the other hits, each with why it was dropped.
	Dropped []string `json:"dropped,omitempty"`
	Detail  string   `json:"detail,omitempty"`
}

// WhereCheck runs where.exe for a bare name, for diagnostics only: by
// absolute path under env.SystemDir, with env's PATH and PATHEXT, in
// env.Cwd, killed after whereTimeout. Its result never changes a
// resolution; compare them with WhereResult.Disagreement. A missing,
// failing or silent where.exe (as under Wine) is reported, not an error;
// outside Windows it is unavailable. A name that is not a plain bare name
// (wildcards, `$ENV:` or `path:` syntax, quotes, controls) is skipped.
func WhereCheck(ctx context.Context, name string, env Env) WhereResult {
	if name == "" || strings.ContainsAny(name, "\\/:*?$\"<>|") || strings.IndexFunc(name, isControl) >= 0 {
		return WhereResult{Status: whereSkipped, ExitCode: -1, Detail: "not a plain bare name"}
	}
	return runWhere(ctx, name, env)
}

// parseWhere interprets where.exe's stdout and exit code for name under
// env's Windows rules (see WhereResult). Lines that are not absolute paths
// (INFO: messages) are ignored; hits cursorkit would not launch (in the
// current directory, not launchable, .ps1 unless name names one) and
// undecodable lines are dropped with the reason.
func parseWhere(output []byte, exitCode int, name string, env Env) WhereResult {
	rules := rulesFor("windows")
	w := WhereResult{ExitCode: exitCode}
	switch exitCode {
	case 0:
		w.Status = whereFound
	case 1:
		w.Status = whereNotFound
		return w
	default:
		w.Status = whereError
		w.Detail = fmt.Sprintf("where.exe exited with code %d", exitCode)
		return w
	}
	cwdInPath := slices.ContainsFunc(rules.splitList(env.Path), func(e string) bool {
		return rules.isAbs(e) && rules.isAbs(env.Cwd) && rules.sameDir(e, env.Cwd)
	})
	explicitPS1 := strings.EqualFold(rules.ext(name), ".ps1")
	drop := func(p, why string) {
		if len(w.Dropped) < maxWhereLines {
			w.Dropped = append(w.Dropped, bounded(p+" ("+why+")", maxDetail))
		}
	}
	lines := 0
	for _, raw := range bytes.Split(output, []byte("\n")) {
		line := strings.TrimSpace(string(bytes.TrimRight(raw, "\r")))
		if line == "" {
			continue
		}
		lines++
		if !utf8.ValidString(line) {
			drop(strings.ToValidUTF8(line, "?"), "not decodable: console code page")
			continue
		}
		if !rules.isAbs(line) {
			continue
		}
		p := rules.clean(line)
		if rules.isAbs(env.Cwd) && !cwdInPath && rules.sameDir(rules.dir(p), env.Cwd) {
			drop(p, "current directory, never searched")
			continue
		}
		kind, err := classify("windows", p)
		switch {
		case err != nil:
			drop(p, err.Error())
			continue
		case kind == PowerShell && !explicitPS1:
			drop(p, ".ps1 used only when named explicitly")
			continue
		}
		if len(w.Paths) < maxWhereLines {
			w.Paths = append(w.Paths, p)
		}
	}
	if lines == 0 {
		w.Status = whereSilent
		w.Detail = "where.exe printed nothing"
	}
	return w
}

// Disagreement compares where.exe's answer with a resolution of the same
// bare name and returns a warning when they differ, or "" when they agree
// or where.exe gave nothing to compare (silent, missing, skipped, timed out,
// failed).
func (w WhereResult) Disagreement(res Resolution) string {
	rules := rulesFor("windows")
	switch {
	case w.Status == whereNotFound && res.Path != "":
		return bounded("where.exe found no "+res.Candidate+" but cursorkit chose "+res.Path, maxDetail)
	case w.Status != whereFound || (len(w.Paths) == 0 && res.Path == ""):
		return ""
	case len(w.Paths) == 0:
		return bounded("where.exe listed no launchable "+res.Candidate+" but cursorkit chose "+res.Path, maxDetail)
	case res.Path == "":
		return bounded("where.exe found "+w.Paths[0]+" but cursorkit found nothing launchable (see the trail)", maxDetail)
	case !rules.sameDir(rules.dir(w.Paths[0]), rules.dir(res.Path)):
		msg := "where.exe's first match is " + w.Paths[0] + " but cursorkit chose " + res.Path
		if res.Alias || strings.Contains(strings.ToLower(rules.dir(w.Paths[0])), `\windowsapps`) {
			msg += " (App Execution Alias stubs rank below real files)"
		}
		return bounded(msg, maxDetail)
	}
	return ""
}
