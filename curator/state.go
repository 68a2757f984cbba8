package curator

import "fmt"

// State is the curator's word on a copy.
type State string

// The states a copy can be in.
const (
	// Active copies are in the catalog, the cache and the targets.
	Active State = "active"
	// Stale copies stay everywhere, marked, until they are used again or
	// archived.
	Stale State = "stale"
	// Archived copies are out of the catalog; a local one was moved to its
	// layer's .archive/, a marketplace one left the cache and the targets.
	Archived State = "archived"
)

// UnmarshalText accepts the three states only; an empty state reads as
// active, as files written before states existed have none.
func (s *State) UnmarshalText(b []byte) error {
	switch v := State(b); v {
	case Active, Stale, Archived:
		*s = v
	case "":
		*s = Active
	default:
		return fmt.Errorf("unknown curation state %q", b)
	}
	return nil
}

// Source says where a recorded use came from, so curation can show why a
// copy is or is not idle.
type Source string

// Where uses come from.
const (
	// FromCLI is skillsync use.
	FromCLI Source = "cli"
	// FromMCP is the MCP server's load_skill and read_skill_file.
	FromMCP Source = "mcp"
	// FromHook is an agent's hook running skillsync use --hook.
	FromHook Source = "hook"
	// FromImport is skillsync usage import reading an agent's transcripts.
	FromImport Source = "import"
	// FromSlash is a skill a user started by typing /name, read from an
	// agent's transcripts.
	FromSlash Source = "slash"
)

func (s Source) valid() bool {
	switch s {
	case FromCLI, FromMCP, FromHook, FromImport, FromSlash:
		return true
	}
	return false
}

// UnmarshalText accepts the five sources and the empty one (no use yet).
func (s *Source) UnmarshalText(b []byte) error {
	if v := Source(b); v != "" && !v.valid() {
		return fmt.Errorf("unknown usage source %q", b)
	}
	*s = Source(b)
	return nil
}

// Op is what an audit event did.
type Op = string

// The curator's audit ops. Sync writes its own (added, updated, removed).
const (
	OpStale       Op = "stale"
	OpArchived    Op = "archived"
	OpReactivated Op = "reactivated"
	OpRestored    Op = "restored"
	OpPinned      Op = "pinned"
	OpUnpinned    Op = "unpinned"
)
