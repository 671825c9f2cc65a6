// Package cliversion tells an agent CLI's version apart from other text:
// the one rule every agent's ParseVersion applies to the token it finds.
package cliversion

import (
	"strings"

	"golang.org/x/mod/semver"
)

// Valid reports whether v is a whole semantic version, MAJOR.MINOR.PATCH
// with no leading zeros and at most 9 digits each, maybe followed by a
// -prerelease and a +build, as npm packages and Cargo crates are numbered.
// A leading "v" is the caller's to drop: v itself must start with a digit.
func Valid(v string) bool {
	w := "v" + v
	// Canonical fills in a missing MINOR or PATCH and drops +build: a
	// version that is whole is its canonical form and its build.
	if v == "" || v[0] < '0' || v[0] > '9' || !semver.IsValid(w) || semver.Canonical(w)+semver.Build(w) != w {
		return false
	}
	core := strings.TrimPrefix(semver.Canonical(w), "v")
	core, _, _ = strings.Cut(core, "-")
	for n := range strings.SplitSeq(core, ".") {
		if len(n) > 9 {
			return false
		}
	}
	return true
}

// Trim returns s without a leading "v" before a digit, as some CLIs print
// their version.
func Trim(s string) string {
	if rest, ok := strings.CutPrefix(s, "v"); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		return rest
	}
	return s
}
