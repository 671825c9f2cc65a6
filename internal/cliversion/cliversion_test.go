package cliversion

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValid(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"2.1.197", true},
		{"0.171.0", true},
		{"0.62.0-preview.1", true},
		{"0.61.0-nightly.20261201.abc1234", true},
		{"1.2.3+build.7", true},
		{"1.2.3-rc.1+build", true},
		{"0.0.0", true},
		{"1.2", false},
		{"1", false},
		{"01.2.3", false},
		{"1.02.3", false},
		{"1.2.3-", false},
		{"1.2.3+", false},
		{"1.2.3-a_b", false},
		{"0.61.0-nightly.20261201.0123456", true},
		{"1.2.3-rc..1", true},
		{"1.2.3-" + strings.Repeat("a", 65), false},
		{"1.2.3+" + strings.Repeat("b", 64), true},
		{"1.2.3.4", false},
		{"v1.2.3", false},
		{"", false},
		{"1.2.3 ", false},
		{"codex-cli 0.171.0", false},
		{"a.b.c", false},
		{"999999999.1.1", true},
		{"9999999999.1.1", false},
		{"1.1.9999999999-rc", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Valid(tt.v), "%q", tt.v)
	}
}

func TestTrim(t *testing.T) {
	assert.Equal(t, "1.2.3", Trim("v1.2.3"))
	assert.Equal(t, "version", Trim("version"))
	assert.Equal(t, "v", Trim("v"))
	assert.Equal(t, "1.2.3", Trim("1.2.3"))
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{"2.1.197", "0.62.0-preview.1", "1.2.3+b", "01.2.3", "1.2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !Valid(v) {
			return
		}
		// A valid version is three dot-separated numbers, then the rest.
		core := v
		for i, c := range v {
			if c == '-' || c == '+' {
				core = v[:i]
				break
			}
		}
		dots := 0
		for _, c := range core {
			switch {
			case c == '.':
				dots++
			case c < '0' || c > '9':
				t.Fatalf("%q: %q in the numbers", v, c)
			}
		}
		if dots != 2 {
			t.Fatalf("%q: %d dots in %q", v, dots, core)
		}
		if len(core) > 3*9+2 {
			t.Fatalf("%q: numbers over 9 digits", v)
		}
	})
}
