// Package cliversion tells an agent CLI's version apart from other text:
// the one rule every agent's ParseVersion applies to the token it finds.
package cliversion

import "strings"

// Valid reports whether v is a whole semantic version as npm packages and
// Cargo crates are numbered: MAJOR.MINOR.PATCH, each 1 to 9 digits without
// a leading zero, maybe followed by a -prerelease and a +build, each 1 to
// 64 ASCII letters, digits, '.' and '-' (a nightly's "-nightly.20261201.
// 0123abc" included, whose parts strict semver would refuse). A leading
// "v" is the caller's to drop (Trim).
func Valid(v string) bool {
	rest, build, hasBuild := strings.Cut(v, "+")
	core, pre, hasPre := strings.Cut(rest, "-")
	if hasBuild && !label(build) || hasPre && !label(pre) {
		return false
	}
	n := 0
	for part := range strings.SplitSeq(core, ".") {
		if n++; n > 3 || !number(part) {
			return false
		}
	}
	return n == 3
}

// number reports whether s is 1 to 9 decimal digits without a leading zero.
func number(s string) bool {
	if s == "" || len(s) > 9 || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// label reports whether s is 1 to 64 ASCII letters, digits, '.' and '-'.
func label(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
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
