package failure

// Warning is what a layer had to give up on without failing the work: a
// stable code (no_job_object, late_close, ...) and a bounded message for
// people. It is passed up typed, never as a "code: message" string that a
// caller would have to split.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// String is the warning as one line, "code: message".
func (w Warning) String() string { return w.Code + ": " + w.Message }
