package settingsapi

import (
	"context"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/probe"
)

// ProbeBackend is the Prober of package probe. ProbeExact runs
// probe.ProbeExact on the candidate alone; Status and Models read the
// configured binary from Store on every call and run probe.Status and
// probe.Models with it as the override, so they always describe what is
// saved.
type ProbeBackend struct {
	// Store is where the configured binary path is read.
	Store Store
	// Config is the probes' configuration; its Override is replaced by the
	// stored path.
	Config probe.Config
}

var _ Prober = ProbeBackend{}

// ProbeExact probes exactly path. The Verdict is OK only when that
// candidate's own --version succeeded (an older build than tested is an
// error); Exact only when the binary that ran is the configured candidate
// itself.
func (b ProbeBackend) ProbeExact(ctx context.Context, path string) (Verdict, error) {
	report, err := probe.ProbeExact(ctx, path, b.Config)
	v := Verdict{
		Report:      report,
		OK:          err == nil && report.Available,
		Exact:       exactCandidate(report),
		Diagnostics: report.Diagnostics,
	}
	if v.OK && !v.Exact {
		v.Reason = "the binary that ran is not the configured path itself"
	}
	return v, err
}

// exactCandidate reports whether the effective binary is the configured
// override, tried alone.
func exactCandidate(r probe.Report) bool {
	if !r.Available || !r.UsingConfiguredBinaryPath || r.Source != discovery.SourceOverride {
		return false
	}
	for _, c := range r.Candidates {
		if c.Source != discovery.SourceOverride {
			return false
		}
	}
	return true
}

// Status is probe.Status for the stored binary path. On failure the
// partial report (which binary answered, the auth state) comes with the
// error, as `cursorkit status --json` shows it.
func (b ProbeBackend) Status(ctx context.Context) (any, error) {
	cfg, err := b.config()
	if err != nil {
		return nil, err
	}
	report, err := probe.Status(ctx, cfg)
	if err == nil {
		err = report.Auth.Err()
	}
	return report, err
}

// Models is probe.Models for the stored binary path; on failure the
// partial report comes with the error.
func (b ProbeBackend) Models(ctx context.Context, refresh bool) (any, error) {
	cfg, err := b.config()
	if err != nil {
		return nil, err
	}
	report, err := probe.Models(ctx, cfg, refresh)
	return report, err
}

func (b ProbeBackend) config() (probe.Config, error) {
	path, err := b.Store.BinaryPath()
	if err != nil {
		return probe.Config{}, err
	}
	cfg := b.Config
	cfg.Override = path
	return cfg, nil
}
