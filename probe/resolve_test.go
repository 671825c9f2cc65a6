package probe

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cursorkit/cursorkit/failure"
)

func catalogOf(ids ...string) []Model {
	models := make([]Model, len(ids))
	for i, id := range ids {
		models[i] = Model{ID: id, Label: id}
	}
	return models
}

// resolved is ResolveModel's answer as one value, for tables.
type resolved struct {
	ID            string
	EffortApplied bool
}

func resolve(catalog []Model, model, effort string) (resolved, error) {
	id, applied, err := ResolveModel(catalog, model, effort)
	return resolved{id, applied}, err
}

func TestResolveModel(t *testing.T) {
	catalog := catalogOf("auto", "composer-2.5", "composer-2.5-fast", "muse-spark-1.3-low", "muse-spark-1.3-high",
		"muse-spark-1.3-extra-high", "grok-4.7-high", "grok-4.7-high-fast", "grok-4.7-low-fast", "gpt-5", "gpt-5-high",
		"Sonnet-4.5", "opus-4.1-xhigh")
	tests := []struct {
		name, model, effort string
		want                resolved
	}{
		{"bracket passes through", "claude-opus-4-8[context=1m,effort=high]", "low", resolved{ID: "claude-opus-4-8[context=1m,effort=high]"}},
		{"bracket not in catalog passes through", "x[y]", "", resolved{ID: "x[y]"}},
		{"exact id, no effort", "composer-2.5", "", resolved{ID: "composer-2.5"}},
		{"exact id, effort default", "gpt-5", "default", resolved{ID: "gpt-5"}},
		{"exact id, case-insensitive, catalog spelling", "sonnet-4.5", "", resolved{ID: "Sonnet-4.5"}},
		{"trimmed", "  gpt-5 ", "", resolved{ID: "gpt-5"}},
		{"model-effort", "muse-spark-1.3", "high", resolved{ID: "muse-spark-1.3-high", EffortApplied: true}},
		{"effort case-insensitive", "muse-spark-1.3", "HIGH", resolved{ID: "muse-spark-1.3-high", EffortApplied: true}},
		{"xhigh as extra-high", "muse-spark-1.3", "xhigh", resolved{ID: "muse-spark-1.3-extra-high", EffortApplied: true}},
		{"extra-high as xhigh", "opus-4.1", "extra-high", resolved{ID: "opus-4.1-xhigh", EffortApplied: true}},
		{"fast model: base-effort-fast", "grok-4.7-fast", "low", resolved{ID: "grok-4.7-low-fast", EffortApplied: true}},
		{"fast model: high", "grok-4.7-fast", "high", resolved{ID: "grok-4.7-high-fast", EffortApplied: true}},
		{"exact id that already encodes the effort", "muse-spark-1.3-high", "high", resolved{ID: "muse-spark-1.3-high", EffortApplied: true}},
		{"exact fast id that already encodes the effort", "grok-4.7-high-fast", "high", resolved{ID: "grok-4.7-high-fast", EffortApplied: true}},
		{"exact id with an effort variant", "gpt-5", "high", resolved{ID: "gpt-5-high", EffortApplied: true}},
		{"no effort variants: exact, not applied", "composer-2.5", "high", resolved{ID: "composer-2.5"}},
		{"fast model without effort variants", "composer-2.5-fast", "xhigh", resolved{ID: "composer-2.5-fast"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolve(catalog, tt.model, tt.effort)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestResolveModelRefusals(t *testing.T) {
	catalog := catalogOf("auto", "composer-2.5", "muse-spark-1.3-low", "muse-spark-1.3-high", "gpt-5", "gpt-5-high")
	tests := []struct {
		name, model, effort string
		mentions            []string
	}{
		{"auto", "auto", "", []string{"auto"}},
		{"Auto with effort", "Auto", "high", []string{"Auto"}},
		{"default", "default", "", []string{"default"}},
		{"empty", " ", "", []string{"no model"}},
		{"unknown family", "nope", "", []string{"nope", "available models: auto, composer-2.5"}},
		{"family without that effort", "muse-spark-1.3", "medium", []string{"medium", "available variants: muse-spark-1.3-low, muse-spark-1.3-high"}},
		{"family without exact id and no effort", "muse-spark-1.3", "", []string{"available variants: muse-spark-1.3-low"}},
		{"exact id with variants but not this effort", "gpt-5", "low", []string{"gpt-5-high"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ResolveModel(catalog, tt.model, tt.effort)
			require.Error(t, err)
			assert.Equal(t, failure.Input, failure.KindOf(err))
			for _, m := range tt.mentions {
				assert.Contains(t, err.Error(), m)
			}
		})
	}
}

func TestResolveModelEmptyCatalogAndBoundedList(t *testing.T) {
	_, _, err := ResolveModel(nil, "gpt-5", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "catalog is empty")

	var ids []string
	for i := range 40 {
		ids = append(ids, "m"+strings.Repeat("x", i))
	}
	_, _, err = ResolveModel(catalogOf(ids...), "zzz", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "and 28 more")
}

func FuzzResolveModel(f *testing.F) {
	f.Add("gpt-5", "high", "gpt-5,gpt-5-high,composer-2.5-fast")
	f.Add("grok-4.7-fast", "xhigh", "grok-4.7-extra-high-fast,auto")
	f.Add("x[y]", "", "")
	f.Fuzz(func(t *testing.T, model, effort, ids string) {
		catalog := catalogOf(strings.Split(ids, ",")...)
		got, err := resolve(catalog, model, effort)
		if err != nil {
			if failure.KindOf(err) != failure.Input {
				t.Fatalf("error of kind %s", failure.KindOf(err))
			}
			return
		}
		if strings.Contains(model, "[") {
			if got.ID != strings.TrimSpace(model) || got.EffortApplied {
				t.Fatalf("passthrough changed %q into %+v", model, got)
			}
			return
		}
		found := false
		for _, m := range catalog {
			found = found || m.ID == got.ID
		}
		if !found {
			t.Fatalf("resolved %q/%q to %q, not a catalog id", model, effort, got.ID)
		}
		if lower := strings.ToLower(got.ID); lower == "auto" || lower == "default" {
			t.Fatalf("resolved to refused id %q", got.ID)
		}
	})
}
