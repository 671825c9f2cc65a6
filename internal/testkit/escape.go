package testkit

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// EscapeAll spells every rune of s as a JSON \uXXXX escape, a rune beyond
// the BMP as its surrogate pair: the contents of a JSON string that hold
// none of s's text as it is.
func EscapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04X`, hi, lo)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}
