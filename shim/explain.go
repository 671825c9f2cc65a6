package shim

import (
	"errors"

	"github.com/cursorkit/cursorkit/discovery"
	"github.com/cursorkit/cursorkit/failure"
)

// Explanation is what `cursorkit shim explain` reports: the resolution, and
// either the plan that would run or why Build refused, plus every warning
// of both.
type Explanation struct {
	Resolution discovery.Resolution `json:"resolution"`
	Command    *Command             `json:"plan,omitempty"`
	Refusal    *Refusal             `json:"refusal,omitempty"`
	Warnings   []string             `json:"warnings"`
}

// Refusal is a Build error made presentable. Index and Char are set when
// one argument was refused (Char names it as U+0026 '&'); the message
// never holds an argument's value.
type Refusal struct {
	Kind    failure.Kind `json:"kind"`
	Message string       `json:"message"`
	Index   *int         `json:"index,omitempty"`
	Char    string       `json:"char,omitempty"`
}

// Explain builds the plan for res and args and reports it, or the refusal.
// Warnings are the resolution's, then the plan's; never nil.
func Explain(res discovery.Resolution, args []string, opts Options) Explanation {
	ex := Explanation{Resolution: res, Warnings: append([]string{}, res.Warnings...)}
	plan, err := Build(res, args, opts)
	if err != nil {
		ex.Refusal = newRefusal(err)
		return ex
	}
	ex.Command = &plan
	ex.Warnings = append(ex.Warnings, plan.Warnings...)
	return ex
}

// newRefusal describes a Build error: its failure kind, its message, and
// the argument index and character when an *ArgError caused it.
func newRefusal(err error) *Refusal {
	r := &Refusal{Kind: failure.KindOf(err), Message: err.Error()}
	var ae *ArgError
	if errors.As(err, &ae) {
		index := ae.Index
		r.Index = &index
		if ae.Char != NoChar {
			r.Char = describeChar(ae.Char)
		}
	}
	var te *TargetError
	if errors.As(err, &te) && te.Char != NoChar {
		r.Char = describeChar(te.Char)
	}
	return r
}
