package config

// Starter is the commented config skillsync init writes. Every
// setting it shows is real; the commented ones are examples to enable.
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

# Marketplace sources, lowest priority first: a later one wins on a name.
repositories:
  - name: builtin
    embedded: builtin     # the skills compiled into skillsync
  # - name: team
  #   dir: ../team-skills # a local directory of skills
`
