package agentsim

// Review replies (docs/contract.md, "Review"): the scenarios whose turn
// answers a review prompt. The texts are exported so command tests can
// compare what they parsed.

// ReviewVerdictJSON is the verdict object the review-json scenario replies
// with, exactly: request_changes with two findings. Its strings hold
// braces and a quote, so an extractor that counts braces naively fails.
const ReviewVerdictJSON = `{"verdict":"request_changes","summary":"The new handler leaks a file descriptor and logs the {token} value.",` +
	`"findings":[` +
	`{"severity":"high","file":"server/handler.go","line":42,"title":"File is never closed","body":"os.Open at line 42 has no matching Close; use defer f.Close() after the error check."},` +
	`{"severity":"medium","file":"server/log.go","line":0,"title":"Secret in logs","body":"The log line prints the \"{token}\" field; redact it."}` +
	`]}`

// Result texts of the other review scenarios.
const (
	// ReviewProseJSONText is prose, a ```json fence holding ReviewApproveJSON
	// (indented, as models print it), then prose with braces of its own.
	ReviewProseJSONText = "I read the diff and the files it touches {handler.go, log.go}.\n\n" +
		"```json\n" + ReviewApproveJSON + "\n```\n\n" +
		"Let me know if you want a closer look at {anything} else."
	// ReviewApproveJSON is the verdict inside ReviewProseJSONText.
	ReviewApproveJSON = "{\n  \"verdict\": \"approve\",\n  \"summary\": \"Small, well-tested change.\",\n" +
		"  \"findings\": [\n    {\n      \"severity\": \"info\",\n      \"file\": \"README.md\",\n      \"line\": 3,\n" +
		"      \"title\": \"Typo\",\n      \"body\": \"'recieve' should be 'receive'.\"\n    }\n  ]\n}"
	// ReviewInvalidJSONText holds an object that parses but is no verdict:
	// verdict "maybe".
	ReviewInvalidJSONText = "Here is my review:\n{\"verdict\":\"maybe\",\"summary\":\"Not sure.\",\"findings\":[]}\n"
	// ReviewNoJSONText is prose only.
	ReviewNoJSONText = "The change looks fine to me overall. I would approve it, but please add a test for the error path."
)

// reviewText returns the result text of the selected review scenario;
// false when none is selected.
func (s *sim) reviewText() (string, bool) {
	switch {
	case s.has(ScenarioReviewJSON):
		return ReviewVerdictJSON, true
	case s.has(ScenarioReviewProseJSON):
		return ReviewProseJSONText, true
	case s.has(ScenarioReviewInvalidJSON):
		return ReviewInvalidJSONText, true
	case s.has(ScenarioReviewNoJSON):
		return ReviewNoJSONText, true
	}
	return "", false
}

// review ends a turn as a reviewer does: it reads a file, says text (one
// assistant event) and returns the same text as the result.
func (t *turn) review(text string) int {
	t.toolCall("toolu_review_read", "mc_review", "readToolCall", obj{{"path", "README.md"}},
		obj{{"success", obj{{"content", "# Demo\nhello\n"}, {"isEmpty", false}, {"exceededLimit", false}, {"totalLines", 2}}}})
	t.assistant(text, "mc_review")
	t.result(false, text, true)
	if t.w.err != nil {
		return 1
	}
	return 0
}
