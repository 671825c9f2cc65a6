// Package probe answers "is Cursor usable here?": it runs the Cursor CLI's
// --version, `status --format json` and `models` commands under their own
// bounds, parses what they print, judges the build against the tested
// interval, resolves model requests against the catalog, caches the catalog
// and keeps the settings file that names the configured binary.
//
// The parsers (cursor.ParseVersion, parseStatus, parseModels), ResolveModel, the
// catalog cache and the settings store are pure or file-only and behave the
// same on every OS. Probe, ProbeExact, StatusOf/Status, ModelsOf/Models and
// Inspect start processes through the launch chain (discovery, shim,
// supervise); each command runs under its own bound and is killed with its
// whole process tree when the bound fires.
//
// Every Report is filled in also when an error is returned, so a caller can
// show what was tried; the error carries the failure kind for the exit code.
//
// Nothing this package returns or reports carries PATH, the environment,
// tokens or prompt text; every detail taken from a child's output is bounded
// by detail.Bound.
package probe
