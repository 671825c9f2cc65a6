// Package cursor is everything cursorkit knows about the Cursor CLI,
// `cursor-agent`, in one place above the generic mechanism (discovery,
// shim, launch, supervise, which know no agent):
//
//   - which binary: Candidates (the configured override, EnvBinary, then
//     cursor-agent and cursor on PATH, never the bare name agent, which
//     CheckCandidate refuses), the installer's layout (InstalledBuild),
//     the builds cursorkit is tested with (TestedInterval, ParseVersion,
//     Judge) and the settings file that names an override (LoadSettings,
//     UpdateSettings). Package probe runs the binary's --version, status
//     and models with these rules.
//   - one prompt turn: Run starts it on a Binary (probe's choice) with the
//     prompt on stdin only, through package turn's supervised turn. Args
//     builds the agent's argv for a Turn and a decoder follows its stdout,
//     `cursor-agent --print --output-format stream-json`, turning each
//     line into agent-neutral events (package event) while it enforces
//     the protocol (turn.Stream), the turn's tool policy and drops the
//     text Cursor repeats. The decoder starts no process and reads no
//     file: the caller feeds it lines and stops the agent when Feed fails.
//   - the task profile: a Sandboxed Turn's argv and allowlist
//     (SandboxedTools), its private home (WritePrivateHome, PrivateEnv)
//     and the checks before it runs (CheckCredentials,
//     CheckWorkspaceSandbox, ProjectHooks).
//   - what the agent's failures mean: Diagnose reads any message the
//     Cursor CLI prints (from --version, status, models, a turn's error
//     result or stderr) and names its Cause with its failure kind and fix.
//     It is the one classifier: package probe and the decoder both read
//     the agent's words with it.
//
// docs/contract.md states the behaviours ("Resolution", "Stream", "The
// task profile", "Agent messages"); this documentation states how this
// package implements them.
package cursor
