// Package childenv holds the one rule every child environment cursorkit
// builds obeys: cursorkit's own secrets are never passed on
// (docs/contract.md, "Security"). launch.Start applies it to every plan it
// starts (agents, probes, exec targets, cmd.exe and PowerShell hosts), and
// the system tools cursorkit runs directly (where.exe, taskkill.exe) get
// it too.
package childenv

import (
	"runtime"
	"strings"
)

// Secrets returns the names of cursorkit's own secret variables, which no
// child inherits: CURSORKIT_TOKEN, the settings endpoint's bearer token.
func Secrets() []string { return []string{"CURSORKIT_TOKEN"} }

// Clean returns env (NAME=value entries) without cursorkit's own secrets,
// in order, as a new slice; env is not modified. Names are compared as
// the OS does: exactly on POSIX, case-insensitively on Windows.
func Clean(env []string) []string { return clean(env, runtime.GOOS == "windows") }

func clean(env []string, foldCase bool) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !isSecret(name(kv), foldCase) {
			out = append(out, kv)
		}
	}
	return out
}

// name is the variable name of a NAME=value entry. Windows keeps
// per-drive directories in names that start with '=' ("=C:=C:\x"), so a
// leading '=' belongs to the name.
func name(kv string) string {
	start := 0
	if strings.HasPrefix(kv, "=") {
		start = 1
	}
	if i := strings.IndexByte(kv[start:], '='); i >= 0 {
		return kv[:start+i]
	}
	return kv
}

func isSecret(n string, foldCase bool) bool {
	for _, s := range Secrets() {
		if n == s || foldCase && strings.EqualFold(n, s) {
			return true
		}
	}
	return false
}

// Lookup returns the value of name in env (NAME=value entries), "" when
// absent: the last entry wins, as with os/exec, and names compare as goos
// compares them (case-insensitively on Windows).
func Lookup(env []string, name, goos string) string {
	val := ""
	for _, kv := range env {
		if n, v, ok := strings.Cut(kv, "="); ok && (n == name || goos == "windows" && strings.EqualFold(n, name)) {
			val = v
		}
	}
	return val
}
