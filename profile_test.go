package skillsync

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillsync/skillsync/config"
)

// TestProfileColdSync syncs the corpus named by $SKILLSYNC_PROFILE_CORPUS
// (a repository bench/corpus made) into an empty workspace, then moves it
// to tag v2, so go test -cpuprofile can show where a sync spends its time.
// Without the variable it is skipped.
func TestProfileColdSync(t *testing.T) {
	corpus := os.Getenv("SKILLSYNC_PROFILE_CORPUS")
	if corpus == "" {
		t.Skip("set SKILLSYNC_PROFILE_CORPUS to a bench corpus to profile a sync")
	}
	ws := t.TempDir()
	write := func(ref string) *Engine {
		cfg := "repositories:\n  - name: corpus\n    git: file://" + corpus + "\n    ref: " + ref + "\n"
		if err := os.WriteFile(filepath.Join(ws, config.FileName), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return reload(t, filepath.Join(ws, config.FileName))
	}
	for _, ref := range []string{"v1", "v2"} {
		r, err := write(ref).Sync(context.Background(), SyncOptions{})
		if err != nil || r.Failed() > 0 {
			t.Fatalf("sync %s: %v %+v", ref, err, r.Sources)
		}
		t.Logf("%s: %+v", ref, r.Files)
	}
}
