package probe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/childenv"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/shim"
)

// Default bounds of each command (docs/contract.md, "Defaults").
const (
	defaultVersionTimeout = 3 * time.Second
	defaultStatusTimeout  = 3 * time.Second
	defaultModelsTimeout  = 5 * time.Second
)

// Config says which binary to probe and how. The zero value probes this
// machine: no override, the process environment, default bounds and the
// user's cache directory.
type Config struct {
	// Override is the configured binary: the settings file's
	// cursorCliBinaryPath or the --binary flag. It is one string, never
	// split. "" means none.
	Override string
	// Environ is the environment the Cursor CLI is found in and runs
	// with: cursor.EnvBinary is read from it, its PATH and PATHEXT are
	// searched, and the probed commands get it. nil means this process's.
	Environ []string

	// Bounds of each command: --version and status 3 s, models 5 s when
	// zero. A command past its bound is killed with its whole tree.
	VersionTimeout time.Duration
	StatusTimeout  time.Duration
	ModelsTimeout  time.Duration

	// CacheDir holds the model catalog cache (one hour per binary and
	// build) and the version cache; "" means <user cache dir>/cursorkit.
	// Without a usable directory nothing is cached (a diagnostic says so).
	CacheDir string
	// ReuseVersion lets Probe take a candidate's --version answer from the
	// version cache instead of running it, when the resolved file is
	// unchanged since a successful probe (the candidate's detail says so);
	// successful probes are recorded. `run`, `task`, `review` and the
	// fallback's arming set it, so a turn skips a Node.js start.
	ReuseVersion bool

	// Test seams: the machine and file system resolution looks through,
	// the machine launch plans are built for, the tested interval, the
	// command runner and the clock of the caches.
	env    *discovery.Env
	fs     discovery.FS
	shim   *shim.Options
	tested cursor.Interval
	runner runner
	now    func() time.Time
}

// getenv reads one variable of Environ (the last of duplicates wins, as
// with os/exec; names are case-insensitive on Windows).
func (c Config) getenv(key string) string {
	if c.Environ == nil {
		return os.Getenv(key)
	}
	return childenv.Lookup(c.Environ, key, runtime.GOOS)
}

// machine is the machine resolution applies its rules to: this one, with
// PATH and PATHEXT from Environ.
func (c Config) machine() discovery.Env {
	if c.env != nil {
		return *c.env
	}
	e := discovery.EnvFromOS()
	if c.Environ != nil {
		e.Path, e.PathExt = c.getenv("PATH"), c.getenv("PATHEXT")
	}
	return e
}

func (c Config) fsys() discovery.FS {
	if c.fs != nil {
		return c.fs
	}
	return discovery.OSFS()
}

func (c Config) run() runner {
	if c.runner != nil {
		return c.runner
	}
	return supervisedRunner{shim: c.shimOptions(), env: c.Environ}
}

// shimOptions are the launch options plans are built with: this machine's.
func (c Config) shimOptions() shim.Options {
	if c.shim != nil {
		return *c.shim
	}
	return shim.OptionsFromOS()
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (c Config) interval() cursor.Interval {
	if c.tested.From.IsZero() && c.tested.Until.IsZero() {
		return cursor.TestedInterval()
	}
	return c.tested
}

// cacheDir returns the cache root, or an error when there is none.
func (c Config) cacheDir() (string, error) {
	if c.CacheDir != "" {
		return c.CacheDir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", failure.Wrap(failure.Setup, err, "no user cache directory")
	}
	return filepath.Join(dir, "cursorkit"), nil
}

// Probe finds the effective Cursor CLI (docs/contract.md, "Probes"): it
// tries each candidate of cursor.Candidates in order, running its
// --version under its own bound (cfg.VersionTimeout; on timeout the whole
// process tree is killed), and the first that exits 0 is effective. With
// cfg.ReuseVersion, a candidate whose file is unchanged since a successful
// probe takes its recorded answer instead of running (its candidate detail
// says so). A configured override that fails while a later candidate
// succeeds leaves cursorkit usable; its failure is the first diagnostic.
// A candidate whose --version prints a failure cursor.Diagnose knows
// instead of its version is blocked: later candidates are still tried, and
// when none exits 0 the first blocked one is effective (Report.Blocked).
//
// The Report is always filled in. The error is failure.MissingCLI when
// every candidate failed and none was blocked (its detail names each
// candidate and why), a blocked binary's cause (Auth.Err),
// failure.Setup when the effective build is older than the tested
// interval (Report.Available stays true), and failure.Cancelled or
// failure.Timeout when ctx ended first. A newer build or an unparseable
// version is not an error.
func Probe(ctx context.Context, cfg Config) (Report, error) {
	return probeCandidates(ctx, cfg, cursor.Candidates(cfg.Override, cfg.getenv))
}

// ProbeExact probes exactly one configured path, as the settings endpoint
// must before saving it: the value is resolved as an override and its own
// --version must succeed; no PATH candidate is ever tried in its place.
// It never reuses a cached version. Errors as Probe's; an empty path is a
// failure.Input error.
func ProbeExact(ctx context.Context, path string, cfg Config) (Report, error) {
	cfg.ReuseVersion = false
	cfg.Override = strings.TrimSpace(path)
	if cfg.Override == "" {
		return emptyReport(), failure.New(failure.Input, "no binary path given")
	}
	// The override comes first among the candidates, and alone here.
	return probeCandidates(ctx, cfg, cursor.Candidates(cfg.Override, nil)[:1])
}

func emptyReport() Report {
	return Report{Tested: cursor.TestedUnknown, Candidates: []CandidateResult{}, Diagnostics: []string{}}
}

func probeCandidates(ctx context.Context, cfg Config, cands []discovery.Candidate) (Report, error) {
	report := emptyReport()
	env, fsys, run := cfg.machine(), cfg.fsys(), cfg.run()
	timeout := orDefault(cfg.VersionTimeout, defaultVersionTimeout)
	versions := cfg.versionCache()
	configured := false
	var failures []string
	var first *blockedBinary // the first candidate that ran but was blocked
	for _, cand := range cands {
		if err := ctx.Err(); err != nil {
			return report, ctxFailure(err, "probe")
		}
		configured = configured || cand.Source != discovery.SourcePath
		result := CandidateResult{Candidate: detail.Bound(cand.Value), Source: cand.Source}
		// done records the candidate's outcome; a failure's goes to the
		// diagnostics if another candidate works.
		done := func(outcome, why string) {
			result.Outcome, result.Detail = outcome, why
			report.Candidates = append(report.Candidates, result)
			if outcome != outcomeOK {
				failures = append(failures, describeFailure(result))
			}
		}
		err := cursor.CheckCandidate(cand, env.GOOS)
		var res discovery.Resolution
		if err == nil {
			res, err = discovery.Resolve(ctx, cand, env, fsys)
		}
		if err != nil {
			if ctx.Err() != nil {
				return report, ctxFailure(ctx.Err(), "probe")
			}
			done(classifyResolveErr(err))
			continue
		}
		result.Path = res.Path
		bin := cursor.Binary{Resolution: res, Configured: configured}
		id, identified := identifyFor(versions, fsys, res)
		if identified {
			if out, probedAt, ok := versions.load(id); ok {
				done(outcomeOK, fmt.Sprintf("version from cache (probed %s; file unchanged)", probedAt.UTC().Format(time.RFC3339)))
				report.Diagnostics = append(append(report.Diagnostics, failures...), result.Detail)
				return effective(report, bin, []byte(out), cfg.interval())
			}
		}
		r := run.run(ctx, res, []string{"--version"}, timeout)
		if r.cancelled || ctx.Err() != nil {
			return report, ctxFailure(ctx.Err(), "probe")
		}
		if cause := versionCause(r); cause != cursor.CauseNone {
			// It exists and ran; a later candidate may still work.
			_, why := classify(r, "--version", timeout)
			done(outcomeBlocked, detail.Bound(string(cause)+": "+why))
			if first == nil {
				first = &blockedBinary{bin: bin, cause: cause, said: agentMessage(r.stdout, []byte(r.stderr))}
			}
			continue
		}
		if !r.ok() {
			done(classify(r, "--version", timeout))
			continue
		}
		done(outcomeOK, "")
		report.Diagnostics = append(report.Diagnostics, failures...)
		if identified {
			report.Diagnostics = append(report.Diagnostics, rememberVersion(versions, fsys, res, id, r)...)
		}
		return effective(report, bin, r.stdout, cfg.interval())
	}
	report.Diagnostics = append(report.Diagnostics, failures...)
	if first != nil {
		return blocked(report, *first)
	}
	return report, failure.New(failure.MissingCLI, "no Cursor CLI candidate ran: %s", cursor.InstallHint).
		WithDetail(detail.Join(failures...))
}

// rememberVersion records r's output as the version of the file res names
// (identified as id before it ran), only when the file did not change
// while it ran; it returns the diagnostic of a cache it could not write.
func rememberVersion(versions *versionCache, fsys discovery.FS, res discovery.Resolution, id fileIdentity, r runResult) []string {
	if after, ok := identifyFor(versions, fsys, res); !ok || !after.equal(id) || r.truncated {
		return nil
	}
	if err := versions.store(id, r.stdout); err != nil {
		return []string{detail.Bound("version cache not written: " + err.Error())}
	}
	return nil
}

// blockedBinary is a candidate whose --version named a known failure.
type blockedBinary struct {
	bin   cursor.Binary
	cause cursor.Cause
	said  string // the agent's bounded words
}

// versionCause is the cause a --version run names instead of a version:
// for a run that exited non-zero (or died), what cursor.Diagnose finds in
// its stdout and stderr; for one that exited 0, what it finds in a stdout
// that holds no build identifier (a failure message printed in place of
// the version; stderr beside a version is only noise). A run that never
// ran to an end names none.
func versionCause(r runResult) cursor.Cause {
	switch {
	case r.refused != nil, r.startErr != nil, r.timedOut, r.cancelled:
		return cursor.CauseNone
	case r.ok():
		if cursor.ParseVersion(string(r.stdout)).Parsed {
			return cursor.CauseNone
		}
		return cursor.Diagnose(string(r.stdout))
	}
	return cursor.Diagnose(string(r.stdout) + "\n" + r.stderr)
}

// blocked fills report in for a binary that ran but whose --version named
// b.cause (and no later candidate worked): it is available, its version
// unknown, and the error is the cause's, as Status would report it.
func blocked(report Report, b blockedBinary) (Report, error) {
	report = chosen(report, b.bin)
	report.Blocked, report.BlockedDetail = b.cause, b.said
	return report, authFor(b.cause, b.said).Err()
}

// versionCache returns the version cache to use, nil without ReuseVersion
// or a cache directory.
func (c Config) versionCache() *versionCache {
	if !c.ReuseVersion {
		return nil
	}
	dir, err := c.cacheDir()
	if err != nil {
		return nil
	}
	return &versionCache{cacheFiles{Dir: filepath.Join(dir, "version"), Now: c.now}}
}

// identifyFor returns the identity of res's file when there is a version
// cache to consult and the file can be identified.
func identifyFor(versions *versionCache, fsys discovery.FS, res discovery.Resolution) (fileIdentity, bool) {
	if versions == nil {
		return fileIdentity{}, false
	}
	id, err := identify(fsys, res)
	return id, err == nil
}

// effective fills report in for the binary whose --version printed stdout
// (now, or when the version cache recorded it).
func effective(report Report, bin cursor.Binary, stdout []byte, iv cursor.Interval) (Report, error) {
	v := cursor.ParseVersion(string(stdout))
	report = chosen(report, bin)
	report.Version = v.Raw
	report.Tested = cursor.Judge(v, iv)
	tested := fmt.Sprintf("[%s, %s)", iv.From.Format("2006.01.02"), iv.Until.Format("2006.01.02"))
	switch report.Tested {
	case cursor.TestedOlder:
		err := failure.New(failure.Setup, "Cursor CLI build %s is older than the tested builds %s: update cursor-agent", v.BuildDate(), tested)
		report.Diagnostics = append(report.Diagnostics, err.Message)
		return report, err
	case cursor.TestedNewer:
		report.Diagnostics = append(report.Diagnostics,
			fmt.Sprintf("Cursor CLI build %s is newer than the tested builds %s", v.BuildDate(), tested))
	case cursor.TestedUnknown:
		report.Diagnostics = append(report.Diagnostics,
			detail.Bound(fmt.Sprintf("version %q is not a Cursor build identifier; the build could not be judged", v.Raw)))
	}
	return report, nil
}

// chosen fills report in for bin, the effective binary: available, with
// its resolution's warnings.
func chosen(report Report, bin cursor.Binary) Report {
	report.Available = true
	report.Binary = bin
	for _, w := range bin.Resolution.Warnings {
		report.Diagnostics = append(report.Diagnostics, detail.Bound(w))
	}
	return report
}

// describeFailure is a candidate's diagnostic line.
func describeFailure(r CandidateResult) string {
	return detail.Bound(fmt.Sprintf("%s %s: %s", r.Source, r.Candidate, r.Detail))
}

// ctxFailure is the error for a probe whose context ended.
func ctxFailure(err error, what string) error {
	if err == nil {
		err = context.Canceled
	}
	if err == context.DeadlineExceeded {
		return failure.Wrap(failure.Timeout, err, "%s did not finish in time", what)
	}
	return failure.Wrap(failure.Cancelled, err, "%s cancelled", what)
}
