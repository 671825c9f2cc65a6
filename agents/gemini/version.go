package gemini

import (
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/cliversion"
	"github.com/cursorkit/cursorkit/internal/detail"
	"github.com/cursorkit/cursorkit/turn"
)

// ParseVersion reads the output of `gemini --version`, which is the
// package's semver alone ("0.61.0", maybe with a pre-release such as
// "0.62.0-preview.1" or "0.61.0-nightly.20261201.abc1234"), and returns it.
// A UTF-8 BOM, ANSI escapes and surrounding space are ignored, and a
// leading "v" is dropped. Anything else (a banner, an error, several
// words) is a failure.Protocol error quoting a bounded excerpt.
func ParseVersion(output string) (string, error) {
	s := strings.TrimSpace(detail.StripANSI(strings.TrimPrefix(strings.TrimSpace(output), "\uFEFF")))
	if v := cliversion.Trim(s); cliversion.Valid(v) {
		return v, nil
	}
	return "", failure.New(failure.Protocol, "gemini --version printed %s, not a version", turn.Quote(detail.Bound(s), 80))
}
