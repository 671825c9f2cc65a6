package codex

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/event"
	"github.com/cursorkit/cursorkit/failure"
)

// TestWireLineReset: reset empties every field of a wireLine, keeping the
// raw values' capacity.
func TestWireLineReset(t *testing.T) {
	var w wireLine
	fill(t, reflect.ValueOf(&w).Elem())
	w.reset()
	empty := func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			if f.Kind() == reflect.Slice {
				require.Zero(t, f.Len(), v.Type().Field(i).Name)
				require.NotZero(t, f.Cap(), v.Type().Field(i).Name)
			} else if f.Kind() != reflect.Struct {
				require.True(t, f.IsZero(), v.Type().Field(i).Name)
			}
		}
	}
	empty(reflect.ValueOf(w))
	empty(reflect.ValueOf(w.Item))
}

// fill sets every field of the struct v to a non-zero value.
func fill(t *testing.T, v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem() // unexported fields too
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Struct:
			fill(t, f)
		default:
			t.Fatalf("fill: field %s of kind %s", v.Type().Field(i).Name, f.Kind())
		}
	}
}

// TestIDSet: an idSet is a set of strings, short or long, NUL bytes
// included.
func TestIDSet(t *testing.T) {
	var s idSet
	ids := []string{"\x00", "a", "a\x00", "a\x00\x00", "item_1", "item_1-0", "123456789012345", "1234567890123456",
		"12345678901234\x00", "item_12345678901234567890", "item_12345678901234567891",
		// Codex's own: a bit each, and the ids that look like them but
		// are not.
		"item_0", "item_63", "item_64", "item_4194303", "item_4194304", "item_01", "item_", "item_1a", "item_-1", "ITEM_2",
		"item_9999999", "item_10000000"}
	for _, id := range ids {
		require.True(t, s.add([]byte(id)), "%q", id)
	}
	for _, id := range ids {
		require.False(t, s.add([]byte(id)), "%q", id)
	}
}

// FuzzIDSet holds an idSet to a map of strings over any sequence of ids
// (separated by newlines), Codex's own numbered ones among them.
func FuzzIDSet(f *testing.F) {
	f.Add("item_0\nitem_1\nitem_0\nitem_01\nitem_4194303\nitem_4194304\nx\nx")
	f.Add("item_63\nitem_64\nitem_\n\nitem_1-0\n123456789012345\n1234567890123456")
	f.Fuzz(func(t *testing.T, ids string) {
		var s idSet
		want := map[string]bool{}
		for _, id := range strings.Split(ids, "\n") {
			require.Equal(t, !want[id], s.add([]byte(id)), "%q", id)
			want[id] = true
		}
	})
}

// TestRetryWarning: Codex's "Reconnecting... N/M (CAUSE)" notices (the
// texts of 0.171.0 against a real Responses API stand-in) as retries.
func TestRetryWarning(t *testing.T) {
	tests := []struct {
		rest string // after "Reconnecting..."
		want event.Retry
	}{
		{" 1/1 (exceeded retry limit, last status: 429 Too Many Requests, request id: req_1)",
			event.Retry{Attempt: 1, Max: 1, Status: 429, Kind: failure.RateLimited}},
		{" 2/5 (unexpected status 401 Unauthorized: Incorrect API key provided., url: http://127.0.0.1:9/v1/responses)",
			event.Retry{Attempt: 2, Max: 5, Status: 401, Kind: failure.Auth}},
		{" 1/1 (stream disconnected before completion: Transport error: network error: error decoding response body)",
			event.Retry{Attempt: 1, Max: 1, Kind: failure.Network}},
		{" 3/5 (Selected model is at capacity. Please try a different model.)",
			event.Retry{Attempt: 3, Max: 5, Kind: failure.RateLimited}},
		{" x/y (status 9999)", event.Retry{Kind: failure.Network}},
		{"", event.Retry{Kind: failure.Network}},
	}
	for _, tt := range tests {
		e := retryWarning(strings.TrimSpace(tt.rest))
		require.NotNil(t, e.Warning)
		assert.Equal(t, event.WarnRetry, e.Warning.Code)
		assert.Equal(t, tt.want, *e.Warning.Retry, "%q", tt.rest)
	}
}
