package cursor

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cursorkit/cursorkit/internal/detail"
)

// Tested says how a build relates to the interval of builds cursorkit was
// tested against (the `tested` field of docs/contract.md).
type Tested string

const (
	TestedInRange Tested = "in-range" // the build date is inside the interval
	TestedNewer   Tested = "newer"    // newer than tested: runs, reported as such
	TestedOlder   Tested = "older"    // older than tested: a setup failure for the caller
	TestedUnknown Tested = "unknown"  // the version could not be parsed: not an error
)

// Interval is a half-open range of build dates [From, Until), compared by
// calendar date in UTC.
type Interval struct {
	From  time.Time
	Until time.Time
}

// TestedInterval returns the builds cursorkit is tested against,
// [2026.10.01, 2026.11.01) by build date: an older build fails as
// failure.Setup, a newer one runs and is reported as newer.
func TestedInterval() Interval {
	return Interval{
		From:  time.Date(2026, time.October, 1, 0, 0, 0, 0, time.UTC),
		Until: time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC),
	}
}

// Version is what `--version` printed, parsed.
type Version struct {
	Raw     string    // the first token of the output, bounded ("" when it was empty)
	Parsed  bool      // Raw is a Cursor build identifier
	Build   time.Time // the build's date (and time of day when Raw carries one), UTC; zero when not Parsed
	HasTime bool      // Raw carried -HH-MM-SS
	Hash    string    // the commit hash suffix, lower-case; "" when absent
}

// BuildDate returns the build date as "2026.08.11", or "" when not Parsed.
func (v Version) BuildDate() string {
	if !v.Parsed {
		return ""
	}
	return v.Build.Format("2006.01.02")
}

// buildID matches 2026.08.11-e8db854 and 2026.08.11-14-03-22-e8db854; the
// hash is optional so a bare date still yields a build date.
var buildID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^v?(\d{4})\.(\d{1,2})\.(\d{1,2})(?:-(\d{2})-(\d{2})-(\d{2}))?(?:-([0-9A-Fa-f]{6,64}))?$`)
})

// ParseVersion parses `--version` output: the first whitespace-separated
// token after trimming (a UTF-8 BOM and ANSI escapes are ignored). It never
// fails: text that is not a build identifier, or names an impossible date,
// yields Parsed false with Raw kept for display (bounded).
func ParseVersion(output string) Version {
	output = detail.StripANSI(strings.TrimPrefix(strings.TrimSpace(output), "\uFEFF"))
	fields := strings.Fields(output)
	if len(fields) == 0 {
		return Version{}
	}
	v := Version{Raw: detail.Bound(fields[0])}
	m := buildID().FindStringSubmatch(fields[0])
	if m == nil {
		return v
	}
	num := func(s string) int {
		n, _ := strconv.Atoi(s) // the pattern admits digits only
		return n
	}
	year, month, day := num(m[1]), num(m[2]), num(m[3])
	hour, minute, second := 0, 0, 0
	if m[4] != "" {
		hour, minute, second = num(m[4]), num(m[5]), num(m[6])
		if hour > 23 || minute > 59 || second > 59 {
			return v
		}
		v.HasTime = true
	}
	build := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC)
	// time.Date normalises 2026.02.30 to March; such a date is not a build.
	if build.Year() != year || int(build.Month()) != month || build.Day() != day {
		return Version{Raw: v.Raw}
	}
	v.Parsed = true
	v.Build = build
	v.Hash = strings.ToLower(m[7])
	return v
}

// Judge places v's build date in iv: TestedUnknown when v is not Parsed,
// TestedOlder before iv.From, TestedNewer at or after iv.Until, otherwise
// TestedInRange. Only the calendar date counts, so a build at 23:59 on the
// last day before Until is still in range.
func Judge(v Version, iv Interval) Tested {
	if !v.Parsed {
		return TestedUnknown
	}
	day := dateOnly(v.Build)
	switch {
	case day.Before(dateOnly(iv.From)):
		return TestedOlder
	case !day.Before(dateOnly(iv.Until)):
		return TestedNewer
	}
	return TestedInRange
}

func dateOnly(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
