package skillsync

import (
	"reflect"
	"testing"

	"github.com/skillsync/skillsync/config"
	"github.com/skillsync/skillsync/curator"
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
