// Package probe answers "is the Cursor CLI usable here?": it finds the
// effective binary among cursor.Candidates by running each one's --version
// under its own bound and judging the build against cursor's tested
// interval (Probe; ProbeExact for one path alone, as the settings endpoint
// must), asks the chosen binary for its login state (Status) and its model
// catalog (Models, cached for an hour), and resolves model requests
// against that catalog (ResolveModel; ResolveTurnModel for a turn).
// StatusOf and ModelsOf are the probe followed by one of them. Inspect runs
// all of them at once and Diagnose turns its findings into problems with
// their fixes, which is what `cursorkit doctor` shows; Explain says how the
// Cursor CLI (or any target) would be found and launched, exactly.
//
// Every command starts through the generic mechanism (discovery, shim,
// supervise) and is killed with its whole process tree when its bound
// fires or ctx ends. The parsers are pure and behave the same on every OS.
//
// Every report is filled in also when an error is returned, so a caller
// can show what was tried; the error carries the failure kind for the exit
// code. Nothing this package returns carries PATH, the environment, tokens
// or prompt text; every detail taken from a child's output is bounded.
package probe
