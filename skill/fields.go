package skill

// field is a frontmatter key skillsync interprets.
type field int

const (
	fieldName field = iota + 1
	fieldDescription
	fieldLicense
	fieldCompatibility
	fieldVersion
	fieldAuthor
	fieldMetadata
	fieldAllowedTools
	fieldTriggers
	fieldTags
)

// canonical is the spelling each field has in the Agent Skills
// specification, or in skillsync's own extensions.
var canonical = map[field]string{
	fieldName:          "name",
	fieldDescription:   "description",
	fieldLicense:       "license",
	fieldCompatibility: "compatibility",
	fieldVersion:       "version",
	fieldAuthor:        "author",
	fieldMetadata:      "metadata",
	fieldAllowedTools:  "allowed-tools",
	fieldTriggers:      "triggers",
	fieldTags:          "tags",
}

// specKeys are the fields of the Agent Skills specification
// (https://agentskills.io/specification). The other canonical fields
// (version, author, triggers, tags) are skillsync's extensions: read
// without a word, reported in strict mode like every field outside the
// specification.
var specKeys = map[string]bool{
	"name":          true,
	"description":   true,
	"license":       true,
	"compatibility": true,
	"metadata":      true,
	"allowed-tools": true,
}

// keys maps every accepted spelling, aliases included, to its field.
// Real repositories use the aliases, so they are read, with a warning that
// names the spelling the specification wants. A key that some client
// defines for itself is never an alias here, even where it means nearly
// the same (Claude Code's when_to_use beside description): it keeps its
// own meaning in Skill.Extra (see clientKeys).
var keys = map[string]field{
	"name":             fieldName,
	"skill":            fieldName,
	"description":      fieldDescription,
	"summary":          fieldDescription,
	"license":          fieldLicense,
	"compatibility":    fieldCompatibility,
	"version":          fieldVersion,
	"author":           fieldAuthor,
	"metadata":         fieldMetadata,
	"allowed-tools":    fieldAllowedTools,
	"allowed_tools":    fieldAllowedTools,
	"tools":            fieldAllowedTools,
	"triggers":         fieldTriggers,
	"trigger_patterns": fieldTriggers,
	"trigger":          fieldTriggers,
	"activation":       fieldTriggers,
	"tags":             fieldTags,
	"tag":              fieldTags,
}

// clientKeys are the frontmatter keys that agents define for themselves
// beyond the specification, each with the client that defines it. They are
// kept in Skill.Extra as written, for the agents downstream; they raise no
// problem, except in strict mode, which reports every field outside the
// specification.
//
// Codex adds no key of its own: it reads name, description and
// metadata.short-description from SKILL.md and the rest (interface,
// dependencies) from agents/openai.yaml beside it
// (https://developers.openai.com/codex/skills). OpenCode reads only the
// specification's fields and ignores any other
// (https://opencode.ai/docs/skills). Both are served by the specification's
// fields alone.
var clientKeys = map[string]string{
	// Claude Code's frontmatter reference,
	// https://code.claude.com/docs/en/skills#frontmatter-reference
	"when_to_use":              "Claude Code", // more text on when to use it, listed after description
	"argument-hint":            "Claude Code", // hint shown after /name, e.g. [issue-number]
	"arguments":                "Claude Code", // named arguments for $name substitution
	"disable-model-invocation": "Claude Code", // true: only the user invokes it
	"user-invocable":           "Claude Code", // false: hidden from the / menu
	"disallowed-tools":         "Claude Code", // tools denied while the skill runs
	"model":                    "Claude Code", // model to run the skill with
	"effort":                   "Claude Code", // low, medium, high, max
	"context":                  "Claude Code", // fork: run in a subagent
	"agent":                    "Claude Code", // the subagent type for context: fork
	"hooks":                    "Claude Code", // hooks scoped to the skill
	"paths":                    "Claude Code", // globs that activate the skill
	"shell":                    "Claude Code", // bash or powershell for !`command`
}
