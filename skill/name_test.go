package skill

import (
	"strings"
	"testing"
)

// TestNameWarningsSuggestAValidName: the name a warning suggests breaks
// none of the rules itself ("Bad Name" is not fixed by "bad name").
func TestNameWarningsSuggestAValidName(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, want string }{
		{"Bad Name", `use "bad-name"`},
		{"Bad Name", `such as "bad-name"`},
		{"PDF", `use "pdf"`},
		{"my_pdf", `such as "my-pdf"`},
	} {
		var msgs []string
		for _, p := range nameWarnings(tt.name, "") {
			msgs = append(msgs, p.Message)
		}
		if all := strings.Join(msgs, "\n"); !strings.Contains(all, tt.want) {
			t.Errorf("warnings of %q:\n%s\nwant %s", tt.name, all, tt.want)
		}
	}
}
