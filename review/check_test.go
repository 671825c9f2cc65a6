package review

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckVerdict(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // the JSON; "" for an input failure
	}{
		{name: "the verdict inside prose", text: "Here it is:\n```json\n" + validObject + "\n```", want: validObject},
		{name: "no findings is an empty list", text: `{"verdict":"approve","summary":"Fine.","findings":[]}`,
			want: `{"verdict":"approve","summary":"Fine.","findings":[]}`},
		{name: "no verdict", text: "looks good to me"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CheckVerdict(tt.text)
			if tt.want == "" {
				_, perr := ParseVerdict(tt.text)
				require.Error(t, err)
				assert.Equal(t, perr, err, "ParseVerdict's own error")
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}
