package shim

import "strings"

// Names the tests use that the package does not export.
var (
	DescribeChar           = describeChar
	ShellQuote             = shellQuote
	BatchCommandLine       = batchCommandLine
	NewRefusal             = newRefusal
	ValidateBatchArgs      = validateBatchArgs
	QuoteBatchArg          = quoteBatchArg
	ValidatePowerShellArgs = validatePowerShellArgs
	ComposeCommandLine     = composeCommandLine
)

// EscapeArg is appendEscapeArg for one argument.
func EscapeArg(s string) string {
	var b strings.Builder
	appendEscapeArg(&b, s)
	return b.String()
}

const (
	MaxCommandLine      = maxCommandLine
	MaxBatchCommandLine = maxBatchCommandLine
)
