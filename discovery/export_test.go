package discovery

// Names the tests use that the package does not export.
const (
	OutcomeChosen   = outcomeChosen
	OutcomeFallback = outcomeFallback
	OutcomeSkipped  = outcomeSkipped
	OutcomeNoMatch  = outcomeNoMatch
	OutcomeRefused  = outcomeRefused
	OutcomeIgnored  = outcomeIgnored
	OutcomeNotFound = outcomeNotFound
	OutcomeOmitted  = outcomeOmitted

	WhereFound       = whereFound
	WhereNotFound    = whereNotFound
	WhereError       = whereError
	WhereSilent      = whereSilent
	WhereUnavailable = whereUnavailable
	WhereTimedOut    = whereTimedOut
	WhereSkipped     = whereSkipped
	WhereTimeout     = whereTimeout
)

var ParseWhere = parseWhere

var Classify = classify
