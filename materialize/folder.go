package materialize

import (
	"fmt"
	"slices"

	"github.com/skillsync/skillsync/skill"
)

// Where a skill goes in a target. Agents find a skill by its folder, and
// the Agent Skills specification wants the folder to be the skill's name:
// at most 64 characters, lower case, letters, digits and single hyphens.
// A name that breaks those rules (a space, a capital, an underscore) is
// still a safe path component, and the cache keeps it as it is (the cache
// is skillsync's own, keyed by the real name like the manifest and the
// lock), but a target gets the name an agent can load: skill.FolderName.

// folderPlan settles the folders of one target. Every folder is compared
// with case folded (skill.FoldName) on every system: a target may sit on
// a case-insensitive file system (the macOS and Windows defaults, a
// mounted FAT disk) whatever the system skillsync runs on, and there
// "pdf" and "PDF" are one folder.
type folderPlan struct {
	taken map[string]string // folded folder -> skill name that has it
}

func newFolderPlan() *folderPlan { return &folderPlan{taken: map[string]string{}} }

// reserve gives folder to name, as a kept entry has it.
func (p *folderPlan) reserve(name, folder string) { p.taken[skill.FoldName(folder)] = name }

// take returns a free folder for name: want itself when no other skill
// has it (in any case), else want_2, want_3, ... (the rule that makes
// two sources of one name unique), and the name of the skill that had
// want, if any.
func (p *folderPlan) take(name, want string) (folder, other string) {
	other = p.taken[skill.FoldName(want)]
	folder = want
	for k := 2; ; k++ {
		if _, used := p.taken[skill.FoldName(folder)]; !used {
			break
		}
		folder = fmt.Sprintf("%s_%d", want, k)
	}
	p.taken[skill.FoldName(folder)] = name
	return folder, other
}

// planFolders returns the folder of each skill of t (by name) whose name
// is one safe path component, and why a skill's folder is not its name.
// Entries t.Keep holds keep the folders rec gave them; then the skills
// whose names are folder names as they are (AgentFolderName) take them,
// in order; then the others take their FolderName. A folder already
// taken, in any case, gets the _2 rule.
func planFolders(t Target, rec *TargetRecord) (folders, why map[string]string) {
	p := newFolderPlan()
	folders, why = map[string]string{}, map[string]string{}
	for _, name := range t.Keep {
		if e, ok := rec.Skills[name]; ok {
			p.reserve(name, e.folder(name))
		}
	}
	for _, pass := range []bool{true, false} {
		for _, s := range t.Skills {
			if _, done := folders[s.Name]; done || checkName("skill", s.Name) != nil || skill.AgentFolderName(s.Name) != pass {
				continue
			}
			if _, kept := rec.Skills[s.Name]; kept && slices.Contains(t.Keep, s.Name) {
				continue
			}
			want := skill.FolderName(s.Name)
			folder, other := p.take(s.Name, want)
			folders[s.Name] = folder
			switch {
			case folder != want && other != "":
				why[s.Name] = fmt.Sprintf("%q is taken by skill %q (folders compare without case)", want, other)
			case folder != s.Name:
				why[s.Name] = "its name is not a valid folder name for agents (lower case, letters, digits and single hyphens, at most 64 characters)"
			}
		}
	}
	return folders, why
}
