package turn

import "github.com/cursorkit/cursorkit/failure"

// KindOfStatus and MaxStderrLine are kindOfStatus and maxStderrLine, for
// the tests of the turn_test package.
var KindOfStatus = kindOfStatus

const MaxStderrLine = maxStderrLine

// Unfinished is unfinished, and Verdict its verdict.
type Unfinished = unfinished

func (u unfinished) Verdict() *failure.Error { return u.verdict() }
