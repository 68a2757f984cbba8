package config

import "strings"

// Starter is the commented config skillsync init writes. Every
// setting it shows is real; the commented ones are examples to enable.
// targets: stands above repositories:, so the file ends with its
// repositories and an entry appended at the end lands there.
const Starter = `# skillsync.yaml: where this workspace's skills come from.
# Paths are relative to this file. See skillsync --help.

# The workspace holds skills/ (workspace layer) and .skills-cache/.
workspace: .

# user: alice            # adds the user layer: <workspace>/alice/skills/
# global: ~/.config/skillsync/skills   # the global layer (this is the default)

# Turn Agent Skills warnings into errors: a skill with a warning is skipped.
strict: false

# Names kept out of list, search and prompt (list --all still shows them).
hidden: []

# Where skillsync add owner/repo looks ($SKILLSYNC_GIT_HOST overrides it).
# default_git_host: https://github.com/

# Folders agents read skills from; sync copies every winning skill there.
# skillsync init --agent claude-code adds .claude/skills; skillsync agents
# lists every agent and its folders.
targets: []

# Marketplace sources, lowest priority first: a later one wins on a name.
# skillsync add owner/repo appends one here; skillsync remove NAME drops it.
# The skills built into skillsync (skillsync, writing-skills) are off here;
# uncomment the next line to take them, below every other source.
repositories:
  # - embedded: builtin
  # - name: team
  #   git: https://github.com/acme/skills   # or git@github.com:acme/skills.git
  #   ref: v1.2.0                           # a branch, tag or commit
  #   skills: [pdf, release-notes]          # only these (globs work); exclude: [x]
  # - name: local
  #   dir: ../team-skills # a local directory of skills
`

// NoTargetComment marks the targets: [] of a workspace that asked for no
// target (init --agent none): a comment, since the choice is the user's
// to undo by adding a target, and a config key would make older
// skillsync refuse the file.
const NoTargetComment = "none, on purpose (skillsync init --agent none)"

// MarkNoTarget marks the starter's "targets: []" of text with
// NoTargetComment; text without that line comes back as it is.
func MarkNoTarget(text string) string {
	return strings.Replace(text, "\ntargets: []\n", "\ntargets: []   # "+NoTargetComment+"\n", 1)
}
