package shim

// Names the tests use that the package does not export.
var (
	DescribeChar           = describeChar
	ShellQuote             = shellQuote
	BatchCommandLine       = batchCommandLine
	NewRefusal             = newRefusal
	ValidateBatchArgs      = validateBatchArgs
	QuoteBatchArg          = quoteBatchArg
	ValidatePowerShellArgs = validatePowerShellArgs
	EscapeArg              = escapeArg
	ComposeCommandLine     = composeCommandLine
)

const (
	MaxCommandLine      = maxCommandLine
	MaxBatchCommandLine = maxBatchCommandLine
)
