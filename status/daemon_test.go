package status_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillsync/skillsync/curator"
	"github.com/skillsync/skillsync/internal/skilltest"
)

// TestBuildShowsTheDaemonsFailedJobs: a running daemon whose usage
// import fails at every run, whose curation fails, or that runs a config
// it read before because the one on disk no longer loads, needs a person:
// status says each (attention, and so exit status 1). Before, it said
// nothing of them, while the daemon's import and a cron curate failed
// every run. A daemon that stopped says nothing: what it last found may
// be mended since.
func TestBuildShowsTheDaemonsFailedJobs(t *testing.T) {
	t.Parallel()
	in := syncsInput(t)
	skilltest.WriteFile(t, in.DaemonFile, `{"pid": 1, "started_at": "2026-03-01T00:00:00Z", "sources": {},
 "last_import_error": "import usage from claude: the hooks' journal is gone",
 "last_curate_error": "the curator's archive is a symbolic link",
 "reload_error": "/ws/skillsync.yaml:2: did not find expected node content"}`)
	if attention := strings.Join(build(t, in).Attention, "\n"); strings.Contains(attention, "the daemon") {
		t.Errorf("a daemon that stopped is said to fail:\n%s", attention)
	}
	holdDaemon(t, in)
	attention := strings.Join(build(t, in).Attention, "\n")
	for _, want := range []string{
		"the daemon's last usage import failed: import usage from claude: the hooks' journal is gone",
		"the daemon's last curation failed: the curator's archive is a symbolic link",
		"the config no longer loads, so the daemon runs the one it read before",
		"/ws/skillsync.yaml:2: did not find expected node content",
	} {
		if !strings.Contains(attention, want) {
			t.Errorf("attention lacks %q:\n%s", want, attention)
		}
	}
	// A curation that failed for its import is the import's failure, said once.
	skilltest.WriteFile(t, in.DaemonFile, `{"pid": 1, "started_at": "2026-03-01T00:00:00Z", "sources": {},
 "last_import_error": "the journal is gone",
 "last_curate_error": "curation waits for the agents' records, whose import failed: the journal is gone"}`)
	if attention := strings.Join(build(t, in).Attention, "\n"); strings.Count(attention, "the journal is gone") != 1 {
		t.Errorf("the import's failure is not said once:\n%s", attention)
	}
}

// TestBuildNamesALinkedLayer: a workspace whose skills/ is a symbolic
// link syncs, but every write refuses the link (use, the agents' hooks,
// import, curation): status names the folder and the fix. Before, it
// said nothing while each of those failed.
func TestBuildNamesALinkedLayer(t *testing.T) {
	t.Parallel()
	in := syncsInput(t)
	real := filepath.Join(t.TempDir(), "skills")
	if err := os.Rename(filepath.Join(in.Root, "skills"), real); err != nil {
		t.Fatal(err)
	}
	layer := filepath.Join(in.Root, "skills")
	if err := os.Symlink(real, layer); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	attention := strings.Join(build(t, in).Attention, "\n")
	for _, want := range []string{"the layer folder " + layer + " is a symbolic link to " + real, "make " + layer + " a real folder", "set workspace: " + filepath.Dir(real)} {
		if !strings.Contains(attention, want) {
			t.Errorf("attention lacks %q:\n%s", want, attention)
		}
	}
}

// TestBuildWithoutADaemonSaysAnImportStops: with no daemon to say how
// its imports fare, status reads what stops an import before it reads
// anything (the same checks): the hooks' journal removed while the usage
// file names a call a hook recorded, and the import state's marks lost
// while it names an import. A cron job's import and curate fail on each,
// and status said nothing of it.
func TestBuildWithoutADaemonSaysAnImportStops(t *testing.T) {
	t.Parallel()
	in := syncsInput(t)
	skills := filepath.Join(in.Root, "skills")
	imports := map[string]string{"codex": "3-abc", "hook": "claude toolu_1"}
	in.Usage = func() (*curator.Usage, error) { return &curator.Usage{Imports: imports}, nil }
	attention := strings.Join(build(t, in).Attention, "\n")
	for _, want := range []string{
		"the usage import stops, and skillsync curate with it, which imports first: import usage from codex: the usage file holds an import of its records, but " + filepath.Join(skills, ".imported.json"),
		"import usage from claude: the usage file names a call a hook recorded, but " + filepath.Join(skills, ".hooked.jsonl"),
	} {
		if !strings.Contains(attention, want) {
			t.Errorf("attention lacks %q:\n%s", want, attention)
		}
	}
	// With the journal and the marks there, nothing stops.
	skilltest.WriteFile(t, filepath.Join(skills, ".hooked.jsonl"), "")
	skilltest.WriteFile(t, filepath.Join(skills, ".imported.json"), `{"version": 1, "agents": {"codex": {}}, "last": {"codex": "3-abc"}}`)
	if attention := strings.Join(build(t, in).Attention, "\n"); strings.Contains(attention, "import") {
		t.Errorf("attention with the journal and the marks there:\n%s", attention)
	}
	// Marks older than the import the usage file names: brought back alone.
	skilltest.WriteFile(t, filepath.Join(skills, ".imported.json"), `{"version": 1, "agents": {"codex": {}}, "last": {"codex": "2-old"}}`)
	if attention := strings.Join(build(t, in).Attention, "\n"); !strings.Contains(attention, "import usage from codex: the usage file holds an import of its records (3-abc) later than the last") {
		t.Errorf("attention with marks older than the usage file:\n%s", attention)
	}
	// A running daemon says how its own imports fare.
	skilltest.WriteFile(t, filepath.Join(skills, ".imported.json"), `{"version": 1}`)
	holdDaemon(t, in)
	if attention := strings.Join(build(t, in).Attention, "\n"); strings.Contains(attention, "the usage import stops") {
		t.Errorf("attention with a daemon holding the workspace:\n%s", attention)
	}
}
