package shim

import (
	"fmt"
	"unicode/utf8"
)

// NoChar is ArgError.Char when a refusal concerns the argument as a whole
// (an empty argument, say) rather than one character of it.
const NoChar rune = -1

// ArgError is the cause behind every refused argument. Build wraps it in a
// *failure.Error of kind failure.Input, so callers test the kind with
// failure.KindOf and reach the details with errors.As. It names the argument
// by index and the offending character, and never holds the argument's value.
type ArgError struct {
	// Index is the argument's position in the args passed to Build (0 is the
	// first argument after the program).
	Index int
	// Char is the refused character, utf8.RuneError for bytes that are not
	// UTF-8, or NoChar.
	Char rune
	// Reason says why, for people: what the target cannot carry safely.
	Reason string
}

func (e *ArgError) Error() string {
	if e.Char == NoChar {
		return fmt.Sprintf("argument %d %s", e.Index, e.Reason)
	}
	return fmt.Sprintf("argument %d holds %s: %s", e.Index, describeChar(e.Char), e.Reason)
}

// TargetError is the cause behind a target file that cannot be launched
// safely (an unsupported extension, a script path cmd.exe would re-parse).
// Build wraps it in a *failure.Error of kind failure.Setup.
type TargetError struct {
	// Char is the offending character of the path, or NoChar.
	Char rune
	// Reason says what is wrong and, where there is one, what to do.
	Reason string
}

func (e *TargetError) Error() string {
	if e.Char == NoChar {
		return e.Reason
	}
	return fmt.Sprintf("path holds %s: %s", describeChar(e.Char), e.Reason)
}

// describeChar renders r for an error message: its code point and, when it
// is printable, the character itself, e.g. `U+0026 '&'` or `U+000A`.
func describeChar(r rune) string {
	switch {
	case r == utf8.RuneError:
		return "a byte that is not UTF-8"
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return fmt.Sprintf("U+%04X", r)
	default:
		return fmt.Sprintf("U+%04X %q", r, r)
	}
}
