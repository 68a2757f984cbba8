package daemon

import (
	"path/filepath"

	"github.com/skillsync/skillsync/agent"
	"github.com/skillsync/skillsync/curator"
)

// CurateResultOf is a curation's plan as the daemon counts it.
func CurateResultOf(plan curator.Plan) *CurateResult {
	res := &CurateResult{Checked: plan.Checked, Skipped: plan.Skipped, ArchiveHeld: plan.ArchiveHeld, Changes: map[string]int{}}
	for _, c := range plan.Changes {
		res.Changes[string(c.To)]++
	}
	return res
}

// ImportResultsOf are the agents' import reports as the daemon logs them.
func ImportResultsOf(reports []*agent.Report) []ImportResult {
	out := make([]ImportResult, 0, len(reports))
	for _, r := range reports {
		out = append(out, ImportResult{Agent: r.Agent, Files: r.Files, Uses: r.Uses, Views: r.Views, Unknown: r.Unknown,
			Malformed: r.Malformed, TooLong: r.TooLong, Reactivated: len(r.Reactivated), Unreadable: r.Unreadable,
			MalformedAt: r.MalformedAt})
	}
	return out
}

// TargetName names a target's folder dir for the metrics: relative to
// the workspace root when inside it.
func TargetName(root, dir string) string {
	if rel, err := filepath.Rel(root, dir); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return dir
}
