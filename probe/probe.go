package probe

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/shim"
)

// Default bounds (SPEC.md "Defaults").
const (
	DefaultVersionTimeout = 3 * time.Second
	DefaultStatusTimeout  = 3 * time.Second
	DefaultModelsTimeout  = 5 * time.Second
)

// Config says which binary to probe and how. The zero value probes this
// machine: no override, the process environment, default bounds, the
// default tested interval and catalog cache.
type Config struct {
	// Override is the configured binary: settings cursorCliBinaryPath or
	// the --binary flag. It is one string, never split. "" means none.
	Override string
	// Getenv reads CURSOR_AGENT_BIN; nil means os.Getenv.
	Getenv func(string) string
	// Env describes the machine resolution applies its rules to (PATH,
	// PATHEXT, the current directory); nil means discovery.EnvFromOS().
	Env *discovery.Env
	// FS is the file system resolution looks through; nil means
	// discovery.OSFS().
	FS discovery.FS
	// Shim describes the machine launch plans are built for; nil means
	// shim.OptionsFromOS().
	Shim *shim.Options
	// ChildEnv is the probed commands' full environment; nil inherits
	// this process's.
	ChildEnv []string

	// Bounds of each command; zero means the Default* value.
	VersionTimeout time.Duration
	StatusTimeout  time.Duration
	ModelsTimeout  time.Duration

	// Tested is the tested build interval; zero means
	// DefaultTestedInterval().
	Tested Interval

	// Cache keeps model catalogs; nil means a CatalogCache in
	// DefaultCatalogCacheDir() (no caching, with a diagnostic, when there
	// is no user cache directory).
	Cache *CatalogCache

	// VersionCache, when set, lets Probe take a candidate's --version
	// answer from the cache instead of running it, when the resolved file
	// is unchanged since a successful probe (see VersionCache); successful
	// probes are recorded in it. nil (the default) always runs --version.
	// Only `cursorkit run` sets it.
	VersionCache *VersionCache

	// runner replaces the supervised runner in tests.
	runner runner
}

func (c Config) getenv() func(string) string {
	if c.Getenv != nil {
		return c.Getenv
	}
	return os.Getenv
}

func (c Config) env() discovery.Env {
	if c.Env != nil {
		return *c.Env
	}
	return discovery.EnvFromOS()
}

func (c Config) fs() discovery.FS {
	if c.FS != nil {
		return c.FS
	}
	return discovery.OSFS()
}

func (c Config) run() runner {
	if c.runner != nil {
		return c.runner
	}
	opts := shim.OptionsFromOS()
	if c.Shim != nil {
		opts = *c.Shim
	}
	return supervisedRunner{shim: opts, env: c.ChildEnv}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (c Config) interval() Interval {
	if c.Tested.From.IsZero() && c.Tested.Until.IsZero() {
		return DefaultTestedInterval()
	}
	return c.Tested
}

// Probe finds the effective Cursor CLI: it tries each candidate of
// discovery.Candidates (the override, CURSOR_AGENT_BIN, cursor-agent, then
// cursor on PATH) in that order, running its --version under its own bound
// (cfg.VersionTimeout, 3 s by default; on timeout the whole process tree is
// killed), and the first that exits 0 is effective. With
// cfg.VersionCache set, a candidate whose file is unchanged since a
// successful probe takes its recorded answer instead of running
// (Report.VersionSource says which).
//
// A configured override that fails while a later candidate succeeds leaves
// cursorkit usable: the later candidate is effective,
// UsingConfiguredBinaryPath is false and the override's failure is the
// first diagnostic.
//
// The Report is always filled in. The error is failure.MissingCLI when
// every candidate failed (its detail names each candidate and why, the
// override first), failure.Setup when the effective build is older than
// the tested interval (Report.Available stays true), and failure.Cancelled
// or failure.Timeout when ctx ended first. A newer build or an unparseable
// version is not an error.
func Probe(ctx context.Context, cfg Config) (Report, error) {
	return probeCandidates(ctx, cfg, discovery.Candidates(cfg.Override, cfg.getenv()))
}

// ProbeExact probes exactly one configured path, as the settings endpoint
// must before saving it: the value is resolved as an override and its own
// --version must succeed; no PATH candidate is ever tried in its place.
// It never uses cfg.VersionCache. Errors as Probe's; an empty path is a
// failure.Input error.
func ProbeExact(ctx context.Context, path string, cfg Config) (Report, error) {
	cfg.VersionCache = nil
	cands := discovery.Candidates(strings.TrimSpace(path), nil)
	if strings.TrimSpace(path) == "" || len(cands) == 0 || cands[0].Source != discovery.SourceOverride {
		return emptyReport(), failure.New(failure.Input, "no binary path given")
	}
	return probeCandidates(ctx, cfg, cands[:1])
}

func emptyReport() Report {
	return Report{Tested: TestedUnknown, Candidates: []CandidateResult{}, Diagnostics: []string{}}
}

func probeCandidates(ctx context.Context, cfg Config, cands []discovery.Candidate) (Report, error) {
	report := emptyReport()
	env, fsys, run := cfg.env(), cfg.fs(), cfg.run()
	timeout := orDefault(cfg.VersionTimeout, DefaultVersionTimeout)
	var failures []string
	for _, cand := range cands {
		if err := ctx.Err(); err != nil {
			return report, ctxFailure(err, "probe")
		}
		result := CandidateResult{Candidate: BoundDetail(cand.Value), Source: cand.Source}
		res, err := discovery.Resolve(ctx, cand, env, fsys)
		if err != nil {
			if ctx.Err() != nil {
				return report, ctxFailure(ctx.Err(), "probe")
			}
			result.Outcome, result.Detail = classifyResolveErr(err)
			report.Candidates = append(report.Candidates, result)
			failures = append(failures, describeFailure(result))
			continue
		}
		result.Path = res.Path
		id, identified := cfg.identify(fsys, res)
		if identified {
			if out, probedAt, ok := cfg.VersionCache.load(id); ok {
				result.Outcome = OutcomeOK
				result.Detail = fmt.Sprintf("version from cache (probed %s; file unchanged)", probedAt.UTC().Format(time.RFC3339))
				report.Candidates = append(report.Candidates, result)
				report.Diagnostics = append(report.Diagnostics, failures...)
				report.Diagnostics = append(report.Diagnostics, result.Detail)
				return effective(report, res, []byte(out), SourceCache, cfg.interval())
			}
		}
		r := run.run(ctx, res, []string{"--version"}, timeout)
		if r.cancelled || ctx.Err() != nil {
			return report, ctxFailure(ctx.Err(), "probe")
		}
		if !r.ok() {
			result.Outcome, result.Detail = classify(r, "--version", timeout)
			report.Candidates = append(report.Candidates, result)
			failures = append(failures, describeFailure(result))
			continue
		}
		result.Outcome = OutcomeOK
		report.Candidates = append(report.Candidates, result)
		report.Diagnostics = append(report.Diagnostics, failures...)
		if identified {
			// Recorded only when the file did not change while it ran.
			if after, ok := cfg.identify(fsys, res); ok && after.equal(id) && !r.truncated {
				if err := cfg.VersionCache.store(id, r.stdout); err != nil {
					report.Diagnostics = append(report.Diagnostics, BoundDetail("version cache not written: "+err.Error()))
				}
			}
		}
		return effective(report, res, r.stdout, SourceCLI, cfg.interval())
	}
	report.Diagnostics = append(report.Diagnostics, failures...)
	return report, failure.New(failure.MissingCLI, "no Cursor CLI candidate ran: install cursor-agent or set cursorCliBinaryPath").
		WithDetail(JoinDetails(failures...))
}

// identify returns the identity of res's file when a version cache is set
// and the file can be identified.
func (c Config) identify(fsys discovery.FS, res discovery.Resolution) (fileIdentity, bool) {
	if c.VersionCache == nil || c.VersionCache.Dir == "" {
		return fileIdentity{}, false
	}
	id, err := identify(fsys, res)
	return id, err == nil
}

// effective fills report in for the candidate whose --version printed
// stdout (source says whether it ran now or came from the version cache).
func effective(report Report, res discovery.Resolution, stdout []byte, source string, iv Interval) (Report, error) {
	v := ParseVersion(string(stdout))
	report.VersionSource = source
	report.Available = true
	report.BinaryPath = res.Path
	report.BinaryName = res.Name
	report.Kind = res.Kind
	report.Source = res.Source
	report.UsingConfiguredBinaryPath = res.Source == discovery.SourceOverride
	report.Version = v.Raw
	report.Parsed = v
	report.Tested = Judge(v, iv)
	report.BuildDate = v.BuildDate()
	report.BuildHash = v.Hash
	report.Resolution = res
	for _, w := range res.Warnings {
		report.Diagnostics = append(report.Diagnostics, BoundDetail(w))
	}
	tested := fmt.Sprintf("[%s, %s)", iv.From.Format("2006.01.02"), iv.Until.Format("2006.01.02"))
	switch report.Tested {
	case TestedOlder:
		err := failure.New(failure.Setup, "Cursor CLI build %s is older than the tested builds %s: update cursor-agent", v.BuildDate(), tested)
		report.Diagnostics = append(report.Diagnostics, err.Message)
		return report, err
	case TestedNewer:
		report.Diagnostics = append(report.Diagnostics,
			fmt.Sprintf("Cursor CLI build %s is newer than the tested builds %s", v.BuildDate(), tested))
	case TestedUnknown:
		report.Diagnostics = append(report.Diagnostics,
			BoundDetail(fmt.Sprintf("version %q is not a Cursor build identifier; the build could not be judged", v.Raw)))
	}
	return report, nil
}

// describeFailure is a candidate's diagnostic line.
func describeFailure(r CandidateResult) string {
	return BoundDetail(fmt.Sprintf("%s %s: %s", r.Source, r.Candidate, r.Detail))
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
