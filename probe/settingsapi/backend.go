package settingsapi

import (
	"context"

	"github.com/cursorkit/cursorkit/agents/cursor"
	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/internal/jsonobj"
	"github.com/cursorkit/cursorkit/probe"
)

// fileStore is the store of a settings file (cursor.LoadSettings and
// cursor.UpdateSettings, which keep its other members and replace it
// atomically). The Handler serializes saves.
type fileStore struct {
	path string
}

func (f fileStore) binaryPath() (string, error) {
	s, err := cursor.LoadSettings(f.path)
	return s.BinaryPath, err
}

func (f fileStore) setBinaryPath(p string) error {
	_, err := cursor.UpdateSettings(f.path, func(s *cursor.Settings) error {
		s.BinaryPath = p
		return nil
	})
	return err
}

// probeBackend is the prober of package probe. probeExact runs
// probe.ProbeExact on the candidate alone; status and models read the
// configured binary from the store on every call and probe with it as the
// override, so they always describe what is saved.
type probeBackend struct {
	store store
	cfg   probe.Config
}

// probeExact probes exactly path. The verdict is ok only when that
// candidate's own --version succeeded (an older build than tested is an
// error); exact only when the binary that ran is the configured candidate
// itself; cursorBuild only when what it printed is a Cursor build
// identifier (a build of unknown version is not known to be Cursor).
func (b probeBackend) probeExact(ctx context.Context, path string) (verdict, error) {
	report, err := probe.ProbeExact(ctx, path, b.cfg)
	v := verdict{
		report:      report,
		ok:          err == nil && report.Available,
		exact:       exactCandidate(report),
		cursorBuild: report.Tested != cursor.TestedUnknown,
		version:     report.Version,
		diagnostics: report.Diagnostics,
	}
	return v, err
}

// exactCandidate reports whether the effective binary is the configured
// override, tried alone.
func exactCandidate(r probe.Report) bool {
	if !r.Available || r.Binary.Resolution.Source != discovery.SourceOverride {
		return false
	}
	for _, c := range r.Candidates {
		if c.Source != discovery.SourceOverride {
			return false
		}
	}
	return true
}

// status is `cursorkit status --json` for the stored binary path: the
// probe's members and the auth verdict's in one object. On failure the
// partial report (which binary answered, the auth state) comes with the
// error, as the CLI shows it.
func (b probeBackend) status(ctx context.Context) (any, error) {
	cfg, err := b.config()
	if err != nil {
		return nil, err
	}
	report, err := probe.Probe(ctx, cfg)
	auth, aerr := probe.Status(ctx, cfg, report)
	if err == nil {
		err = aerr
	}
	merged, merr := jsonobj.Merge(report, auth)
	if merr != nil {
		return nil, merr
	}
	return merged, err
}

// models is `cursorkit models --json` for the stored binary path; on
// failure the partial report comes with the error.
func (b probeBackend) models(ctx context.Context, refresh bool) (any, error) {
	cfg, err := b.config()
	if err != nil {
		return nil, err
	}
	report, err := probe.Probe(ctx, cfg)
	if !report.Available {
		return probe.ModelsReport{Models: []probe.Model{}, Diagnostics: report.Diagnostics}, err
	}
	mr, merr := probe.Models(ctx, cfg, report, refresh)
	if err != nil {
		return mr, err
	}
	return mr, merr
}

func (b probeBackend) config() (probe.Config, error) {
	path, err := b.store.binaryPath()
	if err != nil {
		return probe.Config{}, err
	}
	cfg := b.cfg
	cfg.Override = path
	return cfg, nil
}
