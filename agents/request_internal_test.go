package agents

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/mcpbridge"
	"github.com/cursorkit/cursorkit/turn"
)

// TestTurnCarriesTheRequest: a Turn begins with every field of
// turn.Request, by name and type, and request copies each of them, so a
// field added to the request reaches every agent or fails here.
func TestTurnCarriesTheRequest(t *testing.T) {
	rt, tt := reflect.TypeFor[turn.Request](), reflect.TypeFor[Turn]()
	require.GreaterOrEqual(t, tt.NumField(), rt.NumField())
	for i := range rt.NumField() {
		assert.Equal(t, rt.Field(i).Name, tt.Field(i).Name, "field %d", i)
		assert.Equal(t, rt.Field(i).Type, tt.Field(i).Type, "field %s", rt.Field(i).Name)
	}

	full := Turn{Prompt: "p", Mode: turn.ModeWrite, Model: "m", Resume: "r", Tools: []string{"t"},
		Bridge: &mcpbridge.Server{Name: "b"}, MCPServers: []string{"s"}, PartialOutput: true, Sandboxed: true}
	got := reflect.ValueOf(request(full))
	for i := range rt.NumField() {
		assert.False(t, got.Field(i).IsZero(), "request drops %s", rt.Field(i).Name)
		assert.Equal(t, reflect.ValueOf(full).Field(i).Interface(), got.Field(i).Interface(), rt.Field(i).Name)
	}
}
