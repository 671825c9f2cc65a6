package turn

// KindOfStatus and MaxStderrLine are kindOfStatus and maxStderrLine, for
// the tests of the turn_test package.
var KindOfStatus = kindOfStatus

const MaxStderrLine = maxStderrLine
