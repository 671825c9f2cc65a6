package failure_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

func TestExitCodesMatchSpec(t *testing.T) {
	tests := []struct {
		kind failure.Kind
		code int
	}{
		{failure.Unclassified, 1},
		{failure.Resource, 1},
		{failure.Input, 2},
		{failure.MissingCLI, 3},
		{failure.Setup, 4},
		{failure.Auth, 5},
		{failure.Quota, 6},
		{failure.RateLimited, 6},
		{failure.Network, 7},
		{failure.Sandbox, 8},
		{failure.Policy, 8},
		{failure.Protocol, 9},
		{failure.Timeout, 10},
		{failure.Process, 11},
		{failure.Died, 11},
		{failure.Cancelled, 130},
		{failure.Kind("nonsense"), 1},
		{failure.Kind(""), 1},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			assert.Equal(t, tt.code, failure.ExitCode(tt.kind))
		})
	}
}

func TestEveryKindHasAnExitCodeAndParses(t *testing.T) {
	kinds := failure.Kinds()
	require.Len(t, kinds, 16)
	seen := map[failure.Kind]bool{}
	for _, k := range kinds {
		assert.False(t, seen[k], "duplicate kind %q", k)
		seen[k] = true
		assert.True(t, k.Valid())
		parsed, ok := failure.ParseKind(string(k))
		assert.True(t, ok)
		assert.Equal(t, k, parsed)
		assert.NotZero(t, failure.ExitCode(k))
	}
	_, ok := failure.ParseKind("MISSING_CLI")
	assert.False(t, ok, "kinds are case-sensitive")
	kinds[0] = "mutated"
	assert.Equal(t, failure.MissingCLI, failure.Kinds()[0], "Kinds returns a copy")
}

func TestKindOfWalksTheChain(t *testing.T) {
	base := failure.New(failure.Timeout, "first line deadline of %s passed", "30s")
	wrapped := fmt.Errorf("probe: %w", base)

	tests := []struct {
		name string
		err  error
		want failure.Kind
		code int
	}{
		{"nil", nil, "", 0},
		{"plain error", io.EOF, failure.Unclassified, 1},
		{"direct", base, failure.Timeout, 10},
		{"wrapped by fmt", wrapped, failure.Timeout, 10},
		{"wrap helper", failure.Wrap(failure.MissingCLI, io.ErrUnexpectedEOF, "no binary"), failure.MissingCLI, 3},
		{"invalid kind falls back", &failure.Error{Kind: "bogus", Message: "x"}, failure.Unclassified, 1},
		{"joined takes first", errors.Join(io.EOF, base), failure.Timeout, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, failure.KindOf(tt.err))
			assert.Equal(t, tt.code, failure.ExitCodeOf(tt.err))
		})
	}
}

func TestErrorTextAndUnwrap(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	tests := []struct {
		name string
		err  *failure.Error
		want string
	}{
		{"message only", &failure.Error{Kind: failure.Input, Message: "argument 2 holds '&'"}, "argument 2 holds '&'"},
		{"detail wins over cause", &failure.Error{Kind: failure.Setup, Message: "bad", Detail: "d", Err: cause}, "bad: d"},
		{"cause", &failure.Error{Kind: failure.Setup, Message: "bad", Err: cause}, "bad: unexpected EOF"},
		{"empty message uses kind", &failure.Error{Kind: failure.Protocol}, "protocol"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error())
		})
	}

	err := failure.Wrap(failure.Process, cause, "start %s", "x")
	assert.ErrorIs(t, err, cause)
	var fe *failure.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, failure.Process, fe.Kind)
	assert.Equal(t, "start x", fe.Message)
	assert.NoError(t, failure.Wrap(failure.Process, nil, "never"))
}

func TestIsMatchesByKind(t *testing.T) {
	err := fmt.Errorf("outer: %w", failure.New(failure.Auth, "not logged in"))
	assert.ErrorIs(t, err, &failure.Error{Kind: failure.Auth})
	assert.NotErrorIs(t, err, &failure.Error{Kind: failure.Quota})
	assert.NotErrorIs(t, err, &failure.Error{Kind: failure.Auth, Message: "other"})
	assert.True(t, failure.Is(err, failure.Auth))
	assert.False(t, failure.Is(nil, failure.Auth))
}

func TestWithDetailCopies(t *testing.T) {
	orig := failure.New(failure.MissingCLI, "no cursor-agent")
	withDetail := orig.WithDetail("cursor-agent: not found on PATH")
	assert.Empty(t, orig.Detail)
	assert.Equal(t, "no cursor-agent: cursor-agent: not found on PATH", withDetail.Error())
}
