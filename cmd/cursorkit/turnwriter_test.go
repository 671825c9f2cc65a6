package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cursorkit/cursorkit/event"
)

// TestAWarningAfterTheTurnWriterClosedIsDropped: a warning that races the
// end of the turn (a heartbeat's, a bridge refusal's) is not rendered and
// does not panic on the closed writer.
func TestAWarningAfterTheTurnWriterClosedIsDropped(t *testing.T) {
	var out, errOut bytes.Buffer
	_, stop := context.WithCancelCause(context.Background())
	w := newTurnWriter(true, &out, &errOut, stop)
	w.warning(event.Warning{Code: "before", Message: "rendered"})
	w.close()
	assert.NotPanics(t, func() { w.warning(event.Warning{Code: "after", Message: "dropped"}) })
	assert.Contains(t, out.String(), `"code":"before"`)
	assert.NotContains(t, out.String(), `"code":"after"`)
}
