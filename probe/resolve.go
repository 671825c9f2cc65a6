package probe

import (
	"fmt"
	"strings"

	"github.com/cursorkit/cursorkit/failure"
	"github.com/cursorkit/cursorkit/internal/detail"
)

// knownEfforts are the effort words Cursor encodes in flattened catalog ids
// (muse-spark-1.3-xhigh, grok-4.7-high-fast); they tell an effort variant
// from a speed or feature variant such as composer-2.5-fast.
var knownEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "extra-high", "max"}

// maxListedVariants bounds the ids an error lists.
const maxListedVariants = 12

// ResolveModel resolves a model request against the catalog
// (docs/contract.md, "Models"):
//   - a value containing "[" (a parameterised id) passes through unchanged;
//   - "auto" and "default" are refused: Auto routes to a model no event
//     reports;
//   - with no effort (or effort "default"), an exact catalog id (compared
//     case-insensitively, returned as the catalog spells it) is used as is;
//   - with an effort, an exact id that already encodes it is used as is;
//     otherwise <model>-<effort> (xhigh also tried as extra-high and back)
//     and, for a model ending in -fast, <base>-<effort>-fast; a model
//     whose id exists but that has no effort variants resolves to its exact
//     id with EffortApplied false.
//
// It returns the value to pass to --model, and whether the requested
// effort is encoded in it (false when no effort was requested, when the
// value passed through unchanged, and when the model has no effort
// variants). Anything else is a failure.Input error that lists the
// available variants (bounded).
func ResolveModel(catalog []Model, model, effort string) (id string, effortApplied bool, err error) {
	model = strings.TrimSpace(model)
	if model == "" {
		return "", false, failure.New(failure.Input, "no model given")
	}
	if strings.Contains(model, "[") {
		return model, false, nil
	}
	lower := strings.ToLower(model)
	if lower == "auto" || lower == "default" {
		return "", false, failure.New(failure.Input,
			"model %q is refused: name a catalog model (auto routes to a model no event reports)", detail.Bound(model))
	}
	ids := make(map[string]string, len(catalog))
	for _, m := range catalog {
		key := strings.ToLower(strings.TrimSpace(m.ID))
		if _, dup := ids[key]; !dup && key != "" {
			ids[key] = m.ID
		}
	}
	exact, hasExact := ids[lower]
	effort = strings.ToLower(strings.TrimSpace(effort))
	if effort == "" || effort == "default" {
		if hasExact {
			return exact, false, nil
		}
		return "", false, noMatch(catalog, lower, model, "")
	}

	base, fast := strings.CutSuffix(lower, "-fast")
	efforts := effortSpellings(effort)
	if hasExact {
		for _, e := range efforts {
			if strings.HasSuffix(lower, "-"+e) || (fast && strings.HasSuffix(base, "-"+e)) {
				return exact, true, nil
			}
		}
	}
	for _, e := range efforts {
		if id, ok := ids[lower+"-"+e]; ok {
			return id, true, nil
		}
		if fast {
			if id, ok := ids[base+"-"+e+"-fast"]; ok {
				return id, true, nil
			}
		}
	}
	if hasExact && !hasEffortVariants(ids, lower, effort) {
		return exact, false, nil
	}
	return "", false, noMatch(catalog, lower, model, effort)
}

// effortSpellings returns effort and its alternative spelling, if any.
func effortSpellings(effort string) []string {
	switch effort {
	case "xhigh":
		return []string{"xhigh", "extra-high"}
	case "extra-high":
		return []string{"extra-high", "xhigh"}
	}
	return []string{effort}
}

// hasEffortVariants reports whether the catalog holds any effort variant
// of model: <model>-<effort>, <model>-<effort>-fast, or for a -fast model
// <base>-<effort>-fast, for a known effort word or the requested one.
func hasEffortVariants(ids map[string]string, model, requested string) bool {
	base, fast := strings.CutSuffix(model, "-fast")
	for _, e := range append(effortSpellings(requested), knownEfforts...) {
		if _, ok := ids[model+"-"+e]; ok {
			return true
		}
		if _, ok := ids[model+"-"+e+"-fast"]; ok {
			return true
		}
		if _, ok := ids[base+"-"+e+"-fast"]; ok && fast {
			return true
		}
	}
	return false
}

// noMatch builds the input error for a request nothing matched, listing the
// model's family (ids equal to it or extending it with "-"), or the start of
// the catalog when the family is empty.
func noMatch(catalog []Model, lower, model, effort string) error {
	base, _ := strings.CutSuffix(lower, "-fast")
	var family, all []string
	for _, m := range catalog {
		id := strings.ToLower(m.ID)
		all = append(all, m.ID)
		if id == lower || id == base || strings.HasPrefix(id, base+"-") {
			family = append(family, m.ID)
		}
	}
	what := fmt.Sprintf("model %q", detail.Bound(model))
	if effort != "" {
		what = fmt.Sprintf("model %q with effort %q", detail.Bound(model), detail.Bound(effort))
	}
	switch {
	case len(catalog) == 0:
		return failure.New(failure.Input, "%s is not in the model catalog: the catalog is empty", what)
	case len(family) > 0:
		return failure.New(failure.Input, "%s is not in the model catalog", what).
			WithDetail("available variants: " + listBounded(family))
	}
	return failure.New(failure.Input, "%s is not in the model catalog", what).
		WithDetail("available models: " + listBounded(all))
}

func listBounded(ids []string) string {
	if len(ids) <= maxListedVariants {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:maxListedVariants], ", ") + fmt.Sprintf(", … and %d more", len(ids)-maxListedVariants)
}
