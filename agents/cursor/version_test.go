package cursor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/internal/detail"
)

func TestParseVersion(t *testing.T) {
	day := func(y, m, d int) time.Time { return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name    string
		output  string
		raw     string
		parsed  bool
		build   time.Time
		hasTime bool
		hash    string
	}{
		{"plain build", "2026.08.11-e8db854\n", "2026.08.11-e8db854", true, day(2026, 8, 11), false, "e8db854"},
		{"time of day", "2026.08.11-14-03-22-e8db854", "2026.08.11-14-03-22-e8db854", true,
			time.Date(2026, 8, 11, 14, 3, 22, 0, time.UTC), true, "e8db854"},
		{"surrounding whitespace and CRLF", "  \r\n2026.10.15-ABCDEF1\r\n", "2026.10.15-ABCDEF1", true, day(2026, 10, 15), false, "abcdef1"},
		{"BOM", "\uFEFF2026.10.15-abcdef1", "2026.10.15-abcdef1", true, day(2026, 10, 15), false, "abcdef1"},
		{"first token only", "2026.10.15-abcdef1 (stable)\nextra", "2026.10.15-abcdef1", true, day(2026, 10, 15), false, "abcdef1"},
		{"date without hash", "2026.10.15", "2026.10.15", true, day(2026, 10, 15), false, ""},
		{"leading v", "v2026.10.15-abcdef1", "v2026.10.15-abcdef1", true, day(2026, 10, 15), false, "abcdef1"},
		{"ANSI colour", "\x1b[32m2026.10.15-abcdef1\x1b[0m", "2026.10.15-abcdef1", true, day(2026, 10, 15), false, "abcdef1"},
		{"empty", "", "", false, time.Time{}, false, ""},
		{"only spaces", " \n\t ", "", false, time.Time{}, false, ""},
		{"semver", "1.2.3", "1.2.3", false, time.Time{}, false, ""},
		{"impossible date", "2026.02.30-e8db854", "2026.02.30-e8db854", false, time.Time{}, false, ""},
		{"month 13", "2026.13.01-e8db854", "2026.13.01-e8db854", false, time.Time{}, false, ""},
		{"hour 24", "2026.08.11-24-00-00-e8db854", "2026.08.11-24-00-00-e8db854", false, time.Time{}, false, ""},
		{"non-hex hash", "2026.08.11-zzzzzzz", "2026.08.11-zzzzzzz", false, time.Time{}, false, ""},
		{"short hash", "2026.08.11-e8d", "2026.08.11-e8d", false, time.Time{}, false, ""},
		{"error text", "Error: Your macOS login keychain is locked.", "Error:", false, time.Time{}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := ParseVersion(tt.output)
			assert.Equal(t, tt.raw, v.Raw)
			assert.Equal(t, tt.parsed, v.Parsed)
			assert.True(t, tt.build.Equal(v.Build), "build %v, want %v", v.Build, tt.build)
			assert.Equal(t, tt.hasTime, v.HasTime)
			assert.Equal(t, tt.hash, v.Hash)
		})
	}
}

func TestParseVersionBoundsRaw(t *testing.T) {
	long := make([]byte, 5000)
	for i := range long {
		long[i] = 'x'
	}
	v := ParseVersion(string(long))
	assert.False(t, v.Parsed)
	assert.LessOrEqual(t, len([]rune(v.Raw)), detail.MaxRunes)
}

func TestJudge(t *testing.T) {
	iv := TestedInterval()
	tests := []struct {
		output string
		want   Tested
	}{
		{"2026.08.11-e8db854", TestedOlder},
		{"2026.09.30-23-59-59-e8db854", TestedOlder},
		{"2026.10.01-e8db854", TestedInRange},
		{"2026.10.01-00-00-00-e8db854", TestedInRange},
		{"2026.10.31-23-59-59-e8db854", TestedInRange},
		{"2026.11.01-e8db854", TestedNewer},
		{"2027.01.01-e8db854", TestedNewer},
		{"garbage", TestedUnknown},
		{"", TestedUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.output, func(t *testing.T) {
			assert.Equal(t, tt.want, Judge(ParseVersion(tt.output), iv))
		})
	}
}

func TestJudgeCustomInterval(t *testing.T) {
	iv := Interval{
		From:  time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC),
		Until: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC),
	}
	assert.Equal(t, TestedInRange, Judge(ParseVersion("2026.08.11-e8db854"), iv))
	assert.Equal(t, TestedNewer, Judge(ParseVersion("2026.10.11-e8db854"), iv))
	assert.Equal(t, "2026.08.11", ParseVersion("2026.08.11-14-03-22-e8db854").BuildDate())
	assert.Equal(t, "", ParseVersion("nope").BuildDate())
}

func FuzzParseVersion(f *testing.F) {
	for _, seed := range []string{"2026.08.11-e8db854", "2026.08.11-14-03-22-e8db854", "", "\uFEFF2026.10.01", "2026.02.30-abc123", "x y z"} {
		f.Add(seed)
	}
	iv := TestedInterval()
	f.Fuzz(func(t *testing.T, output string) {
		v := ParseVersion(output)
		tested := Judge(v, iv)
		if !v.Parsed {
			if tested != TestedUnknown || !v.Build.IsZero() || v.Hash != "" {
				t.Fatalf("unparsed version %q judged %s with build %v hash %q", output, tested, v.Build, v.Hash)
			}
			return
		}
		if tested == TestedUnknown {
			t.Fatalf("parsed version %q judged unknown", output)
		}
		// A parsed build re-parses to the same identity.
		again := ParseVersion(v.Raw)
		if !again.Parsed || !again.Build.Equal(v.Build) || again.Hash != v.Hash {
			t.Fatalf("re-parsing %q gave %+v, first %+v", v.Raw, again, v)
		}
	})
}
