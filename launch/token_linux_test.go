package launch

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWithLaunchToken(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want []string
	}{
		{"added", []string{"A=1"}, []string{"A=1", LaunchIDEnv + "=tok"}},
		{"empty env", []string{}, []string{LaunchIDEnv + "=tok"}},
		{"inherited kept", []string{LaunchIDEnv + "=outer", "A=1"}, []string{"A=1", LaunchIDEnv + "=outer,tok"}},
		{"last duplicate wins", []string{LaunchIDEnv + "=x", LaunchIDEnv + "=y"}, []string{LaunchIDEnv + "=y,tok"}},
		{"empty inherited value", []string{LaunchIDEnv + "="}, []string{LaunchIDEnv + "=tok"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := slices.Clone(tc.env)
			assert.Equal(t, tc.want, withLaunchToken(tc.env, "tok"))
			assert.Equal(t, orig, tc.env, "input untouched")
		})
	}
}

func TestLaunchTokens(t *testing.T) {
	assert.Nil(t, launchTokens(-1), "no such process")
}

func BenchmarkSnapshot(b *testing.B) {
	for b.Loop() {
		if _, err := snapshot(); err != nil {
			b.Fatal(err)
		}
	}
}
