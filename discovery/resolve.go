package discovery

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cursorkit/cursorkit/failure"
)

// Step.Outcome and Attempt.Outcome values, documented on Step.
const (
	outcomeChosen   = "chosen"    // this file is the resolution
	outcomeFallback = "fallback"  // an App Execution Alias stub, used only when no real file is found
	outcomeSkipped  = "skipped"   // a file or PATH entry that was passed over; Detail says why
	outcomeNoMatch  = "no-match"  // a directory that holds no file of that name
	outcomeRefused  = "refused"   // a PATH entry or candidate that breaks a rule; Detail says which
	outcomeIgnored  = "ignored"   // a match in the current directory, which is never searched
	outcomeNotFound = "not-found" // a candidate with no launchable file
	outcomeOmitted  = "omitted"   // the trail's bound was reached; Detail counts what was left out
)

const (
	maxStepsPerCandidate = 48  // trail bound per candidate; the rest is counted in one step
	maxDetail            = 180 // bound of a detail or per-candidate reason, in bytes
	maxLinks             = 40  // symlink hops followed before giving up, as Linux does
)

// Attempt is the verdict on one candidate: chosen, not-found or refused,
// with a bounded reason. It never lists PATH directories.
type Attempt struct {
	Candidate string `json:"candidate"`
	Source    Source `json:"source"`
	Outcome   string `json:"outcome"` // chosen, not-found or refused
	Detail    string `json:"detail,omitempty"`
}

// Resolve finds the file candidate c names, under env's rules, looking only
// through fsys; it never starts a process.
//
// A value holding a path separator (on Windows `\`, `/` or a drive colon)
// is checked directly: no PATH search. A relative one is resolved against
// env.Cwd with a warning (refused when Cwd is not absolute; a Windows
// drive-relative `C:x` is always refused). A bare name is searched on PATH:
// absolute entries in order, empty ones skipped, relative ones refused and
// reported, the current directory never searched.
//
// Windows: the first directory holding a launchable match wins and within it
// PATHEXT order decides; a name whose extension is in PATHEXT (or .ps1) is
// tried as is only, other names with a dot as is first; .exe/.com are
// Native, .bat/.cmd CmdShim (trailing dots and spaces ignored), .ps1
// PowerShell only when named explicitly; extensionless files and other
// extensions are skipped on PATH and refused when named directly. App
// Execution Alias stubs rank below every real file. POSIX: the first
// executable regular file wins; its symlink chain goes to Links.
//
// The returned Resolution always carries Trail and Attempts, also on error
// (then Path is empty). An error's message is the bounded reason alone
// ("no such file", "not found in 12 PATH directories", ...): the caller
// names the candidate, as ResolveFirst does. Errors carry kind Input for a
// refused value (quote characters, a refused extension), MissingCLI when
// nothing launchable exists, and Cancelled or Timeout when ctx ends first.
func Resolve(ctx context.Context, c Candidate, env Env, fsys FS) (Resolution, error) {
	r := newResolver(env, fsys)
	res, att, err := r.resolve(ctx, c)
	res.Attempts = []Attempt{att}
	return res, err
}

// ResolveFirst resolves cands in order and returns the first success. Its
// Trail and Attempts cover every candidate tried, and the failures before
// the success become warnings. When every candidate fails the error names
// each candidate with its reason (each bounded to about 180 characters,
// never PATH or the environment); its kind is Input when the configured
// override was refused and MissingCLI otherwise (Cancelled or Timeout when
// ctx ends first). The message is generic ("no candidate could be resolved"):
// a caller that knows what the candidates stand for wraps it.
func ResolveFirst(ctx context.Context, cands []Candidate, env Env, fsys FS) (Resolution, error) {
	r := newResolver(env, fsys)
	var (
		trail    []Step
		attempts []Attempt
		warnings []string
		reasons  []string
		kind     = failure.MissingCLI
	)
	for _, c := range cands {
		res, att, err := r.resolve(ctx, c)
		trail = append(trail, res.Trail...)
		attempts = append(attempts, att)
		if err == nil {
			res.Trail, res.Attempts = trail, attempts
			res.Warnings = append(warnings, res.Warnings...)
			return res, nil
		}
		if k := failure.KindOf(err); k == failure.Cancelled || k == failure.Timeout {
			return Resolution{Trail: trail, Attempts: attempts}, err
		}
		if c.Source == SourceOverride && failure.KindOf(err) == failure.Input {
			kind = failure.Input
		}
		reason := bounded(c.label()+": "+att.Detail, maxDetail)
		reasons = append(reasons, reason)
		if c.configured() {
			warnings = append(warnings, reason)
		}
	}
	if len(cands) == 0 {
		reasons = append(reasons, "no candidates")
	}
	return Resolution{Trail: trail, Attempts: attempts},
		failure.New(kind, "no candidate could be resolved").WithDetail(strings.Join(reasons, "; "))
}

type resolver struct {
	env   Env
	fs    FS
	rules pathRules
	exts  []string // PATHEXT, lower case (Windows)
}

func newResolver(env Env, fsys FS) *resolver {
	r := &resolver{env: env, fs: fsys, rules: rulesFor(env.GOOS)}
	if r.rules.windows {
		r.exts = parsePathExt(env.PathExt)
	}
	return r
}

// search is the state of one candidate's resolution.
type search struct {
	cand     Candidate
	trail    trailBuilder
	warnings []string
	alias    *hit     // first App Execution Alias stub seen, the fallback
	refused  string   // why an explicitly named file was refused, "" if none
	skipped  []string // bounded notes on files passed over, for the reason
	names    []string // fileNames(namesFor), computed once per search
	namesFor string
}

// hit is a launchable file.
type hit struct {
	path  string
	kind  Kind
	links []string
	alias bool
}

func (r *resolver) resolve(ctx context.Context, c Candidate) (Resolution, Attempt, error) {
	s := &search{cand: c, trail: trailBuilder{candidate: c.Value}}
	res := Resolution{Source: c.Source, Candidate: c.Value}
	h, err := r.find(ctx, s, strings.TrimSpace(c.Value))
	res.Trail = s.trail.steps()
	res.Warnings = s.warnings
	att := Attempt{Candidate: c.Value, Source: c.Source}
	if err != nil {
		var fe *failure.Error
		att.Outcome = outcomeNotFound
		if errors.As(err, &fe) {
			att.Detail = bounded(fe.Message, maxDetail)
			if fe.Kind == failure.Input {
				att.Outcome = outcomeRefused
			}
		}
		return res, att, err
	}
	res.Path = h.path
	res.Name = r.rules.base(h.path)
	res.Kind = h.kind
	res.Links = h.links
	res.Alias = h.alias
	att.Outcome = outcomeChosen
	att.Detail = bounded(string(h.kind)+" "+h.path, maxDetail)
	return res, att, nil
}

// find applies the rules to one value and returns the file or a typed error
// whose Message is the bounded reason.
func (r *resolver) find(ctx context.Context, s *search, value string) (*hit, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if value == "" {
		return nil, r.refuse(s, "empty value")
	}
	if i := strings.IndexFunc(value, isControl); i >= 0 {
		return nil, r.refuse(s, "holds a control character")
	}
	if r.rules.windows && strings.Contains(value, `"`) {
		return nil, r.refuse(s, "holds a double quote; give the path without quotes, spaces are fine")
	}
	if r.rules.hasSeparator(value) {
		return r.direct(s, value)
	}
	if r.rules.windows {
		// Win32 ignores trailing dots and spaces: `tool.` is tool.
		if trimmed := trimDotsSpaces(value); trimmed != "" {
			value = trimmed
		}
	}
	return r.searchPath(ctx, s, value)
}

func (r *resolver) refuse(s *search, reason string) error {
	return fail(s, outcomeRefused, failure.Input, reason)
}

// fail ends a candidate's search: the verdict closes its trail and the
// error's message is the bounded reason.
func fail(s *search, outcome string, kind failure.Kind, reason string) error {
	s.trail.verdict(Step{Outcome: outcome, Detail: reason})
	return failure.New(kind, "%s", bounded(reason, maxDetail))
}

// direct checks a value that is a path.
func (r *resolver) direct(s *search, value string) (*hit, error) {
	p := value
	if !r.rules.isAbs(p) {
		abs, err := r.absolutize(s, p)
		if err != nil {
			return nil, err
		}
		p = abs
	}
	p = r.rules.clean(p)
	dir, name := r.rules.dir(p), r.rules.base(p)
	if name == "" {
		return nil, r.refuse(s, "names a directory, not a file")
	}
	h := r.matchDir(s, dir, name, true)
	if h == nil && s.alias != nil {
		h = r.useAlias(s)
	}
	if h != nil {
		if !strings.EqualFold(r.rules.base(h.path), name) {
			s.warnings = append(s.warnings, bounded(fmt.Sprintf("%s names no launchable file; using %s", quoteBounded(value, 100), r.rules.base(h.path)), maxDetail))
		}
		return h, nil
	}
	if s.refused != "" {
		return nil, fail(s, outcomeRefused, failure.Input, s.refused)
	}
	reason := "no such file"
	if len(s.skipped) > 0 {
		reason = "not launchable: " + strings.Join(s.skipped, ", ")
	}
	return nil, fail(s, outcomeNotFound, failure.MissingCLI, reason)
}

// absolutize resolves a relative configured path against Cwd, with a
// warning, or refuses it.
func (r *resolver) absolutize(s *search, p string) (string, error) {
	cwd := r.env.Cwd
	if !r.rules.isAbs(cwd) {
		return "", r.refuse(s, "relative path and no absolute current directory to resolve it against; give an absolute path")
	}
	abs := r.rules.join(cwd, p)
	switch {
	case !r.rules.windows:
	case len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]):
		// C:x is relative to drive C's own current directory, which the
		// process cannot see reliably.
		return "", r.refuse(s, "drive-relative path (like C:name); give an absolute path such as C:\\dir\\name")
	case isWinSep(p[0]): // \x is relative to the current drive's root
		abs = cwd[:winVolumeLen(cwd)] + p
	}
	abs = r.rules.clean(abs)
	s.warnings = append(s.warnings, bounded("relative path "+quoteBounded(p, 60)+" resolved against the current directory: "+abs, maxDetail))
	return abs, nil
}

// searchPath searches PATH for a bare name.
func (r *resolver) searchPath(ctx context.Context, s *search, name string) (*hit, error) {
	entries := r.rules.splitList(r.env.Path)
	searched := make(map[string]bool, len(entries)) // dirKey of each directory searched
	s.trail.reserve(len(entries) + 4)
	empty, relative, dup := 0, 0, 0
	var found *hit
	for _, dir := range entries {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		dir = strings.TrimSpace(dir)
		switch {
		case dir == "":
			empty++
			continue
		case !r.rules.isAbs(dir):
			relative++
			s.trail.add(Step{Dir: dir, Outcome: outcomeRefused, Detail: "relative PATH entry; only absolute directories are searched"})
			continue
		}
		key := r.dirKey(dir)
		if searched[key] {
			dup++
			continue
		}
		searched[key] = true
		if found = r.matchDir(s, dir, name, false); found != nil {
			break
		}
	}
	if empty > 0 {
		s.trail.verdict(Step{Outcome: outcomeSkipped, Detail: fmt.Sprintf("%d empty PATH entries", empty)})
	}
	if dup > 0 {
		s.trail.verdict(Step{Outcome: outcomeSkipped, Detail: fmt.Sprintf("%d repeated PATH entries searched once", dup)})
	}
	cwdNote := ""
	if r.rules.windows {
		cwdNote = r.reportCwd(s, name, searched)
	}
	if found == nil && s.alias != nil {
		found = r.useAlias(s)
	}
	if found != nil {
		return found, nil
	}
	var reason string
	switch {
	case s.refused != "":
		reason = s.refused
	case len(entries) == 0:
		reason = "PATH is empty"
	default:
		reason = fmt.Sprintf("not found in %d PATH directories", len(searched))
	}
	if relative > 0 {
		reason += fmt.Sprintf(" (%d relative entries refused)", relative)
	}
	if len(s.skipped) > 0 {
		reason += "; skipped " + strings.Join(s.skipped, ", ")
	}
	if cwdNote != "" {
		reason += "; " + cwdNote
	}
	kind := failure.MissingCLI
	if s.refused != "" && s.cand.configured() {
		kind = failure.Input
	}
	return nil, fail(s, outcomeNotFound, kind, reason)
}

// dirKey identifies a directory for duplicate detection: on Windows its
// clean, lower-case form (paths are case-insensitive there); on POSIX the
// entry without trailing slashes.
func (r *resolver) dirKey(dir string) string {
	if r.rules.windows {
		return strings.ToLower(r.rules.clean(dir))
	}
	if trimmed := strings.TrimRight(dir, "/"); trimmed != "" {
		return trimmed
	}
	return dir
}

// reportCwd looks for a launchable match in the current directory, which
// cmd.exe would run first and this resolver never does, and reports it.
func (r *resolver) reportCwd(s *search, name string, searched map[string]bool) string {
	cwd := r.env.Cwd
	if !r.rules.isAbs(cwd) || searched[r.dirKey(cwd)] {
		return ""
	}
	for _, fname := range r.fileNames(name) {
		p := r.rules.join(cwd, fname)
		info := r.inspect(p)
		if info.state != stateFile && info.state != stateAlias {
			continue
		}
		if _, err := r.launchable(fname, strings.EqualFold(fname, name)); err != nil {
			continue
		}
		note := "the current directory holds " + fname + ", ignored (it is never searched)"
		s.trail.add(Step{Dir: cwd, Path: p, Outcome: outcomeIgnored, Detail: "current directory is never searched"})
		s.warnings = append(s.warnings, bounded(note+": "+p, maxDetail))
		return note
	}
	return ""
}

func (r *resolver) useAlias(s *search) *hit {
	s.trail.verdict(Step{Path: s.alias.path, Outcome: outcomeChosen, Detail: "App Execution Alias stub: no real file was found"})
	s.warnings = append(s.warnings, bounded("only an App Execution Alias stub was found ("+s.alias.path+"); it starts only while its app is installed", maxDetail))
	return s.alias
}

// fileNames lists the file names tried for name in one directory, in order.
func (r *resolver) fileNames(name string) []string {
	if !r.rules.windows {
		return []string{name}
	}
	ext := strings.ToLower(r.rules.ext(name))
	if ext != "" && (slices.Contains(r.exts, ext) || ext == ".ps1") {
		return []string{name}
	}
	names := make([]string, 0, len(r.exts)+1)
	if ext != "" {
		names = append(names, name)
	}
	for _, e := range r.exts {
		names = append(names, name+e)
	}
	return names
}

// matchDir looks for name in dir and returns the launchable file it holds,
// or nil. Alias stubs go to s.alias; passed-over files to the trail.
// explicit says name was given as a path, so an extensionless file there
// is the operator's (wrong) choice and refused rather than skipped. A .ps1
// counts only when name itself ends in .ps1, never through PATHEXT.
func (r *resolver) matchDir(s *search, dir, name string, explicit bool) *hit {
	before := s.trail.count
	if s.namesFor != name {
		s.names, s.namesFor = r.fileNames(name), name
	}
	for _, fname := range s.names {
		p := r.rules.join(dir, fname)
		info := r.inspect(p)
		if info.state == stateMissing {
			continue
		}
		if info.state != stateFile && info.state != stateAlias {
			r.skip(s, dir, p, fname, info.detail)
			continue
		}
		named := strings.EqualFold(fname, name) // as given, no PATHEXT appended
		kind, err := r.launchable(fname, named)
		if err != nil {
			if named {
				s.refused = fname + ": " + err.Error()
			}
			r.skip(s, dir, p, fname, err.Error())
			continue
		}
		if !r.rules.windows && info.mode&0o111 == 0 {
			r.skip(s, dir, p, fname, "not executable (mode "+info.mode.Perm().String()+")")
			continue
		}
		h := &hit{path: r.rules.clean(p), kind: kind, links: info.links}
		if info.state == stateAlias {
			h.alias = true
			if s.alias == nil {
				s.alias = h
				s.trail.add(Step{Dir: dir, Path: p, Outcome: outcomeFallback, Detail: r.aliasDetail(dir)})
			} else {
				r.skip(s, dir, p, fname, "another App Execution Alias stub came first")
			}
			continue
		}
		s.trail.verdict(Step{Dir: dir, Path: h.path, Outcome: outcomeChosen, Detail: string(kind)})
		return h
	}
	if r.rules.windows && r.rules.ext(name) == "" {
		// The sh script npm writes beside the .cmd: where.exe lists it, but
		// Windows cannot start it. Only looked at to explain it.
		p := r.rules.join(dir, name)
		if info := r.inspect(p); info.state == stateFile {
			why := "no extension: not launchable on Windows (npm's sh script beside the .cmd)"
			if explicit {
				s.refused = name + ": " + why
			}
			r.skip(s, dir, p, name, why)
		}
	}
	if s.trail.count == before {
		s.trail.add(Step{Dir: dir, Outcome: outcomeNoMatch})
	}
	return nil
}

func (r *resolver) aliasDetail(dir string) string {
	if r.env.LocalAppData != "" && r.rules.sameDir(dir, r.rules.join(r.env.LocalAppData, `Microsoft\WindowsApps`)) {
		return "App Execution Alias stub in WindowsApps; ranked below real files"
	}
	return "zero-byte reparse point stub; ranked below real files"
}

func (r *resolver) skip(s *search, dir, p, fname, why string) {
	s.trail.add(Step{Dir: dir, Path: p, Outcome: outcomeSkipped, Detail: bounded(why, maxDetail)})
	if len(s.skipped) < 3 {
		// The reason's first clause is enough here; the trail has the rest.
		short, _, _ := strings.Cut(why, "; ")
		short, _, _ = strings.Cut(short, ": ")
		s.skipped = append(s.skipped, bounded(fname+" ("+short+")", 90))
	}
}

// launchable returns fname's kind, or why it cannot be launched. explicit
// allows .ps1.
func (r *resolver) launchable(fname string, explicit bool) (Kind, error) {
	kind, err := classify(r.env.GOOS, fname)
	if err != nil {
		return "", err
	}
	if kind == PowerShell && !explicit {
		return "", errors.New(".ps1 scripts are used only when named explicitly")
	}
	return kind, nil
}

// classify returns how the file name must be launched under goos's rules:
// on Windows by extension as Resolve describes (trailing dots and spaces
// stripped, so `x.cmd .` is a batch file; any other extension or none is an
// Input error naming it), elsewhere POSIX.
func classify(goos, name string) (Kind, error) {
	rules := rulesFor(goos)
	if !rules.windows {
		return POSIX, nil
	}
	base := trimDotsSpaces(rules.base(name))
	switch ext := strings.ToLower(rules.ext(base)); ext {
	case ".exe", ".com":
		return Native, nil
	case ".bat", ".cmd":
		return CmdShim, nil
	case ".ps1":
		return PowerShell, nil
	case "":
		return "", failure.New(failure.Input, "%s has no extension: not launchable on Windows; use the .exe, .cmd, .bat or .ps1 beside it", quoteBounded(base, 80))
	default:
		return "", failure.New(failure.Input, "extension %s is not launchable on Windows; use a .exe, .com, .cmd, .bat or .ps1", quoteBounded(ext, 40))
	}
}

type fileState int

const (
	stateMissing fileState = iota
	stateFile              // a regular file, after following links
	stateAlias             // a zero-byte reparse point stub (App Execution Alias)
	stateOther             // a directory, dangling link, device, or unreadable entry
)

type fileInfo struct {
	state  fileState
	mode   fs.FileMode
	links  []string
	detail string
}

// inspect classifies p with Lstat first, so reparse-point stubs that Stat
// cannot open are still seen.
func (r *resolver) inspect(p string) fileInfo {
	li, err := r.fs.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fileInfo{state: stateOther, detail: "permission denied"}
		}
		return fileInfo{state: stateMissing}
	}
	mode := li.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		links := r.chain(p)
		si, err := r.fs.Stat(p)
		switch {
		case err != nil:
			return fileInfo{state: stateOther, links: links, detail: "symbolic link whose target cannot be opened"}
		case si.IsDir():
			return fileInfo{state: stateOther, links: links, detail: "is a directory"}
		case !si.Mode().IsRegular():
			return fileInfo{state: stateOther, links: links, detail: "link target is not a regular file"}
		}
		return fileInfo{state: stateFile, mode: si.Mode(), links: links}
	case mode.IsDir():
		return fileInfo{state: stateOther, detail: "is a directory"}
	case mode.IsRegular():
		if r.rules.windows && li.Size() == 0 {
			if _, err := r.fs.Stat(p); err != nil {
				return fileInfo{state: stateAlias, mode: mode}
			}
		}
		return fileInfo{state: stateFile, mode: mode}
	case r.rules.windows && mode&fs.ModeIrregular != 0:
		si, err := r.fs.Stat(p)
		if err == nil && si.Mode().IsRegular() {
			return fileInfo{state: stateFile, mode: si.Mode()}
		}
		if li.Size() == 0 {
			return fileInfo{state: stateAlias, mode: mode}
		}
		return fileInfo{state: stateOther, detail: "not a regular file (reparse point)"}
	}
	return fileInfo{state: stateOther, detail: "not a regular file (" + mode.Type().String() + ")"}
}

// chain follows the symbolic links starting at p and returns every path
// from p to the last target, or nil when p is not a link.
func (r *resolver) chain(p string) []string {
	links := []string{p}
	cur := p
	for range maxLinks {
		target, err := r.fs.Readlink(cur)
		if err != nil || target == "" {
			break
		}
		if !r.rules.isAbs(target) {
			target = r.rules.join(r.rules.dir(cur), target)
		}
		target = r.rules.clean(target)
		links = append(links, target)
		li, err := r.fs.Lstat(target)
		if err != nil || li.Mode()&fs.ModeSymlink == 0 {
			break
		}
		cur = target
	}
	if len(links) == 1 {
		return nil
	}
	return links
}

func ctxErr(ctx context.Context) error {
	err := ctx.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return failure.Wrap(failure.Timeout, err, "resolution did not finish in time")
	}
	return failure.Wrap(failure.Cancelled, err, "resolution cancelled")
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// trailBuilder keeps one candidate's steps within maxStepsPerCandidate;
// summaries and verdicts (at most a handful: PATH entry counts, the chosen
// file, not-found) are always kept, after the count of what was left out.
type trailBuilder struct {
	candidate string
	list      []Step
	verdicts  []Step
	count     int // steps added, kept or not
}

// reserve makes room for n steps, within the bound.
func (t *trailBuilder) reserve(n int) {
	t.list = slices.Grow(t.list, min(n, maxStepsPerCandidate))
}

func (t *trailBuilder) add(s Step) {
	t.count++
	if len(t.list) >= maxStepsPerCandidate {
		return
	}
	s.Candidate = t.candidate
	s.Detail = bounded(s.Detail, maxDetail)
	t.list = append(t.list, s)
}

func (t *trailBuilder) verdict(s Step) {
	t.count++
	s.Candidate = t.candidate
	s.Detail = bounded(s.Detail, maxDetail)
	t.verdicts = append(t.verdicts, s)
}

func (t *trailBuilder) steps() []Step {
	out := t.list
	if omitted := t.count - len(t.list) - len(t.verdicts); omitted > 0 {
		out = append(out, Step{Candidate: t.candidate, Outcome: outcomeOmitted, Detail: fmt.Sprintf("%d more steps left out", omitted)})
	}
	return append(out, t.verdicts...)
}

// bounded cuts s to at most n bytes, keeping its start and end and marking
// the cut, on rune boundaries.
func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…"
	keep := n - len(mark)
	head := keep * 2 / 3
	tail := keep - head
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[:head] + mark + s[start:]
}

// quoteBounded wraps s in double quotes, bounded, with control characters
// shown as '?'.
func quoteBounded(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if isControl(r) {
			return '?'
		}
		return r
	}, s)
	return `"` + bounded(s, n) + `"`
}
