// Package workspace names the files and folders of a skillsync workspace.
// It is the one place those names are spelled: every other package asks a
// Layout for a path instead of joining names of its own, so the on-disk
// layout can be read here whole.
//
//	<root>/
//	  skillsync.yaml            the config
//	  skillsync.lock            pinned revisions
//	  skills/                   workspace layer
//	    .usage.json             usage and curation state
//	    .imported.json          how far each agent's records were imported
//	    .hooked.jsonl           tool calls hooks recorded, not yet imported
//	    .daemon.json            what a running daemon knows, for status
//	    .daemon.lock            held by a running daemon
//	    .fleet-sync.json        the last sync's result, for the fleet heartbeat
//	    .fleet-pushed.json      the usage the fleet store acknowledged
//	    .audit/YYYY-MM-DD.jsonl audit log
//	    .archive/<name>-<stamp>/ archived local skills
//	    _drafts/<name>/         proposed skills; .rejected/, .published/
//	                            and .locks/ beside them
//	  <user>/skills/            user layer
//	  .skills-cache/            the cache (its inside belongs to materialize)
package workspace

import "path/filepath"

// The names of a workspace's files and folders.
const (
	ConfigName      = "skillsync.yaml"
	LockName        = "skillsync.lock"
	SkillsName      = "skills"
	CacheName       = ".skills-cache"
	UsageName       = ".usage.json"
	ImportedName    = ".imported.json"
	HookedName      = ".hooked.jsonl"
	AuditName       = ".audit"
	ArchiveName     = ".archive"
	DraftsName      = "_drafts"
	RejectedName    = ".rejected"
	PublishedName   = ".published"
	DraftLocksName  = ".locks"
	DaemonName      = ".daemon.json"
	DaemonLockName  = ".daemon.lock"
	FleetSyncName   = ".fleet-sync.json"
	FleetPushedName = ".fleet-pushed.json"
)

// Layout is a workspace on disk: its root directory and, when the user
// layer is on, the user's name.
type Layout struct {
	Root string
	User string
}

// New returns the layout of the workspace at root with user's layer ("" for
// none).
func New(root, user string) Layout { return Layout{Root: root, User: user} }

// ConfigFile is the default config file of the workspace.
func (l Layout) ConfigFile() string { return filepath.Join(l.Root, ConfigName) }

// LockFile is skillsync.lock.
func (l Layout) LockFile() string { return filepath.Join(l.Root, LockName) }

// CacheDir is the materialization cache.
func (l Layout) CacheDir() string { return filepath.Join(l.Root, CacheName) }

// SkillsDir is the workspace layer's directory. It also holds the usage
// file, the audit log, the archive and the drafts.
func (l Layout) SkillsDir() string { return filepath.Join(l.Root, SkillsName) }

// UserSkillsDir is the user layer's directory, "" when there is no user
// layer.
func (l Layout) UserSkillsDir() string {
	if l.User == "" {
		return ""
	}
	return filepath.Join(l.Root, l.User, SkillsName)
}

// UsageFile is the usage and curation state.
func (l Layout) UsageFile() string { return filepath.Join(l.SkillsDir(), UsageName) }

// ImportedFile records, per agent and per transcript, how far usage
// import read, so importing twice counts nothing twice.
func (l Layout) ImportedFile() string { return filepath.Join(l.SkillsDir(), ImportedName) }

// HookedFile is the journal of the tool calls agents' hooks recorded, so
// an import of the same calls does not count them again.
func (l Layout) HookedFile() string { return filepath.Join(l.SkillsDir(), HookedName) }

// DaemonFile is where a running daemon writes its state for status.
func (l Layout) DaemonFile() string { return filepath.Join(l.SkillsDir(), DaemonName) }

// DaemonLockFile is the lock a running daemon holds.
func (l Layout) DaemonLockFile() string { return filepath.Join(l.SkillsDir(), DaemonLockName) }

// AuditDir holds the audit log, one file a day.
func (l Layout) AuditDir() string { return filepath.Join(l.SkillsDir(), AuditName) }

// DraftsDir holds proposed skills waiting for the promotion gate.
func (l Layout) DraftsDir() string { return filepath.Join(l.SkillsDir(), DraftsName) }

// RejectedDir holds the drafts the gate turned down.
func (l Layout) RejectedDir() string { return filepath.Join(l.DraftsDir(), RejectedName) }

// PublishedDir holds the drafts published to a git source: the skill now
// lives in the remote, on a review branch or the tracked one.
func (l Layout) PublishedDir() string { return filepath.Join(l.DraftsDir(), PublishedName) }

// DraftLocksDir holds one lock file per draft name, so a promotion, a
// rejection and a proposal of one name never overlap.
func (l Layout) DraftLocksDir() string { return filepath.Join(l.DraftsDir(), DraftLocksName) }

// ArchiveDir is where a layer directory's archived skills go: always
// directly in the layer directory, whatever the depth of the skill.
func ArchiveDir(layerDir string) string { return filepath.Join(layerDir, ArchiveName) }

// FleetSyncFile is where a sync leaves its result for the next fleet push.
func (l Layout) FleetSyncFile() string { return filepath.Join(l.SkillsDir(), FleetSyncName) }

// FleetPushedFile records the usage the fleet store acknowledged, so a
// push sends only what changed since.
func (l Layout) FleetPushedFile() string { return filepath.Join(l.SkillsDir(), FleetPushedName) }
