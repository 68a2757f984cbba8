package curator

import (
	"strings"
	"testing"

	"github.com/skillsync/skillsync/layering"
)

// FuzzUsageDecode: whatever a usage file holds, every copy it decodes to
// names one safe path component, so no name read from it can leave the
// directory it is joined to; and decode, through its fast path, gives
// what encoding/json alone gives (sameDecode).
func FuzzUsageDecode(f *testing.F) {
	for _, tc := range usageCorpus(f) {
		f.Add([]byte(tc.data))
	}
	f.Add([]byte(`{"version":2,"skills":{"marketplace:team/pdf":{"use_count":1,"state":"stale","last_source":"mcp"}}}`))
	f.Add([]byte(v1File))
	f.Add([]byte(`{"version":2,"skills":{"workspace/../x":{}}}`))
	f.Add([]byte(`{"version":1,"skills":{"..":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewStore("skills") // decode reads no file; the path is for messages
		s.Resolve = func(name string) (Copy, bool) { return Copy{Layer: layering.Workspace, Name: name}, true }
		sameDecode(t, data)
		u, err := s.decode(data)
		if err != nil {
			return
		}
		for c := range u.Skills {
			if err := c.Validate(); err != nil {
				t.Fatalf("decoded an invalid copy %q: %v", c, err)
			}
			if c.Name == "." || c.Name == ".." || strings.ContainsAny(c.Name, "/\\\x00") || strings.ContainsAny(c.Owner, "/\\\x00") {
				t.Fatalf("decoded a name that leaves its directory: %q", c)
			}
		}
	})
}
