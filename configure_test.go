package skillsync

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/skilltest"
	"github.com/skillsync/skillsync/materialize"
)

// The config's defaults and names are its own; they must say what the
// domain's say.
func TestConfigTypesMatchTheDomain(t *testing.T) {
	t.Parallel()
	if got, want := curatorPolicy(config.DefaultCuration()), curator.DefaultPolicy(); !reflect.DeepEqual(got, want) {
		t.Errorf("config.DefaultCuration = %+v, curator.DefaultPolicy = %+v", got, want)
	}
	for _, m := range []config.TargetMode{config.ModeCopy, config.ModeSymlink} {
		if got := targetMode(m); string(got) != string(m) {
			t.Errorf("targetMode(%q) = %q", m, got)
		}
	}
	if targetMode(config.ModeSymlink) != materialize.Symlink || targetMode(config.ModeCopy) != materialize.Copy {
		t.Error("the target modes do not map onto materialize's")
	}
}

// TestConfigEmbeddedNamesOfKinds: the kinds the root wires lend builtin
// and the names a program passes, which it lends WithEmbedded; a config
// naming any other embedded: set does not load.
func TestConfigEmbeddedNamesOfKinds(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		set   string
		names []string
		ok    bool
	}{
		{"builtin", nil, true},
		{"mine", []string{"mine"}, true},
		{"builtin", []string{"mine"}, true},
		{"mine", nil, false},
		{"buitlin", nil, false},
	} {
		path := filepath.Join(t.TempDir(), config.FileName)
		skilltest.WriteFile(t, path, "repositories:\n  - embedded: "+tt.set+"\n")
		_, err := config.Load(path, Kinds(tt.names...))
		if (err == nil) != tt.ok || (err != nil && !strings.Contains(err.Error(), path+":2: repositories[0]: embedded: ")) {
			t.Errorf("embedded: %s with Kinds(%q): %v", tt.set, tt.names, err)
		}
	}
}
