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

// keys maps every accepted spelling, aliases included, to its field.
// Real repositories use the aliases, so they are read, with a warning that
// names the spelling the specification wants.
var keys = map[string]field{
	"name":             fieldName,
	"skill":            fieldName,
	"description":      fieldDescription,
	"when_to_use":      fieldDescription,
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

// agentKeys are keys that agents define for themselves. They are kept in
// Skill.Extra without a warning: they are not errors of the skill's author.
var agentKeys = map[string]bool{
	"disable-model-invocation": true,
	"user-invocable":           true,
	"argument-hint":            true,
	"model":                    true,
	"context":                  true,
	"agent":                    true,
	"hooks":                    true,
}
