package agentsim_test

import (
	"bytes"
	"encoding/json/jsontext"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/internal/agentsim"
)

// TestReviewScenarios: each review scenario's turn reads a file, says its
// text once and returns it as the result, exactly.
func TestReviewScenarios(t *testing.T) {
	tests := []struct {
		scenario string
		want     string
		hasJSON  bool
	}{
		{agentsim.ScenarioReviewJSON, agentsim.ReviewVerdictJSON, true},
		{agentsim.ScenarioReviewProseJSON, agentsim.ReviewProseJSONText, true},
		{agentsim.ScenarioReviewInvalidJSON, agentsim.ReviewInvalidJSONText, true},
		{agentsim.ScenarioReviewNoJSON, agentsim.ReviewNoJSONText, false},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := map[string]string{agentsim.EnvScenario: tt.scenario}
			code := agentsim.Main(printArgs, strings.NewReader("review this diff"), &stdout, &stderr,
				func(k string) string { return env[k] })
			require.Equal(t, 0, code, stderr.String())
			events, nonJSON := decodeLines(t, stdout.String())
			require.Empty(t, nonJSON)
			require.GreaterOrEqual(t, len(events), 5)
			assert.Equal(t, "system", events[0].Type)
			last := events[len(events)-1]
			assert.Equal(t, "result", last.Type)
			assert.Equal(t, tt.want, last.Result)
			var texts, types []string
			for _, e := range events {
				types = append(types, e.Type)
				if e.Type == "assistant" {
					texts = append(texts, e.text())
				}
			}
			assert.Equal(t, []string{tt.want}, texts, "the text is said once")
			assert.Contains(t, types, "tool_call")
			assert.Equal(t, tt.hasJSON, strings.Contains(last.Result, `"verdict"`), "holds a JSON object")
		})
	}
}

// TestReviewVerdictJSON is one valid JSON object with two findings.
func TestReviewVerdictJSON(t *testing.T) {
	for _, s := range []string{agentsim.ReviewVerdictJSON, agentsim.ReviewApproveJSON} {
		require.True(t, jsontext.Value(s).IsValid(), s)
	}
	assert.Equal(t, 2, strings.Count(agentsim.ReviewVerdictJSON, `"severity"`))
	assert.Contains(t, agentsim.ReviewVerdictJSON, `"verdict":"request_changes"`)
	assert.Contains(t, agentsim.ReviewProseJSONText, "```json\n"+agentsim.ReviewApproveJSON+"\n```")
}
